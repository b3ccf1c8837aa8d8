import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import type { DependencyContainer } from 'tsyringe';
import { clientIp } from './auth-strategies.js';
import { toBoom } from './errors.js';
import { TooManyRequestsError } from '../errors.js';
import type { RateLimitScope } from '../config/schema.js';
import { RateLimiterService } from '../security/rate-limiter.service.js';
import { TUS_PATH } from './tus/protocol.js';
import { ADMIN_WEB_SESSION_PATH, WEB_SESSION_PATH } from './web-session.js';

const TOKEN_PATHS = new Set(['/api/v2/token', '/api/v2/user/token']);
const SHARES_PREFIX = '/api/v2/shares/';

/** The rate limit scope of a request path (and method), or null for what is never limited (/healthz, anything outside /api). */
export function rateLimitScope(path: string, method = 'get'): RateLimitScope | null {
  if (path !== '/api' && !path.startsWith('/api/')) return null;
  // the web sessions' logins (POST) are token routes; their GET and DELETE are API requests
  if (TOKEN_PATHS.has(path) || ((path === WEB_SESSION_PATH || path === ADMIN_WEB_SESSION_PATH) && method === 'post')) return 'token';
  if (path === TUS_PATH || path.startsWith(`${TUS_PATH}/`)) return 'tus';
  if (path.startsWith(SHARES_PREFIX)) return 'shares';
  return 'api';
}

/** Whether the 429 of this request should score its host in the defender (see defender-hooks.ts). */
export function rateLimitScores(request: Request): boolean {
  const r = (request.app as { rateLimited?: { score: boolean } }).rateLimited;
  return r ? r.score : true;
}

/**
 * The rate limiters on an HTTP server (installed after the IP lists and the
 * defender's ban check, before authentication): a request over its scope's
 * per-host or global limit gets 429 with Retry-After before any credential is
 * hashed. Whether that 429 scores the host is the per-host limiter's
 * `add_to_defender` (a global refusal never does).
 */
export function registerRateLimits(server: Server, c: DependencyContainer): void {
  const limiter = c.resolve(RateLimiterService);
  if (!limiter.enabled) return;
  server.ext('onRequest', async (request: Request, h: ResponseToolkit) => {
    const scope = rateLimitScope(request.path, request.method);
    if (!scope) return h.continue;
    const refusal = await limiter.check(scope, clientIp(request), 'HTTP');
    if (!refusal) return h.continue;
    (request.app as { rateLimited?: { score: boolean } }).rateLimited = { score: refusal.score };
    const who = refusal.limiter === 'host' ? `from ${clientIp(request)}` : 'from all clients';
    throw toBoom(
      new TooManyRequestsError(`too many requests ${who} to the ${scope} routes: retry in ${refusal.retryAfterSeconds} s`, undefined, {
        retryAfterSeconds: refusal.retryAfterSeconds,
      }),
    );
  });
}
