import Boom from '@hapi/boom';
import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import type { EventBus } from '../events/event-bus.js';
import { nowNanos, type LogEventType } from '../events/event-types.js';
import { basicCredentialsProblem } from '../auth/basic-header.js';

/** Routes whose authentication is a login with a password (the token routes). */
const LOGIN_STRATEGIES = new Set(['basic-admin', 'basic-user']);
/** Logins remembered to tell whether a refused request was already recorded (per address and username). */
const RECENT_MAX = 10_000;

/** The username of a well-formed `Basic` header, '' for an empty one, undefined when there is no Basic header. */
function basicUsername(authorization: string | undefined): string | undefined {
  const parts = (authorization ?? '').trim().split(/\s+/);
  if (parts.length !== 2 || parts[0]!.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(parts[1]!, 'base64').toString('utf8');
  const sep = decoded.indexOf(':');
  return sep < 0 ? '' : decoded.slice(0, sep);
}

/**
 * Log events of the login routes that the authentication strategies do not
 * publish themselves (they publish 5 on success and 1 or 2 for a wrong
 * password): 3 "no login tried" when a login route is called without
 * credentials, and 1 "login failed" when a login is refused after its
 * password was checked (disabled account, password login disabled, address
 * not allowed, missing or wrong two-factor code). Malformed credentials stay
 * unrecorded, as the strategies decide.
 */
export function registerLoginEvents(server: Server, bus: EventBus, instanceId: string, clientIp: (r: Request) => string): void {
  const recent = new Map<string, number>();
  const key = (ip: string, username: string) => `${ip}\n${username}`;
  bus.on('log', (e) => {
    if (e.protocol !== 'HTTP') return;
    const k = key(e.ip, e.username);
    recent.delete(k);
    recent.set(k, Date.now());
    if (recent.size > RECENT_MAX) recent.delete(recent.keys().next().value!);
  });
  const publish = (event: LogEventType, username: string, ip: string, message: string) =>
    bus.publish('log', { timestamp: nowNanos(), event, protocol: 'HTTP', username, ip, message, role: '', instance_id: instanceId });

  server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
    const strategies = request.route.settings.auth ? (request.route.settings.auth.strategies ?? []) : [];
    if (!strategies.some((s) => LOGIN_STRATEGIES.has(s))) return h.continue;
    const res = request.response;
    if (!Boom.isBoom(res) || (res.output.statusCode !== 401 && res.output.statusCode !== 403)) return h.continue;
    const header = typeof request.headers.authorization === 'string' ? request.headers.authorization : undefined;
    const ip = clientIp(request);
    const username = basicUsername(header);
    if (!username) {
      publish(3, '', ip, 'no login tried: the request carried no username and password');
      return h.continue;
    }
    if (basicCredentialsProblem(header)) return h.continue;
    const last = recent.get(key(ip, username));
    if (last !== undefined && last >= request.info.received) return h.continue;
    publish(1, username, ip, `login refused: ${res.message}`);
    return h.continue;
  });
}
