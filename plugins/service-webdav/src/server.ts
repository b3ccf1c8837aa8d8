import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import {
  LoginRefusedError,
  type FileSession,
  type Logger,
  type ServiceCertificate,
  type PluginDatabase,
  type AccountChange,
  type ServiceDef,
  type ServiceHost,
  type ServiceStatus,
} from '@ferry/core';
import type { WebdavConfig } from './config.js';
import { applyCors } from './cors.js';
import { DavHandlers, sendError, statusOf } from './dav.js';
import { LockStore } from './locks.js';
import { LoginCache } from './login-cache.js';
import { Paths, PathError } from './paths.js';
import { PropStore } from './props.js';
import { DavShares } from './shares.js';

const PROTOCOL = 'DAV' as const;
const REALM = 'Basic realm="Ferry WebDAV", charset="UTF-8"';

export interface WebdavServiceOptions {
  config: WebdavConfig;
  logger: Logger;
  /** The core's services, resolved on first use. */
  host: () => ServiceHost;
  /** The core database with the plugin's tables (locks, dead properties). */
  db: PluginDatabase;
}

const plainIp = (ip: string | undefined) => (ip ?? '').replace(/^::ffff:/, '');
/** Whether a (plain) address is a loopback one: 127.0.0.0/8 or ::1. */
const isLoopback = (ip: string) => ip === '::1' || /^127\./.test(ip);

/** The file session of one TCP connection: listed as one connection while the client keeps it open. */
interface SocketState {
  /** The login cache key the session was opened for. */
  key: string;
  username: string;
  session: Promise<FileSession>;
  /** Unix ms after which the next request logs in and opens the session again. */
  expires: number;
  gone: AbortController;
}

/** The credentials of a Basic Authorization header, or null. */
function basicCredentials(header: string | undefined, anyUser = false): { username: string; password: string } | null {
  const m = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0 || (i === 0 && !anyUser)) return null;
  return { username: decoded.slice(0, i), password: decoded.slice(i + 1) };
}

/** WebDAV on node:http: Basic logins through the login service, one file session per TCP connection. */
export function webdavService(o: WebdavServiceOptions): ServiceDef {
  const { config, logger } = o;
  const paths = new Paths(config.prefix);
  const handlers = new DavHandlers({ config, paths, locks: new LockStore(o.db), props: new PropStore(o.db) });
  const shares = config.public_shares.enabled ? new DavShares(config.public_shares, handlers, o.host, PROTOCOL) : null;
  const cache = new LoginCache(config.login_cache_ttl, 10_000, () => o.host().changes.trusted);
  const states = new WeakMap<net.Socket, SocketState>();
  const sockets = new Set<net.Socket>();
  let servers: http.Server[] = [];
  let certificates: ServiceCertificate[] = [];
  const tlsServers = new WeakSet<http.Server>();
  let active = false;
  let unsubscribe: (() => void) | null = null;

  /**
   * An account changed on any node of the cluster (the SDK's account
   * changes, heard from the other nodes through the core's change feed): its
   * cached logins go, and its open connections open their file session again
   * on their next request (so the account's status, allow list and denied
   * protocols are checked again). A change of a group, role, folder or IP
   * list may change any account, as may 'all' (changes may have been missed).
   */
  function onChange(c: AccountChange): void {
    if (c.type === 'user') cache.dropUser(c.name);
    else if (['group', 'role', 'folder', 'ip_list_entry', 'all'].includes(c.type)) cache.clear();
    else return;
    for (const socket of sockets) {
      const st = states.get(socket);
      if (st && (c.type !== 'user' || st.username === c.name)) st.expires = 0;
    }
  }

  function closeState(socket: net.Socket): void {
    const st = states.get(socket);
    if (!st) return;
    states.delete(socket);
    st.gone.abort();
    void st.session.then((s) => s.close()).catch(() => undefined);
  }

  /** Basic sends the password in clear: over plain HTTP only from this machine, unless the operator allows it (a 403 answered when not). */
  function basicAllowed(req: http.IncomingMessage, res: http.ServerResponse, ip: string): boolean {
    if ((req.socket as { encrypted?: boolean }).encrypted || config.allow_insecure_basic || isLoopback(ip)) return true;
    sendError(res, req.method === 'HEAD', 403, 'Basic credentials over plain HTTP are refused from a non-loopback address: use the HTTPS binding');
    return false;
  }

  /** Verifications of credentials in progress, by address and cache key (see authenticate). */
  const verifying = new Map<string, ReturnType<ReturnType<typeof o.host>['login']['authenticate']>>();

  /** The username of the request's credentials (a 401 answered and null when refused). */
  async function authenticate(req: http.IncomingMessage, res: http.ServerResponse, ip: string): Promise<{ username: string; key: string } | null> {
    const creds = basicCredentials(req.headers.authorization);
    if (!creds) {
      res.setHeader('WWW-Authenticate', REALM);
      sendError(res, req.method === 'HEAD', 401, 'authentication required');
      return null;
    }
    if (!basicAllowed(req, res, ip)) return null;
    const key = cache.keyOf(creds.username, creds.password);
    const cached = cache.get(key);
    if (cached) return { username: cached, key };
    // the same credentials from the same address already being verified (a client opening several
    // connections at once): that verification's success serves them all; a refusal is not shared
    // (each refused request is verified, logged and scored on its own)
    const flightKey = `${ip}\0${key}`;
    const flight = verifying.get(flightKey);
    if (flight) {
      const shared = await flight.catch(() => null);
      if (shared?.status === 'ok') return { username: shared.account.username, key };
    }
    const stamp = cache.stamp();
    try {
      const verification = o
        .host()
        .login.authenticate({ username: creds.username, credential: { method: 'password', password: creds.password }, ip, protocol: PROTOCOL });
      if (!flight) {
        verifying.set(flightKey, verification);
        verification.then(
          () => verifying.delete(flightKey),
          () => verifying.delete(flightKey),
        );
      }
      const result = await verification;
      if (result.status !== 'ok') {
        // a second factor cannot be asked over Basic authentication
        res.setHeader('WWW-Authenticate', REALM);
        sendError(res, req.method === 'HEAD', 401, 'this account needs a second factor, which WebDAV cannot ask for');
        return null;
      }
      cache.add(key, result.account.username, stamp);
      return { username: result.account.username, key };
    } catch (err) {
      if (!(err instanceof LoginRefusedError)) throw err;
      logger.info({ ip, username: creds.username, reason: err.reason }, 'webdav login refused');
      if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.retryAfterSeconds));
      const status = err.kind === 'too_many_requests' ? 429 : err.kind === 'forbidden' ? 403 : 401;
      if (status === 401) res.setHeader('WWW-Authenticate', REALM);
      sendError(res, req.method === 'HEAD', status, err.message);
      return null;
    }
  }

  /** The socket's file session for this login (opened again for another login or once expired). */
  function sessionFor(req: http.IncomingMessage, socket: net.Socket, login: { username: string; key: string }, ip: string): Promise<FileSession> {
    const st = states.get(socket);
    if (st && st.key === login.key && st.expires > Date.now()) return st.session;
    if (st) closeState(socket);
    const gone = new AbortController();
    const session = o.host().sessions.open({
      username: login.username,
      ip,
      protocol: PROTOCOL,
      sessionKey: randomUUID(),
      clientVersion: String(req.headers['user-agent'] ?? '').slice(0, 256),
      signal: gone.signal,
    });
    const state: SocketState = { key: login.key, username: login.username, session, expires: cache.expiry(login.key) || Date.now() + 1000, gone };
    states.set(socket, state);
    session.then(
      // closed by an administrator (DELETE /api/v2/connections/{id}, from any node): the client is cut
      (s) => s.signal.addEventListener('abort', () => states.get(socket) === state && socket.destroy(), { once: true }),
      () => states.get(socket) === state && states.delete(socket),
    );
    return session;
  }

  async function onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const head = req.method === 'HEAD';
    const socket = req.socket;
    const ip = plainIp(socket.remoteAddress);
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    try {
      if (applyCors(config.cors, req, res)) return;
      const shareTarget = shares?.target(req.url ?? '/') ?? null;
      if (shares && shareTarget !== null) {
        const credential = basicCredentials(req.headers.authorization, true);
        if (credential && !basicAllowed(req, res, ip)) return;
        return await shares.handle({ req, res, ip, credential, signal: gone.signal }, shareTarget);
      }
      const path = paths.toVirtual(req.url ?? '/');
      if (path === null) return sendError(res, head, 404, 'not a WebDAV path');
      const login = await authenticate(req, res, ip);
      if (!login) return;
      const files = await sessionFor(req, socket, login, ip);
      await handlers.handle({ req, res, files, username: login.username, path: files.path(path), signal: gone.signal });
    } catch (err) {
      // the client went away mid-request (an upload cut, a download left): nothing to answer
      if (gone.signal.aborted) return void res.destroy();
      const { status, message } = statusOf(err);
      if (status === 500) logger.error({ err, method: req.method, ip }, 'webdav request failed');
      else logger.debug({ method: req.method, ip, status, message }, 'webdav request refused');
      if (status === 499) return void res.destroy();
      const e = err as { condition?: string; href?: string };
      sendError(res, head, status, message, e.condition, e.href);
    }
  }

  return {
    name: 'webdavd',
    statusKey: 'webdav',
    async start() {
      try {
        for (const [i, b] of config.bindings.entries()) {
          const options = { requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 30_000 };
          const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void onRequest(req, res);
          let server: http.Server;
          let certificate: ServiceCertificate | undefined;
          if (b.tls) {
            certificate = await o.host().tls.certificate({
              key: `webdav.bindings.${i}`,
              certificate_file: b.certificate_file,
              certificate_key_file: b.certificate_key_file,
              min_tls_version: b.min_tls_version,
              tls_cipher_suites: b.tls_cipher_suites,
            });
            certificates.push(certificate);
            const secure = https.createServer({ ...options, ...certificate.serverOptions() }, handler);
            certificate.attach(secure);
            server = secure;
            tlsServers.add(server);
          } else server = http.createServer(options, handler);
          const connectionEvent = b.tls ? 'secureConnection' : 'connection';
          server.on(connectionEvent, (socket: net.Socket) => {
            sockets.add(socket);
            socket.on('close', () => (sockets.delete(socket), closeState(socket)));
            const ip = plainIp(socket.remoteAddress);
            o.host()
              .defender.isBanned(ip, PROTOCOL)
              .then((banned) => {
                if (banned) {
                  logger.info({ ip }, 'webdav connection from a banned host dropped');
                  socket.destroy();
                }
              })
              .catch(() => socket.destroy());
          });
          server.on('clientError', (err: Error, socket: net.Socket) => {
            if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
            else socket.destroy();
          });
          await new Promise<void>((resolve, reject) => {
            server.once('error', reject);
            server.listen(b.port, b.address, () => (server.off('error', reject), resolve()));
          });
          servers.push(server);
          certificate?.start();
        }
      } catch (err) {
        for (const s of servers) s.close();
        servers = [];
        for (const c of certificates) c.stop();
        certificates = [];
        throw err;
      }
      active = true;
      unsubscribe = o.host().changes.subscribe(onChange);
      logger.info({ bindings: servers.map((s) => s.address()), prefix: config.prefix }, 'webdav listening');
    },
    async stop({ signal }) {
      active = false;
      unsubscribe?.();
      unsubscribe = null;
      for (const c of certificates) c.stop();
      certificates = [];
      const closed = Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      for (const s of servers) s.closeIdleConnections();
      servers = [];
      const cut = () => sockets.forEach((s) => s.destroy());
      signal.addEventListener('abort', cut, { once: true });
      await Promise.race([closed, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
      signal.removeEventListener('abort', cut);
      cut();
      cache.clear();
    },
    status(): ServiceStatus {
      const bindings = servers.flatMap((s) => {
        const a = s.address();
        return typeof a === 'object' && a !== null ? [{ a, https: tlsServers.has(s) }] : [];
      });
      return {
        is_active: active,
        bindings: active
          ? bindings.map(({ a, https }) => ({
              address: a.address,
              port: a.port,
              enable_https: https,
              client_auth_type: 0,
              prefix: config.prefix,
              proxy_allowed: [],
            }))
          : null,
      };
    },
  };
}

export { PathError };
