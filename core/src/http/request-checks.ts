import type { Request, ResponseToolkit, Server } from '@hapi/hapi';

/** A synchronous check of a request: throws (a Boom error) to refuse it, returns to let it go on. */
export type RequestCheck = (request: Request) => void;

type CheckPoint = 'onRequest' | 'onPostAuth' | 'onPreHandler';

const chains = new WeakMap<Server, Map<CheckPoint, RequestCheck[]>>();

/**
 * Adds a check to the request lifecycle point `point` of `server`. The
 * synchronous checks of one point run in one Hapi extension, in the order
 * they were added: each extension is a step of the lifecycle with promises of
 * its own on every request. The extension takes the place of the first check
 * added among the point's other extensions.
 */
export function addRequestCheck(server: Server, point: CheckPoint, check: RequestCheck): void {
  let byPoint = chains.get(server);
  if (!byPoint) chains.set(server, (byPoint = new Map()));
  let checks = byPoint.get(point);
  if (!checks) {
    const list: RequestCheck[] = (checks = []);
    byPoint.set(point, list);
    server.ext(point, (request: Request, h: ResponseToolkit) => {
      for (const c of list) c(request);
      return h.continue;
    });
  }
  checks.push(check);
}
