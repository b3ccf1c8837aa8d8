/**
 * The OpenAPI 3.1 document of a running server, generated from its live
 * route table (server.table()): paths and methods, path/query parameters and
 * request bodies from the routes' joi validation, the authentication each
 * route accepts, the admin permission it needs (x-ferry-permission), its
 * error codes, the success responses a route declares
 * (options.plugins.ferry.responses) and the options schemas of the loaded
 * plugins (filesystem providers and event action types).
 */
import type Hapi from '@hapi/hapi';
import Joi from 'joi';
import { convert, isRequired, joiToJsonSchema, type JoiDescription, type JsonSchema } from './joi-schema.js';
import type { PluginRegistry } from '../../plugins/registry.js';
import type { FerryRouteOptions } from '../server.js';
import { routeSchema } from '../route-validation.js';

export interface OpenApiInfo {
  version: string;
  registry: PluginRegistry;
}

type Operation = Record<string, unknown>;

const SCHEMES: Record<string, string> = {
  'jwt-admin': 'BearerAuth',
  'jwt-user': 'BearerAuth',
  'apikey-admin': 'APIKeyAuth',
  'apikey-user': 'APIKeyAuth',
  'basic-admin': 'BasicAuth',
  'basic-user': 'BasicAuth',
  'web-user': 'WebSessionCookie',
  'web-admin': 'AdminWebSessionCookie',
};

/** hapi's `{name*}`, `{name*2}`, `{name?}` → OpenAPI's `{name}`. */
export function openApiPath(path: string): string {
  return path.replace(/\{(\w+)(\*\d*|\?)?\}/g, '{$1}');
}

function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)(?:\*\d*|\?)?\}/g)].map((m) => m[1]!);
}

const ERROR_TEXT: Record<number, string> = {
  400: 'invalid request (the message names the field)',
  401: 'missing or invalid credentials',
  403: 'authenticated but not permitted',
  404: 'not found',
  500: 'internal error',
  503: 'the database or a storage backend is unavailable (Retry-After)',
};

function objectKeys(schema: unknown): Record<string, JoiDescription> | undefined {
  if (!Joi.isSchema(schema)) return undefined;
  const d = (schema as Joi.Schema).describe() as JoiDescription;
  return d.type === 'object' ? (d.keys ?? {}) : undefined;
}

function strategiesOf(route: Hapi.RequestRoute): { strategies: string[]; mode: string } | null {
  const auth = route.settings.auth as { strategies?: string[]; mode?: string } | false | undefined;
  if (!auth || !auth.strategies?.length) return null;
  return { strategies: auth.strategies, mode: auth.mode ?? 'required' };
}

function operation(route: Hapi.RequestRoute): Operation {
  const settings = route.settings;
  const ferry = (settings.plugins as { ferry?: FerryRouteOptions } | undefined)?.ferry;
  const given = settings.validate as { params?: unknown; query?: unknown; payload?: unknown; headers?: unknown } | undefined;
  // the schemas, also where the server bound them (http/route-validation.ts)
  const validate = given && {
    params: routeSchema(given.params),
    query: routeSchema(given.query),
    payload: routeSchema(given.payload),
    headers: routeSchema(given.headers),
  };
  const op: Operation = {
    operationId: `${route.method}_${route.path}`.replace(/[^A-Za-z0-9]+/g, '_').replace(/_+$/, ''),
    tags: [
      route.path
        .replace(/^\/api\/v2/, '')
        .split('/')[1]
        ?.replace(/[{}?*]/g, '') || 'root',
    ],
  };
  if (typeof settings.description === 'string') op.summary = settings.description;
  if (typeof settings.notes === 'string') op.description = settings.notes;

  const parameters: Record<string, unknown>[] = [];
  const paramKeys = objectKeys(validate?.params) ?? {};
  for (const name of pathParams(route.path)) {
    const d = paramKeys[name];
    parameters.push({ name, in: 'path', required: true, schema: d ? convert(d) : { type: 'string' } });
  }
  const queryKeys = objectKeys(validate?.query);
  for (const [name, d] of Object.entries(queryKeys ?? {})) {
    if (d.flags?.presence === 'forbidden') continue;
    const p: Record<string, unknown> = { name, in: 'query', required: isRequired(d), schema: convert(d) };
    if (typeof d.flags?.description === 'string') p.description = d.flags.description;
    parameters.push(p);
  }
  if (parameters.length) op.parameters = parameters;

  const payload = settings.payload as { parse?: boolean | 'gunzip'; output?: string; allow?: string | string[] } | undefined;
  if (['post', 'put', 'patch', 'delete'].includes(route.method)) {
    if (Joi.isSchema(validate?.payload)) {
      op.requestBody = { required: true, content: { 'application/json': { schema: joiToJsonSchema(validate!.payload as Joi.Schema) } } };
    } else if (payload?.parse === false || payload?.output === 'stream') {
      const types = payload.allow ? (Array.isArray(payload.allow) ? payload.allow : [payload.allow]) : ['application/octet-stream', 'multipart/form-data'];
      op.requestBody = { content: Object.fromEntries(types.map((t) => [t, { schema: { type: 'string', format: 'binary' } }])) };
    }
  }

  const auth = strategiesOf(route);
  if (!auth) op.security = [];
  else {
    const schemes = [...new Set(auth.strategies.map((s) => SCHEMES[s] ?? s))];
    op.security = [...(auth.mode === 'optional' || auth.mode === 'try' ? [{}] : []), ...schemes.map((s) => ({ [s]: [] }))];
    const admin = auth.strategies.some((s) => s.endsWith('-admin'));
    if (admin) op['x-ferry-permission'] = ferry?.permission ?? '*';
  }

  const responses: Record<string, unknown> = {};
  const declared = ferry?.responses;
  if (declared && Object.keys(declared).length) {
    for (const [code, r] of Object.entries(declared)) {
      const content = r.schema ? { [r.type ?? 'application/json']: { schema: joiToJsonSchema(r.schema) } } : undefined;
      responses[code] = { description: r.description, ...(content ? { content } : {}) };
    }
  } else {
    responses['2XX'] = { description: 'success (the shape of this answer is not declared by the route)', content: { 'application/json': { schema: {} } } };
  }
  const errors = new Set<number>([500, 503]);
  if (validate?.params || validate?.query || validate?.payload || validate?.headers) errors.add(400);
  if (auth) {
    errors.add(401);
    errors.add(403);
  }
  if (pathParams(route.path).length) errors.add(404);
  for (const code of ferry?.errors ?? []) errors.add(code);
  for (const code of [...errors].sort()) {
    if (!responses[String(code)]) responses[String(code)] = { $ref: `#/components/responses/Error${code}` };
  }
  op.responses = responses;
  return op;
}

/** The document of `server` (every route of its table). */
export function openApiDocument(server: Hapi.Server, info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, Operation>> = {};
  const routes = [...server.table()].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  for (const route of routes) {
    const methods = route.method === '*' ? ['get', 'post', 'put', 'patch', 'delete'] : [route.method];
    const p = openApiPath(route.path);
    for (const m of methods) {
      (paths[p] ??= {})[m] = { ...operation(route), ...(route.method === '*' ? { operationId: `${m}_${operation(route).operationId as string}` } : {}) };
    }
  }

  const errorCodes = [400, 401, 403, 404, 409, 413, 415, 416, 429, 500, 503];
  const responses = Object.fromEntries(
    errorCodes.map((c) => [
      `Error${c}`,
      { description: ERROR_TEXT[c] ?? `error ${c}`, content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiError' } } } },
    ]),
  );

  const schemas: Record<string, JsonSchema> = {
    ApiError: {
      type: 'object',
      required: ['message', 'error'],
      properties: { message: { type: 'string', description: 'what went wrong' }, error: { type: 'string', description: 'the HTTP reason phrase' } },
    },
  };
  for (const def of info.registry.fsProviders()) {
    schemas[`FsProvider${def.provider}_${def.configKey}`] = {
      ...joiToJsonSchema(def.optionsSchema),
      title: `FilesystemConfig.${def.configKey}`,
      description: `Options of filesystem provider ${def.provider} (${def.key}), contributed by its plugin.`,
    };
  }
  for (const def of info.registry.actionTypes()) {
    if (!def.optionsSchema) continue;
    schemas[`EventAction${def.type}_${def.optionsKey ?? def.key}`] = {
      ...joiToJsonSchema(def.optionsSchema),
      title: `BaseEventAction.options.${def.optionsKey ?? def.key}`,
      description: `Options of event action type ${def.type} (${def.key}), contributed by its plugin.`,
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Ferry REST API',
      version: info.version,
      description: 'Generated by the server from its route table and the joi schemas that validate each route.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        APIKeyAuth: { type: 'apiKey', in: 'header', name: 'X-SERVICE-API-KEY' },
        BasicAuth: { type: 'http', scheme: 'basic' },
        // the browser session of POST /api/v2/user/web-session (an addition to v2.7): state-changing requests also carry X-CSRF-Token
        WebSessionCookie: { type: 'apiKey', in: 'cookie', name: 'ferry_web' },
        // the web admin's session of POST /api/v2/admin/web-session (an addition to v2.7), with the same CSRF rule
        AdminWebSessionCookie: { type: 'apiKey', in: 'cookie', name: 'ferry_admin' },
      },
      schemas,
      responses,
    },
  };
}
