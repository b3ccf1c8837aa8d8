import type { Connection } from 'ssh2';

type ServiceRequestHandler = (proto: { serviceAccept(name: string): void }, service: string) => void;

/**
 * Answers a repeated `ssh-userauth` service request before the login ends,
 * as OpenSSH's sshd does, where ssh2's server disconnects
 * (SERVICE_NOT_AVAILABLE). paramiko requests the service again before each
 * authentication method it tries (a key then a password, a password then
 * the keyboard-interactive code), so without this its multi-step logins
 * and its fallbacks end in a disconnect. Goes through the internals of
 * ssh2 1.17 (pinned exactly): the connection's protocol handlers and its
 * `authenticated` flag; anything unexpected and nothing is changed.
 */
export function acceptRepeatedUserauth(conn: Connection): void {
  const c = conn as unknown as { authenticated?: unknown; _protocol?: { _handlers?: Record<string, unknown> } };
  const handlers = c._protocol?._handlers;
  const original = handlers?.SERVICE_REQUEST;
  if (!handlers || typeof original !== 'function' || typeof c.authenticated !== 'boolean') return;
  let accepted = false;
  const wrapped: ServiceRequestHandler = (proto, service) => {
    if (accepted && service === 'ssh-userauth' && c.authenticated === false) return proto.serviceAccept(service);
    (original as ServiceRequestHandler)(proto, service);
    if (service === 'ssh-userauth') accepted = true;
  };
  handlers.SERVICE_REQUEST = wrapped;
}
