import type http from 'node:http';
import type { CorsConfig } from './config.js';
import { ALLOWED_METHODS } from './dav.js';

/** The request headers a WebDAV client sends, allowed in preflights. */
export const CORS_ALLOWED_HEADERS = 'Authorization, Content-Type, Depth, Destination, Overwrite, If, Lock-Token, Timeout, If-Match, If-None-Match, Range';
/** The response headers a page may read. */
export const CORS_EXPOSED_HEADERS = 'DAV, ETag, Last-Modified, Lock-Token, Content-Range, Content-Length, Location, WWW-Authenticate';

/**
 * Adds the CORS headers a listed origin gets; answers a preflight (OPTIONS
 * with Access-Control-Request-Method) from such an origin with 204 and
 * returns true. An origin not listed gets no CORS header (the browser then
 * refuses the page the answer) and its requests are handled as any other.
 */
export function applyCors(cors: CorsConfig, req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const origin = req.headers.origin;
  if (!cors.allowed_origins.length) return false;
  res.setHeader('Vary', 'Origin');
  if (!origin || !cors.allowed_origins.includes(origin)) return false;
  res.setHeader('Access-Control-Allow-Origin', origin);
  if (cors.allow_credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
  if (req.method !== 'OPTIONS' || req.headers['access-control-request-method'] === undefined) {
    res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS);
    return false;
  }
  res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
  res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS);
  if (cors.max_age > 0) res.setHeader('Access-Control-Max-Age', String(cors.max_age));
  res.statusCode = 204;
  res.setHeader('Content-Length', '0');
  res.end();
  return true;
}
