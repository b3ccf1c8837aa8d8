import Boom from '@hapi/boom';
import type { Request, ResponseObject, ResponseToolkit, Server } from '@hapi/hapi';
import type { DependencyContainer } from 'tsyringe';
import { clientIp } from './auth-strategies.js';
import { DefenderService } from '../security/defender.service.js';
import { rateLimitScores } from './rate-limit.js';

/** The answer of a refused request that is a browser's page request of a static site (http/static-site.ts refusalPages), or null. */
export type RefusalPage = (request: Request, h: ResponseToolkit) => Promise<ResponseObject | null>;

/** Token routes: a request without any credentials scores `score_no_auth`. */
const TOKEN_PATHS = new Set(['/api/v2/token', '/api/v2/user/token']);

/**
 * The defender on an HTTP server (installed right after the IP lists'
 * onRequest check): a banned host gets 403 before authentication (a
 * browser asking for a page of a static site: the site's refusal page, see
 * `refusalPage`, http/static-site.ts), and
 * responses 429 (limits; a rate limiter's only with its add_to_defender) and credential-less 401s on the token routes are
 * scored. Failed logins are scored by the auth strategies (http/auth-strategies.ts).
 */
export function registerDefenderHooks(server: Server, c: DependencyContainer, refusalPage?: RefusalPage): void {
  const defender = c.resolve(DefenderService);
  if (!defender.enabled) return;
  server.ext('onRequest', async (request: Request, h: ResponseToolkit) => {
    const refusal = await defender.banRefusal(clientIp(request), 'HTTP');
    if (!refusal) return h.continue;
    const page = await refusalPage?.(request, h);
    if (page) return page.takeover();
    throw Boom.forbidden(refusal);
  });
  server.events.on('response', (request: Request) => {
    const status = (request.response as { statusCode?: number } | null)?.statusCode;
    if (status === 429 && rateLimitScores(request)) {
      defender.report(clientIp(request), 'limit_exceeded', 'HTTP');
    } else if (status === 401 && TOKEN_PATHS.has(request.path) && !request.headers.authorization && !request.headers['x-service-api-key']) {
      defender.report(clientIp(request), 'no_auth', 'HTTP');
    }
  });
}
