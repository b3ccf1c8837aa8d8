import type net from 'node:net';

/**
 * The end of a service's stop() (ServiceStopContext): closes its listeners,
 * then waits until its clients are gone (`clients()` reaches 0) or the grace
 * period ends (`signal` aborts); whatever is left then is cut with `cut()`.
 * The service tells its clients it is stopping before calling it.
 */
export async function drainService(o: { servers: readonly net.Server[]; signal: AbortSignal; clients: () => number; cut: () => void }): Promise<void> {
  const { signal } = o;
  const closed = Promise.all(o.servers.map((l) => new Promise<void>((resolve) => l.close(() => resolve()))));
  signal.addEventListener('abort', o.cut, { once: true });
  const allGone = new Promise<void>((resolve) => {
    const check = () => (o.clients() === 0 ? resolve() : setTimeout(check, 50).unref());
    check();
  });
  await Promise.race([Promise.all([closed, allGone]), new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
  signal.removeEventListener('abort', o.cut);
  o.cut();
}
