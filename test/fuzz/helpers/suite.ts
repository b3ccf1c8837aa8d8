/**
 * One fuzz suite: a world, the routes of its part of the route table, a
 * seeded plan of bad requests, the run, and the checks (every answer a 4xx
 * ApiResponse, nothing stored changed, every route covered and reached).
 */
import type { Test } from 'tap';
import { Rng } from './prng.js';
import { applicable, describeRequest, knowRoutes, routesOf, runInject, selected, type FuzzRequest, type RouteInfo, type RunResult } from './fuzz.js';
import { health, multipartFaults, sharePublic, shareSessionEnd, tus, userPaths, userTus } from './special.js';
import { createWorld, snapshot, type World } from './world.js';

type Gen = (r: Rng, w: World, rt: RouteInfo) => Omit<FuzzRequest, 'n'> | undefined;

/** Generators of a route: the generic ones its schemas and options call for, and the special ones of its family. */
function generators(rt: RouteInfo): [number, Gen][] {
  const p = rt.path;
  if (p === '/healthz') return [[1, health]];
  if (p.startsWith('/api/v2/shares-chunked-uploads')) return [[1, tus]];
  if (p.startsWith('/api/v2/user/chunked-uploads')) return [[1, userTus]];
  if (p === '/api/v2/shares/{id}/web-session' && rt.method === 'DELETE') return [[1, shareSessionEnd]];
  const out = applicable(rt);
  if (/^\/api\/v2\/shares\/\{id\}/.test(p)) out.push([6, sharePublic]);
  if (/^\/api\/v2\/user\/(files|dirs|file-actions|streamzip)/.test(p)) out.push([5, userPaths]);
  if (rt.method === 'POST' && (p === '/api/v2/user/files' || p === '/api/v2/shares/{id}')) out.push([2, multipartFaults]);
  return out;
}

function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** `perRoute` requests for each route, each route with its own generator seeded from the run seed and the route. */
export function plan(w: World, routes: RouteInfo[], seed: number, perRoute: number): { reqs: FuzzRequest[]; unfuzzable: string[] } {
  const reqs: FuzzRequest[] = [];
  const unfuzzable: string[] = [];
  for (const rt of [...routes].sort((a, b) => a.key.localeCompare(b.key))) {
    const gens = generators(rt);
    if (!gens.length) {
      unfuzzable.push(rt.key);
      continue;
    }
    const r = new Rng((seed ^ hash(rt.key)) >>> 0);
    let made = 0;
    for (let tries = 0; made < perRoute && tries < perRoute * 20; tries++) {
      const gen = r.weighted(gens);
      const req = gen(r.fork(), w, rt);
      if (!req) continue;
      reqs.push({ ...req, n: reqs.length });
      made++;
    }
  }
  return { reqs, unfuzzable };
}

function summary(res: RunResult): string {
  const kinds = [...res.kinds.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`);
  return `${res.sent} requests; kinds: ${kinds.join(', ')}`;
}

export function fuzzSuite(t: Test, o: { name: string; seed: number; perRoute: number; routes: (rt: RouteInfo) => boolean }): Promise<void> {
  return t.test(o.name, (t) => run(t, o)).then(() => undefined);
}

async function run(t: Test, o: { name: string; seed: number; perRoute: number; routes: (rt: RouteInfo) => boolean }): Promise<void> {
  const w = await createWorld();
  t.teardown(() => w.ta.close());
  const all = routesOf(w.server);
  knowRoutes(all);
  const routes = all.filter(o.routes);
  const { reqs, unfuzzable } = plan(w, routes, o.seed, o.perRoute);
  t.comment(`${o.name}: seed ${o.seed} (FERRY_FUZZ_SEED=${o.seed} replays it), ${routes.length} routes, ${reqs.length} requests`);
  t.same(unfuzzable, [], 'every route has generators');

  const crashes: unknown[] = [];
  const onCrash = (err: unknown) => crashes.push(err);
  process.on('unhandledRejection', onCrash);
  t.teardown(() => process.off('unhandledRejection', onCrash));

  const before = await snapshot(w);
  const started = Date.now();
  const cpu = process.cpuUsage();
  const res = await runInject(w.server, selected(reqs));
  const ms = Date.now() - started;
  const used = process.cpuUsage(cpu);
  const cpuMs = Math.round((used.user + used.system) / 1000);
  const after = await snapshot(w);
  t.comment(`${summary(res)} (${ms} ms, ${cpuMs} ms of CPU in this process)`);
  if (process.env.FERRY_FUZZ_TIMES)
    for (const [k, v] of [...res.time.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15)) t.comment(`${Math.round(v)} ms ${k}`);

  t.test('every answer is a 4xx ApiResponse: no 5xx, no stack trace', async (t) => {
    const groups = new Map<string, number>();
    for (const f of res.failures) {
      const k = `${f.req.route} [${f.req.kind}] ${f.why}`;
      groups.set(k, (groups.get(k) ?? 0) + 1);
    }
    for (const [k, n] of [...groups.entries()].sort()) t.comment(`${n} x ${k}`);
    const shown = new Set<string>();
    for (const f of res.failures) {
      const k = `${f.req.route} [${f.req.kind}] ${f.why}`;
      if (shown.has(k) || shown.size >= 40) continue;
      shown.add(k);
      t.fail(`${f.why}\n${describeRequest(o.seed, f.req)}\n  answer ${f.status}: ${f.body}`);
    }
    t.equal(res.failures.length, 0, `${res.failures.length} of ${res.sent} answers were wrong`);
  });

  t.test('refused requests changed nothing stored', async (t) => {
    t.same(after, before);
  });

  t.test('no crash', async (t) => {
    t.same(crashes.map(String), [], 'no unhandled rejection during the run');
    const h = await w.server.inject({ method: 'GET', url: '/healthz' });
    t.equal(h.statusCode, 200, 'the server still answers');
  });

  if (process.env.FERRY_FUZZ_ONLY) return;
  t.test('every route was fuzzed, and past authentication where it has more to check', async (t) => {
    for (const rt of routes) {
      const total = res.counts.get(rt.key) ?? 0;
      t.ok(total >= Math.min(o.perRoute, 10), `${rt.key}: ${total} requests`);
      const gens = generators(rt);
      if (gens.some(([, g]) => g.name !== 'genAuth' && g.name !== 'genMethod')) {
        const statuses = res.statuses.get(rt.key) ?? new Map<number, number>();
        const reached = [...statuses.entries()].filter(([s]) => s !== 401).reduce((a, [, n]) => a + n, 0);
        t.ok(reached > 0, `${rt.key}: some requests got past authentication`);
      }
    }
  });
}
