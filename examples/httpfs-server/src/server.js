/**
 * httpfs reference server: the HTTP storage backend protocol
 * (`{prefix}/{operation}/{name}`) served from a local directory, with
 * node:http only. Import `startHttpFsServer` to embed it (tests do, on port
 * 0) or run `bin/httpfs-server.js`.
 *
 * Request handling order: prefix (404) → authentication (401) → route (404)
 * and method (405) → name checks (400/403) → handler.
 */
import http from 'node:http';
import https from 'node:https';
import { createAuthenticator } from './auth.js';
import { HttpError, sendError, toHttpError } from './errors.js';
import * as h from './handlers.js';
import { Confiner, decodePathParam, displayName, parseName } from './paths.js';

export { GO_MODE_DIR, GO_MODE_SYMLINK, CHECK_PARENT_DIR } from './handlers.js';

/**
 * @typedef {object} HttpFsServerOptions
 * @property {string} root directory served; everything stays under it
 * @property {number} [port] TCP port, 0 (default) picks a free one
 * @property {string} [address] listen address, default 127.0.0.1
 * @property {string} [prefix] API path prefix, default '/api/v1' ('' for none)
 * @property {string} [username] Basic auth user name
 * @property {string} [password] Basic auth password
 * @property {string} [apiKey] expected X-API-KEY header value
 * @property {boolean} [allowAnonymous] run without authentication (refused otherwise)
 * @property {{ key: string | Buffer, cert: string | Buffer }} [tls] serve HTTPS
 * @property {number} [maxFileSize] largest accepted upload in bytes (413 above), default unlimited
 * @property {(line: string) => void} [log] one line per request
 */

/** @type {Record<string, [string, (c: h.Ctx) => Promise<void>]>} */
const ROUTES = {
  stat: ['GET', h.stat],
  open: ['GET', h.open],
  create: ['POST', h.create],
  rename: ['PATCH', h.rename],
  remove: ['DELETE', h.remove],
  mkdir: ['POST', h.mkdir],
  chmod: ['PATCH', h.chmod],
  chtimes: ['PATCH', h.chtimes],
  truncate: ['PATCH', h.truncate],
  readdir: ['GET', h.readdir],
  dirsize: ['GET', h.dirsize],
  mimetype: ['GET', h.mimetype],
  statvfs: ['GET', h.statvfs],
};

/** @param {string | undefined} p */
function normalizePrefix(p) {
  const trimmed = (p ?? '/api/v1').replace(/\/+$/, '');
  if (trimmed !== '' && !trimmed.startsWith('/')) throw new Error('the prefix must start with /');
  return trimmed;
}

/**
 * Builds the request listener (no socket): useful to mount it elsewhere.
 * @param {HttpFsServerOptions} opts
 * @returns {Promise<(req: http.IncomingMessage, res: http.ServerResponse) => void>}
 */
export async function createHttpFsHandler(opts) {
  const confiner = await Confiner.create(opts.root);
  const auth = createAuthenticator(opts);
  const prefix = normalizePrefix(opts.prefix);
  const maxFileSize = opts.maxFileSize ?? -1;
  const log = opts.log;

  return (req, res) => {
    const started = Date.now();
    if (log) res.on('close', () => log(`${req.method} ${req.url} ${res.statusCode} ${Date.now() - started}ms`));
    dispatch(req, res).catch(() => res.destroy());
  };

  /**
   * @param {http.IncomingMessage} req
   * @param {http.ServerResponse} res
   */
  async function dispatch(req, res) {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    /** @type {string | undefined} */
    let name;
    try {
      if (!rawPath.startsWith(prefix + '/')) throw new HttpError(404, 'ENOROUTE', 'unknown route');
      if (!auth.check(req.headers)) {
        return sendError(res, new HttpError(401, 'EAUTH', 'authentication required'), {
          ...auth.challenge,
          ...closeIfUnread(req),
        });
      }
      const rest = rawPath.slice(prefix.length + 1);
      const slash = rest.indexOf('/');
      const op = slash < 0 ? rest : rest.slice(0, slash);
      const route = Object.hasOwn(ROUTES, op) ? ROUTES[op] : undefined;
      if (!route) throw new HttpError(404, 'ENOROUTE', 'unknown route');
      if (req.method !== route[0]) {
        return sendError(res, new HttpError(405, 'EMETHOD', `${op} expects ${route[0]}`), {
          allow: route[0],
          ...closeIfUnread(req),
        });
      }
      const segments = parseName(decodePathParam(slash < 0 ? '' : rest.slice(slash + 1)));
      name = displayName(segments);
      await route[1]({ req, res, segments, name, query, confiner, maxFileSize });
    } catch (err) {
      sendError(res, toHttpError(err, name), closeIfUnread(req));
    }
  }
}

/**
 * An error answered before the request body was read closes the connection,
 * so a refused multi-gigabyte upload is not read to the end just to be
 * discarded.
 * @param {http.IncomingMessage} req
 * @returns {Record<string, string>}
 */
function closeIfUnread(req) {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  return hasBody && !req.complete ? { connection: 'close' } : {};
}

/**
 * @typedef {object} RunningHttpFsServer
 * @property {http.Server} server
 * @property {number} port
 * @property {string} url endpoint to configure in a client (scheme, host, port and prefix)
 * @property {() => Promise<void>} close stops listening and drops open connections
 */

/**
 * Starts the server and resolves once it listens.
 * @param {HttpFsServerOptions} opts
 * @returns {Promise<RunningHttpFsServer>}
 */
export async function startHttpFsServer(opts) {
  const handler = await createHttpFsHandler(opts);
  // requestTimeout 0: an upload may legitimately last longer than Node's
  // 5-minute default; headers still have to arrive within headersTimeout.
  const serverOpts = { requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 5_000 };
  const server = opts.tls ? https.createServer({ ...serverOpts, key: opts.tls.key, cert: opts.tls.cert }, handler) : http.createServer(serverOpts, handler);
  const address = opts.address ?? '127.0.0.1';
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, address, () => {
      server.off('error', reject);
      resolve(undefined);
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  const host = address.includes(':') ? `[${address}]` : address;
  const url = `${opts.tls ? 'https' : 'http'}://${host}:${port}${normalizePrefix(opts.prefix)}`;
  return {
    server,
    port,
    url,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
