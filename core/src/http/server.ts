import Hapi, { type Request, type ResponseToolkit, type ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import type Joi from 'joi';
import type { Server as TlsServer } from 'node:tls';
import type { DependencyContainer } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { FerryConfig, HttpBinding } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { registerAuth, clientIp } from './auth-strategies.js';
import { assertAdminPermission, type AdminPermission } from '../accounts/permissions.js';
import type { FerryCredentials } from '../auth/credentials.js';
import { errorBody, toBoom, validationFailAction } from './errors.js';
import { bindRouteValidation } from './route-validation.js';
import type { Actor } from '../events/provider-events.service.js';
import { IpListService } from '../security/ip-list.service.js';
import { registerDefenderHooks, type RefusalPage } from './defender-hooks.js';
import { registerRateLimits } from './rate-limit.js';
import type { EventBus } from '../events/event-bus.js';
import { CertificateReloader, tlsBindingFiles } from './tls.js';
import { registerInputCheck } from './input-check.js';
import { addRequestCheck } from './request-checks.js';
import { MetricsService } from '../ops/metrics.service.js';
import { ChangeFeed } from '../data/change-feed.js';
import { dropNullMembers, droppedMembers } from '../util/lenient.js';

/** Per-route options Ferry reads from `options.plugins.ferry`. */
export interface FerryRouteOptions {
  /** Admin permission(s) required ('any' for every authenticated admin). Default for admin routes: '*'. */
  permission?: AdminPermission | AdminPermission[] | 'any';
  /** Accept an admin token this node verified before when the database cannot be asked (GET /status). */
  whileDatabaseDown?: boolean;
  /** Success answers of the route for the OpenAPI document (http/openapi/): status → description, JSON schema (never checked at run time). */
  responses?: Record<number, { description: string; schema?: Joi.Schema; type?: string }>;
  /** Error statuses the route answers besides those the document derives (400 with validation, 401/403 with auth, 404 with path parameters, 500, 503). */
  errors?: number[];
  /** Open to an account that must set up two-factor authentication and has not yet (the TOTP setup and logout routes). */
  mfaSetup?: boolean;
}

declare module '@hapi/hapi' {
  interface PluginSpecificConfiguration {
    ferry?: FerryRouteOptions;
  }
}

export type RouteFactory = (c: DependencyContainer) => ServerRoute[];

/** The caller of a request as recorded in provider events. */
export function actorOf(request: Request): Actor {
  const c = request.auth.credentials as unknown as FerryCredentials | null;
  const ip = clientIp(request);
  if (!c) return { username: '', ip, role: '' };
  return c.kind === 'admin' ? { username: c.admin.username, ip, role: c.admin.role } : { username: c.user.username, ip, role: c.user.role };
}

const reloaders = new WeakMap<Hapi.Server, CertificateReloader>();

/** The certificate reloader of an HTTPS server (undefined for plain HTTP). */
export function certificateReloaderOf(server: Hapi.Server): CertificateReloader | undefined {
  return reloaders.get(server);
}

export interface HttpServerOptions {
  /** Directory relative TLS file paths are resolved against (the config file's; default: the working directory). */
  baseDir?: string;
  /** What a banned browser gets for a page of a plugin's static site (static-site.ts refusalPages), else the JSON 403. */
  refusalPage?: RefusalPage;
}

export async function createHttpServer(
  c: DependencyContainer,
  binding: HttpBinding,
  routes: RouteFactory[],
  opts: HttpServerOptions = {},
): Promise<Hapi.Server> {
  const config = c.resolve<FerryConfig>(TOKENS.Config);
  const logger = c.resolve<Logger>(TOKENS.Logger).child({ component: 'httpd' });
  const certificates = binding.enable_https
    ? await CertificateReloader.create({
        files: tlsBindingFiles(binding, config.httpd.bindings.indexOf(binding), config.httpd.ca_certificates, opts.baseDir ?? process.cwd()),
        bus: c.resolve<EventBus>(TOKENS.EventBus),
        logger,
        instanceId: c.resolve<string>(TOKENS.InstanceId),
      })
    : undefined;
  const server = Hapi.server({
    address: binding.address,
    port: binding.port,
    ...(certificates ? { tls: certificates.serverOptions() } : {}),
    app: { binding },
    router: { stripTrailingSlash: true },
    routes: {
      // no `options`: every route's schemas carry them (bindRouteValidation below), and Hapi would
      // merge a copy of them into a context object for each source of every request
      validate: { failAction: validationFailAction },
      payload: { maxBytes: config.httpd.max_request_size, failAction: 'error' },
      // ranges: false: hapi would otherwise parse the Range header of every GET answer with a length
      // (@hapi/ammo) and cut JSON answers to a 206 slice, or refuse a malformed header with 416; the file
      // routes parse Range themselves (range-header.ts), so a header the other routes do not use costs nothing
      response: { emptyStatusCode: 200, ranges: false },
      security: { noSniff: true, xframe: true, hsts: false, referrer: 'no-referrer' },
      // browsers send every cookie of the host: one of another application that is not a valid cookie
      // value (a space, JSON) is skipped, not a 400 for every request (Ferry's own cookies are base64url)
      state: { parse: true, failAction: 'ignore' },
    },
    load: { sampleInterval: 0 },
  });
  // Node's default 5-minute limit for receiving a whole request would cut long uploads; idle sockets still time out.
  server.listener.requestTimeout = 0;
  if (certificates) {
    // the certificate follows its files (and SIGHUP) while the server runs
    certificates.attach(server.listener as unknown as TlsServer);
    reloaders.set(server, certificates);
    server.ext('onPreStart', () => certificates.start());
    server.ext('onPostStop', () => certificates.stop());
  }

  // a binding with enable_rest_api off serves /healthz only
  if (!binding.enable_rest_api) {
    server.ext('onRequest', (request: Request, h: ResponseToolkit) => {
      if (request.path === '/api' || request.path.startsWith('/api/')) {
        throw Boom.notFound('the REST API is disabled on this binding (httpd.bindings[].enable_rest_api)');
      }
      return h.continue;
    });
  }

  // IP lists before anything else (authentication included): the allow list when
  // common.allow_list_status is on, and the defender list's deny entries
  const ipLists = c.resolve(IpListService);
  server.ext('onRequest', (request: Request, h: ResponseToolkit) => {
    const ip = clientIp(request);
    // answered from memory while the lists are fresh: no promise on every request
    const cached = ipLists.cachedConnectionRefusal(ip, 'HTTP');
    const refused = (refusal: string | null) => {
      if (refusal) throw Boom.forbidden(refusal);
      return h.continue;
    };
    return cached === undefined ? ipLists.connectionRefusal(ip, 'HTTP').then(refused) : refused(cached);
  });
  // then the defender's bans (and scoring of 429s), see http/defender-hooks.ts
  registerDefenderHooks(server, c, opts.refusalPage);
  // then the rate limits (429 before any password is hashed), see http/rate-limit.ts
  registerRateLimits(server, c);

  await registerAuth(server, c);
  // NUL and lone surrogates in params, query and payload: 400 before validation and handlers
  registerInputCheck(server);

  // Lenient input (util/lenient.ts): a null member is an absent one; members the route's schema
  // does not know are stripped by its validation (LENIENT_INPUT) and named in the debug log.
  const debug = () => logger.isLevelEnabled?.('debug') ?? false;
  addRequestCheck(server, 'onPostAuth', (request: Request) => {
    const p = request.payload;
    if (p !== null && typeof p === 'object' && !Buffer.isBuffer(p) && typeof (p as { pipe?: unknown }).pipe !== 'function') {
      dropNullMembers(p);
      if (debug()) (request.plugins as Record<string, unknown>).ferryRawPayload = structuredClone(p);
    }
  });
  addRequestCheck(server, 'onPreHandler', (request: Request) => {
    const raw = (request.plugins as Record<string, unknown>).ferryRawPayload;
    if (raw !== undefined) {
      const dropped = droppedMembers(raw, request.payload);
      if (dropped.length) logger.debug({ reqId: request.info.id, path: request.path, dropped }, 'unknown members dropped from the request body');
    }
  });

  addRequestCheck(server, 'onPostAuth', (request: Request) => {
    const creds = request.auth.credentials as unknown as FerryCredentials | null;
    // an account that must have 2FA and has none may only use the setup routes (auth/two-factor.service.ts)
    if (creds?.mfaSetupRequired && !request.route.settings.plugins?.ferry?.mfaSetup) throw Boom.forbidden(creds.mfaSetupRequired);
    if (creds?.kind === 'admin') {
      const perm = request.route.settings.plugins?.ferry?.permission ?? '*';
      if (perm !== 'any') {
        const perms = (Array.isArray(perm) ? perm : [perm]) as AdminPermission[];
        assertAdminPermission(creds.admin, ...perms);
      }
    }
  });

  // a request that changed accounts answers once the other nodes are told (docs/cluster.md, "Accounts held in memory")
  const changes = c.resolve(ChangeFeed);
  server.ext('onPreResponse', (_request: Request, h: ResponseToolkit) => {
    const told = changes.settled();
    return told ? told.then(() => h.continue) : h.continue;
  });
  server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
    const res = request.response;
    if (!Boom.isBoom(res) && !(res instanceof Error)) return h.continue;
    const b = toBoom(res);
    const status = b.output.statusCode;
    if (status >= 500) {
      logger.error({ reqId: request.info.id, method: request.method, path: request.path, err: b }, 'request failed');
    }
    const r = h.response(errorBody(b)).code(status).type('application/json');
    for (const [k, v] of Object.entries(b.output.headers)) {
      if (typeof v === 'string' || typeof v === 'number') r.header(k, String(v));
    }
    return r;
  });

  // Prometheus metrics (GET /metrics) when a binding serves them: requests by route template and status, durations
  const metrics = config.httpd.bindings.some((x) => x.enable_metrics) ? c.resolve(MetricsService) : undefined;
  server.events.on('response', (request: Request) => {
    const res = request.response as { statusCode?: number } | null;
    metrics?.observeHttp(request.method.toUpperCase(), request.route.path, res?.statusCode ?? 0, (Date.now() - request.info.received) / 1000);
    logger.info(
      {
        reqId: request.info.id,
        method: request.method,
        path: request.path,
        status: res?.statusCode,
        ms: Date.now() - request.info.received,
        ip: request.info.remoteAddress,
      },
      'request',
    );
  });

  for (const f of routes) server.route(bindRouteValidation(f(c)));
  return server;
}
