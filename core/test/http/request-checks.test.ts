import t from 'tap';
import Hapi from '@hapi/hapi';
import Boom from '@hapi/boom';
import { addRequestCheck } from '../../src/http/request-checks.js';

// addRequestCheck (core/src/http/request-checks.ts): the synchronous checks of
// one lifecycle point run in order in one extension; a check that throws stops
// the request with its error and the checks after it do not run.

function serverWithChecks(seen: string[]) {
  const s = Hapi.server();
  s.route({ method: 'GET', path: '/{p*}', handler: (request) => ({ seen: [...seen], p: request.params.p }) });
  addRequestCheck(s, 'onRequest', () => void seen.push('request 1'));
  s.ext('onPostAuth', (_request, h) => {
    seen.push('plain ext');
    return h.continue;
  });
  addRequestCheck(s, 'onPostAuth', (request) => {
    seen.push('post-auth 1');
    if (request.path === '/refuse') throw Boom.forbidden('refused by the first check');
  });
  addRequestCheck(s, 'onPostAuth', () => void seen.push('post-auth 2'));
  addRequestCheck(s, 'onPreHandler', () => void seen.push('pre-handler'));
  addRequestCheck(s, 'onRequest', (request) => {
    seen.push('request 2');
    if (request.path === '/early') throw Boom.badRequest('refused on arrival');
  });
  return s;
}

t.test('checks run in the order they were added, each point in its turn', async (t) => {
  const seen: string[] = [];
  const s = serverWithChecks(seen);
  const r = await s.inject('/x');
  t.equal(r.statusCode, 200);
  t.same(JSON.parse(r.payload).seen, ['request 1', 'request 2', 'plain ext', 'post-auth 1', 'post-auth 2', 'pre-handler']);
});

t.test('a check that throws answers its error; the later checks and the handler do not run', async (t) => {
  const seen: string[] = [];
  const s = serverWithChecks(seen);
  const refused = await s.inject('/refuse');
  t.equal(refused.statusCode, 403);
  t.match(JSON.parse(refused.payload), { message: 'refused by the first check' });
  t.same(seen, ['request 1', 'request 2', 'plain ext', 'post-auth 1']);
  seen.length = 0;
  const early = await s.inject('/early');
  t.equal(early.statusCode, 400);
  t.same(seen, ['request 1', 'request 2'], 'refused before routing');
});

t.test('each server has checks of its own', async (t) => {
  const a: string[] = [];
  const b: string[] = [];
  const sa = serverWithChecks(a);
  const sb = Hapi.server();
  sb.route({ method: 'GET', path: '/', handler: () => 'ok' });
  addRequestCheck(sb, 'onPostAuth', () => void b.push('b'));
  await sb.inject('/');
  await sa.inject('/y');
  t.same(b, ['b']);
  t.notOk(a.includes('b'));
});
