import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { accountsApp, user, type AccountsApp } from './accounts-helpers.js';
import { createTestApp, usePostgres, type TestApp } from '../../src/testing.js';
import { IpListService } from '../../src/security/ip-list.service.js';
import { canonicalIpNet, IpNetIndex, parseIpNet } from '../../src/util/ip-net.js';

const A = await accountsApp();
t.teardown(() => A.close());

interface Call {
  token?: string;
  payload?: unknown;
  ip?: string;
  headers?: Record<string, string>;
}

/** A request from `ip` (default 127.0.0.1) with A's admin token unless another is given (`token: ''` for none). */
async function call(app: TestApp & { token?: string }, method: string, url: string, o: Call = {}) {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  const token = o.token ?? app.token;
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await app.server.inject({ method, url, headers, payload: o.payload as never, remoteAddress: o.ip ?? '127.0.0.1' });
  const json = String(r.headers['content-type'] ?? '').startsWith('application/json');
  return { status: r.statusCode, headers: r.headers, body: json ? JSON.parse(r.payload) : r.payload };
}

const L = '/api/v2/iplists';

t.test('canonical networks and the prefix index', async (t) => {
  const cases: [string, string | null][] = [
    ['192.168.1.10', '192.168.1.10/32'],
    [' 10.1.2.3/8 ', '10.0.0.0/8'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1/128'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1/128'],
    ['2001:db8::1234:5678/32', '2001:db8::/32'],
    ['::ffff:192.0.2.1', '192.0.2.1/32'],
    ['::ffff:10.0.0.0/104', '10.0.0.0/8'],
    ['::1', '::1/128'],
    ['::', '::/128'],
    ['fe80:0:0:0:1:2:3:4/64', 'fe80::/64'],
    ['300.1.1.1', null],
    ['10.0.0.0/33', null],
    ['10.0.0.0/', null],
    ['10.0.0.0/-1', null],
    ['1.2.3.4/8/9', null],
    ['2001:db8::/129', null],
    ['fe80::1%eth0', null],
    ['1.2.3', null],
    ['abc', null],
    ['', null],
  ];
  for (const [input, want] of cases) t.equal(canonicalIpNet(input), want, JSON.stringify(input));

  const idx = new IpNetIndex<string>();
  for (const n of ['10.0.0.0/8', '10.1.0.0/16', '10.1.2.3/32', '192.168.0.0/16', '2001:db8::/32', '0.0.0.0/0']) idx.add(parseIpNet(n)!, n);
  t.same(idx.lookup('10.1.2.3'), ['10.1.2.3/32', '10.1.0.0/16', '10.0.0.0/8', '0.0.0.0/0'], 'every containing network, most specific first');
  t.same(idx.lookup('::ffff:10.1.9.9'), ['10.1.0.0/16', '10.0.0.0/8', '0.0.0.0/0'], 'IPv4-mapped addresses match IPv4 networks');
  t.same(idx.lookup('2001:db8:1::5'), ['2001:db8::/32']);
  t.same(idx.lookup('2001:db9::5'), []);
  t.same(idx.lookup('not-an-ip'), []);
  t.equal(idx.size, 6);

  // random networks and addresses (seeded): the index finds exactly the networks a brute-force scan finds
  let seed = 42;
  const rnd = (n: number) => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) % n;
  };
  const v4 = () => [rnd(256), rnd(256), rnd(4), rnd(256)].join('.');
  const v6 = () =>
    ['2001', 'db8', rnd(3).toString(16), rnd(65536).toString(16), '0', rnd(2).toString(16), rnd(65536).toString(16), rnd(16).toString(16)].join(':');
  const nets: ReturnType<typeof parseIpNet>[] = [];
  const big = new IpNetIndex<string>();
  for (let i = 0; i < 2000; i++) {
    const n = parseIpNet(i % 2 ? `${v4()}/${16 + rnd(17)}` : `${v6()}/${40 + rnd(89)}`)!;
    if (!big.lookup(n).some((x) => x === n.canonical)) nets.push(n);
    big.add(n, n.canonical);
  }
  const contains = (n: NonNullable<ReturnType<typeof parseIpNet>>, a: NonNullable<ReturnType<typeof parseIpNet>>) => {
    if (n.family !== a.family) return false;
    const bits = BigInt((n.family === 4 ? 32 : 128) - n.prefix);
    return a.network >> bits === n.network >> bits;
  };
  let hits = 0;
  for (let i = 0; i < 3000; i++) {
    const addr = i % 3 === 0 ? v4() : i % 3 === 1 ? v6() : `::ffff:${v4()}`;
    const a = parseIpNet(addr)!;
    const want = nets
      .filter((n) => contains(n!, a))
      .sort((x, y) => y!.prefix - x!.prefix)
      .map((n) => n!.canonical);
    const got = big.lookup(addr);
    if (got.length) hits++;
    if (JSON.stringify(got) !== JSON.stringify(want)) t.fail(`${addr}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
  }
  t.ok(hits > 300 && hits < 2700, `random addresses in (${hits}) and out of random networks; the index agrees with a full scan on all of them`);
});

t.test('create, read, update, delete', async (t) => {
  A.events.length = 0;
  const c = await call(A, 'POST', `${L}/1`, { payload: { ipornet: '192.168.1.10', description: 'office', protocols: 8 } });
  t.equal(c.status, 201);
  t.equal(c.headers.location, `${L}/1/192.168.1.10%2F32`, 'Location names the canonical network, "/" encoded');
  t.match(c.body, { message: String });

  const g = await call(A, 'GET', String(c.headers.location));
  t.equal(g.status, 200);
  t.match(g.body, { ipornet: '192.168.1.10/32', description: 'office', type: 1, mode: 1, protocols: 8, created_at: Number, updated_at: Number });
  t.ok(g.body.created_at > 0);
  t.same(Object.keys(g.body).sort(), ['created_at', 'description', 'ipornet', 'mode', 'protocols', 'type', 'updated_at']);
  t.equal((await call(A, 'GET', `${L}/1/192.168.1.10`)).body?.ipornet, '192.168.1.10/32', 'found with the address the client sent');
  t.equal((await call(A, 'GET', `${L}/1/192.168.1.10/32`)).status, 200, 'found with a plain "/" in the path');
  t.equal((await call(A, 'GET', `${L}/2/192.168.1.10`)).status, 404, 'lists are separate');

  t.equal((await call(A, 'POST', `${L}/1`, { payload: { ipornet: '10.1.2.3/8' } })).headers.location, `${L}/1/10.0.0.0%2F8`, 'host bits cleared');
  t.equal((await call(A, 'GET', `${L}/1/10.1.2.3%2F8`)).body?.ipornet, '10.0.0.0/8');
  t.equal((await call(A, 'POST', `${L}/1`, { payload: { ipornet: '2001:DB8:0:0:0:0:0:1', type: 1 } })).status, 201);
  t.equal((await call(A, 'GET', `${L}/1/2001:db8::1`)).body?.ipornet, '2001:db8::1/128');
  t.equal((await call(A, 'GET', `${L}/1/${encodeURIComponent('2001:db8:0::1/128')}`)).body?.ipornet, '2001:db8::1/128');

  // duplicates: 409 whatever the form
  for (const ipornet of ['192.168.1.10/32', '192.168.1.10', '::ffff:192.168.1.10']) {
    const d = await call(A, 'POST', `${L}/1`, { payload: { ipornet } });
    t.equal(d.status, 409, `duplicate ${ipornet}`);
    t.match(d.body, { message: /already on IP list 1/, error: 'Conflict' });
  }
  t.equal((await call(A, 'POST', `${L}/3`, { payload: { ipornet: '192.168.1.10' } })).status, 201, 'the same network on another list');

  // update
  const u = await call(A, 'PUT', `${L}/1/192.168.1.10`, { payload: { description: 'front office', protocols: 9 } });
  t.equal(u.status, 200);
  t.match(u.body, { message: String });
  const g2 = (await call(A, 'GET', `${L}/1/192.168.1.10%2F32`)).body;
  t.match(g2, { description: 'front office', protocols: 9, mode: 1, created_at: g.body.created_at });
  t.ok(g2.updated_at >= g.body.updated_at);
  t.equal(
    (await call(A, 'PUT', `${L}/1/192.168.1.10`, { payload: { ipornet: '192.168.1.10/32', type: 1, description: 'same' } })).status,
    200,
    "the entry's own ipornet and type may be sent back",
  );

  // delete
  const del = await call(A, 'DELETE', `${L}/1/192.168.1.10%2F32`);
  t.equal(del.status, 200);
  t.match(del.body, { message: String });
  t.equal((await call(A, 'GET', `${L}/1/192.168.1.10`)).status, 404);
  t.equal((await call(A, 'GET', `${L}/3/192.168.1.10`)).status, 200, 'the other list keeps its entry');

  // provider events
  const ev = A.events.filter((e) => e.object_type === 'ip_list_entry' && e.object_name === '1_192.168.1.10/32');
  t.same(
    ev.map((e) => e.action),
    ['add', 'update', 'update', 'delete'],
  );
  t.match(ev[0], { username: 'admin', ip: '127.0.0.1', object_data: { ipornet: '192.168.1.10/32', type: 1, description: 'office', protocols: 8 } });
  t.match(ev[1], { object_data: { description: 'front office', protocols: 9 } });
  t.match(ev[3], { object_data: { ipornet: '192.168.1.10/32', description: 'same' } });
  t.ok(A.events.some((e) => e.object_type === 'ip_list_entry' && e.object_name === '3_192.168.1.10/32' && e.action === 'add'));
});

t.test('refusals: 400 naming the field, 404, 409', async (t) => {
  await call(A, 'POST', `${L}/2`, { payload: { ipornet: '172.20.0.0/16', mode: 2 } });
  const bad = async (method: string, url: string, payload: unknown, field: RegExp, status = 400) => {
    const r = await call(A, method, url, { payload });
    t.equal(r.status, status, `${method} ${url} ${JSON.stringify(payload)}`);
    t.match(r.body, { message: field, error: String });
  };
  for (const ipornet of ['300.1.1.1', '10.0.0.0/33', 'abc', '1.2.3.4/8/9', '', 'fe80::1%eth0']) await bad('POST', `${L}/1`, { ipornet }, /"ipornet"/);
  await bad('POST', `${L}/1`, {}, /"ipornet" is required/);
  await bad('POST', `${L}/1`, { ipornet: 42 }, /"ipornet"/);
  await bad('POST', `${L}/4`, { ipornet: '10.0.0.1' }, /"type"/);
  await bad('POST', `${L}/0`, { ipornet: '10.0.0.1' }, /"type"/);
  await bad('POST', `${L}/x`, { ipornet: '10.0.0.1' }, /"type"/);
  await bad('POST', `${L}/1`, { ipornet: '10.0.0.1', type: 2 }, /"type"/);
  await bad('POST', `${L}/1`, { ipornet: '10.0.0.1', mode: 2 }, /"mode"/);
  await bad('POST', `${L}/3`, { ipornet: '10.0.0.1', mode: 2 }, /"mode"/);
  await bad('POST', `${L}/2`, { ipornet: '10.0.0.1', mode: 3 }, /"mode"/);
  await bad('POST', `${L}/1`, { ipornet: '10.0.0.1', protocols: 16 }, /"protocols"/);
  await bad('POST', `${L}/1`, { ipornet: '10.0.0.1', protocols: -1 }, /"protocols"/);
  await bad('POST', `${L}/1`, { ipornet: '10.0.0.1', description: 'x'.repeat(5000) }, /"description"/);
  // an unknown member is dropped, not refused: refused here for the known one
  await bad('POST', `${L}/1`, { ipornet: '10.0.0.1', colour: 'red', mode: 9 }, /"mode"/);
  t.equal((await call(A, 'GET', `${L}/1/10.0.0.1`)).status, 404, 'nothing was added by the refused requests');

  await bad('GET', `${L}/9/10.0.0.1`, undefined, /"type"/);
  await bad('GET', `${L}/1/not-an-ip`, undefined, /"ipornet"/);
  await bad('GET', `${L}/1/10.9.9.9`, undefined, /not on IP list 1/, 404);
  await bad('PUT', `${L}/2/172.20.0.0%2F16`, { ipornet: '172.21.0.0/16', mode: 2 }, /"ipornet"/);
  await bad('PUT', `${L}/2/172.20.0.0%2F16`, { type: 1, mode: 2 }, /"type"/);
  await bad('PUT', `${L}/2/172.20.0.0%2F16`, { mode: 5 }, /"mode"/);
  await bad('PUT', `${L}/1/10.9.9.9`, { description: 'x' }, /not on IP list 1/, 404);
  await bad('PUT', `${L}/1/10.9.9.9`, { mode: 2 }, /"mode"/);
  await bad('PUT', `${L}/1/999.1.1.1`, { description: 'x' }, /"ipornet"/);
  await bad('PUT', `${L}/7/10.9.9.9`, { description: 'x' }, /"type"/);
  await bad('DELETE', `${L}/1/10.9.9.9`, undefined, /not on IP list 1/, 404);
  await bad('DELETE', `${L}/1/10.9.9.9%2F40`, undefined, /"ipornet"/);
  await bad('DELETE', `${L}/4/10.9.9.9`, undefined, /"type"/);
  t.match((await call(A, 'GET', `${L}/2/172.20.0.0%2F16`)).body, { mode: 2 }, 'refused updates changed nothing');
  t.equal((await call(A, 'DELETE', `${L}/2/172.20.0.0/16`)).status, 200);
});

t.test('list: filter, from, limit, order', async (t) => {
  const nets = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.1.0/24', '192.168.0.0/16', '2001:db8::/48', '9.9.9.9'];
  for (const ipornet of nets) t.equal((await call(A, 'POST', `${L}/3`, { payload: { ipornet, description: `d ${ipornet}` } })).status, 201);
  await call(A, 'POST', `${L}/2`, { payload: { ipornet: '10.0.0.7' } });
  const list = async (q: string) => {
    const r = await call(A, 'GET', `${L}/3${q}`);
    t.equal(r.status, 200, q);
    return (r.body as { ipornet: string }[]).map((e) => e.ipornet);
  };
  const all = ['10.0.0.1/32', '10.0.0.2/32', '10.0.0.3/32', '10.0.1.0/24', '192.168.0.0/16', '192.168.1.10/32', '2001:db8::/48', '9.9.9.9/32'];
  t.same(await list(''), all, 'ASC by ipornet by default, only this list');
  t.same(await list('?order=DESC'), [...all].reverse());
  t.same(await list('?limit=3'), all.slice(0, 3));
  t.same(await list(`?limit=3&from=${encodeURIComponent('10.0.0.3/32')}`), all.slice(3, 6), 'from: the page after that entry');
  t.same(await list('?limit=3&from=10.0.0.3'), all.slice(3, 6), 'from in the form the client used');
  t.same(await list(`?order=DESC&limit=2&from=${encodeURIComponent('10.0.1.0/24')}`), ['10.0.0.3/32', '10.0.0.2/32']);
  t.same(await list('?filter=10.0.0.'), all.slice(0, 3), 'filter: starts with');
  t.same(await list('?filter=10.0.0.2'), ['10.0.0.2/32'], 'filter: an address matches its entry');
  t.same(await list(`?filter=${encodeURIComponent('10.0.1.5/24')}`), ['10.0.1.0/24'], 'filter: a network matches its canonical entry');
  t.same(await list('?filter=2001:DB8'), ['2001:db8::/48'], 'filter is case-insensitive for hex');
  t.same(await list('?filter=172.'), []);
  t.same(await list('?filter=10.&from=10.0.0.1&limit=2'), ['10.0.0.2/32', '10.0.0.3/32'], 'filter, from and limit together');
  const first = (await call(A, 'GET', `${L}/3?limit=1`)).body[0];
  t.match(first, { ipornet: '10.0.0.1/32', type: 3, mode: 1, protocols: 0, description: 'd 10.0.0.1' });
  for (const q of ['?limit=0', '?limit=501', '?limit=x', '?order=UP', '?filter=10%25', '?filter=a_b', '?from=xyz', '?page=2&limit=0']) {
    const r = await call(A, 'GET', `${L}/3${q}`);
    t.equal(r.status, 400, q);
    t.match(r.body, { message: /"(limit|order|filter|from)"/ });
  }
  t.equal((await call(A, 'GET', `${L}/3?page=2`)).status, 200, 'an unknown query parameter is ignored');
  t.equal((await call(A, 'GET', `${L}/5`)).status, 400, 'unknown list type');
  t.equal((await call(A, 'GET', `${L}/3?limit=500`)).status, 200);
});

t.test('permissions', async (t) => {
  t.equal(
    (await call(A, 'POST', '/api/v2/admins', { payload: { username: 'viewer', password: 'viewer-pw-1', permissions: ['view_users', 'manage_defender'] } }))
      .status,
    201,
  );
  t.equal(
    (await call(A, 'POST', '/api/v2/admins', { payload: { username: 'lister', password: 'lister-pw-1', permissions: ['manage_ip_lists'] } })).status,
    201,
  );
  const viewer = await A.adminToken('viewer', 'viewer-pw-1');
  const lister = await A.adminToken('lister', 'lister-pw-1');
  await call(A, 'POST', '/api/v2/users', { payload: user('ipl-user') });
  const userToken = await A.userToken('ipl-user', 'ipl-user-password');
  const routes: [string, string, unknown?][] = [
    ['GET', `${L}/1`],
    ['POST', `${L}/1`, { ipornet: '10.77.0.1' }],
    ['GET', `${L}/1/10.77.0.1`],
    ['PUT', `${L}/1/10.77.0.1`, { description: 'by lister' }],
    ['DELETE', `${L}/1/10.77.0.1`],
  ];
  for (const [method, url, payload] of routes) {
    const denied = await call(A, method, url, { token: viewer, payload });
    t.equal(denied.status, 403, `${method} ${url} without manage_ip_lists`);
    t.match(denied.body, { message: /manage_ip_lists/, error: 'Forbidden' });
    t.equal((await call(A, method, url, { token: '', payload })).status, 401, `${method} ${url} without credentials`);
    t.equal((await call(A, method, url, { token: userToken, payload })).status, 401, `${method} ${url} with a user token`);
    const ok = await call(A, method, url, { token: lister, payload });
    t.equal(ok.status, method === 'POST' ? 201 : 200, `${method} ${url} with manage_ip_lists`);
  }
  t.equal((await call(A, 'POST', '/api/v2/admins', { payload: { username: 'bad', password: 'bad-pw-1', permissions: ['manage_ip_listz'] } })).status, 400);
});

t.test('enforcement over HTTP: allow list, defender list, the service checks', async (t) => {
  const ipLists = A.app.container.resolve(IpListService);
  const common = A.config.common as { allow_list_status: boolean };
  t.teardown(() => void (common.allow_list_status = false));
  t.equal((await call(A, 'DELETE', `${L}/1/10.0.0.0%2F8`)).status, 200, 'left by an earlier test');
  await call(A, 'POST', `${L}/1`, { payload: { ipornet: '127.0.0.1' } });
  await call(A, 'POST', `${L}/1`, { payload: { ipornet: '10.8.0.0/16', protocols: 8 } });
  await call(A, 'POST', `${L}/1`, { payload: { ipornet: '10.9.0.1', protocols: 1 + 2 } });
  await call(A, 'POST', `${L}/1`, { payload: { ipornet: '2001:db8:aa::/48' } });

  const version = (ip: string, token?: string) => call(A, 'GET', '/api/v2/version', { ip, token });
  const badLogin = (ip: string) =>
    call(A, 'GET', '/api/v2/token', { ip, token: '', headers: { authorization: 'Basic ' + Buffer.from('admin:wrong').toString('base64') } });

  t.equal((await version('10.50.0.1')).status, 200, 'allow list off: anyone');
  common.allow_list_status = true;
  t.equal((await version('10.8.3.4')).status, 200, 'on the list for HTTP');
  t.equal((await version('::ffff:10.8.3.4')).status, 200, 'IPv4-mapped address');
  t.equal((await version('2001:db8:aa:1::9')).status, 200, 'IPv6 network');
  t.equal((await version('127.0.0.1')).status, 200);
  const refused = await version('10.50.0.1');
  t.equal(refused.status, 403, 'not on the list');
  t.match(refused.body, { message: /10\.50\.0\.1 is not on the allow list/, error: 'Forbidden' });
  t.equal((await version('10.9.0.1')).status, 403, 'on the list for SSH and FTP only');
  t.equal((await version('2001:db8:ab::1')).status, 403);
  t.equal((await badLogin('10.50.0.1')).status, 403, 'refused before authentication (wrong credentials are not even checked)');
  t.equal((await badLogin('10.8.0.1')).status, 401, 'from an allowed address the credentials are checked');
  t.equal((await call(A, 'GET', '/healthz', { ip: '10.50.0.1', token: '' })).status, 403, 'every route');
  t.equal((await call(A, 'GET', '/healthz', { ip: '10.8.0.1', token: '' })).status, 200);

  t.ok(await ipLists.isAllowListed('10.9.0.1', 'SSH'));
  t.notOk(await ipLists.isAllowListed('10.9.0.1', 'HTTP'));
  t.ok(await ipLists.isAllowListed('10.9.0.1'), 'without a protocol any entry counts');
  t.notOk(await ipLists.isAllowed('10.50.0.1', 'HTTP'));

  // changes apply at once on this node
  t.equal((await call(A, 'POST', `${L}/1`, { payload: { ipornet: '10.50.0.0/24' } })).status, 201);
  t.equal((await version('10.50.0.1')).status, 200, 'added: allowed at once');
  t.equal((await call(A, 'PUT', `${L}/1/10.50.0.0%2F24`, { payload: { protocols: 1 } })).status, 200);
  t.equal((await version('10.50.0.1')).status, 403, 'updated to SSH only: refused at once');
  t.equal((await call(A, 'DELETE', `${L}/1/10.50.0.0%2F24`)).status, 200);
  t.equal((await version('10.50.0.1')).status, 403);

  // the proxy header is honoured only for configured proxies (binding client_ip_proxy_header / proxy_allowed)
  t.equal(
    (await call(A, 'GET', '/api/v2/version', { ip: '10.50.0.1', headers: { 'x-forwarded-for': '10.8.0.1' } })).status,
    403,
    'no proxy configured: the socket address counts',
  );
  common.allow_list_status = false;

  // defender list: deny entries refuse HTTP requests whatever the allow list; the most specific entry decides
  await call(A, 'POST', `${L}/2`, { payload: { ipornet: '172.16.0.0/12', mode: 2 } });
  await call(A, 'POST', `${L}/2`, { payload: { ipornet: '172.16.5.0/24', mode: 1 } });
  await call(A, 'POST', `${L}/2`, { payload: { ipornet: '192.0.2.0/24', mode: 2, protocols: 1 } });
  const banned = await version('172.17.0.1');
  t.equal(banned.status, 403, 'banned by a deny entry');
  t.match(banned.body, { message: /172\.17\.0\.1 is banned/ });
  t.equal((await version('172.16.5.9')).status, 200, 'a more specific allow entry wins');
  t.equal((await version('192.0.2.1')).status, 200, 'deny entry for SSH only');
  t.ok(await ipLists.isBanned('172.17.0.1', 'HTTP'));
  t.notOk(await ipLists.isSafe('172.17.0.1', 'HTTP'));
  t.ok(await ipLists.isSafe('172.16.5.9', 'SSH'));
  t.notOk(await ipLists.isBanned('172.16.5.9', 'SSH'));
  t.ok(await ipLists.isBanned('192.0.2.1', 'SSH'));
  t.notOk(await ipLists.isBanned('192.0.2.1', 'HTTP'));
  t.notOk((await ipLists.isSafe('8.8.8.8')) || (await ipLists.isBanned('8.8.8.8')), 'an address on no entry is neither');

  // the check of every request: from memory while the lists are fresh, never from lists a change made stale
  ipLists.invalidate();
  t.equal(ipLists.cachedConnectionRefusal('172.17.0.1', 'HTTP'), undefined, 'stale lists: no answer from memory');
  t.equal(await ipLists.connectionRefusal('172.17.0.1', 'HTTP'), 'access denied: 172.17.0.1 is banned');
  t.equal(ipLists.cachedConnectionRefusal('172.17.0.1', 'HTTP'), 'access denied: 172.17.0.1 is banned', 'read again: answered from memory');
  t.equal(ipLists.cachedConnectionRefusal('172.16.5.9', 'HTTP'), null);
  t.equal(ipLists.cachedConnectionRefusal('192.0.2.1', 'SSH'), 'access denied: 192.0.2.1 is banned');
  common.allow_list_status = true;
  t.equal(ipLists.cachedConnectionRefusal('10.50.0.1', 'HTTP'), 'access denied: 10.50.0.1 is not on the allow list', 'the allow list as configured now');
  t.equal(ipLists.cachedConnectionRefusal('10.8.0.1', 'HTTP'), null);
  common.allow_list_status = false;
  t.equal((await call(A, 'POST', `${L}/2`, { payload: { ipornet: '203.0.113.0/24', mode: 2 } })).status, 201);
  t.equal(ipLists.cachedConnectionRefusal('203.0.113.5', 'HTTP'), undefined, 'a change makes the lists stale at once');
  t.equal((await version('203.0.113.5')).status, 403, 'and the next request reads them');
  t.equal(ipLists.cachedConnectionRefusal('203.0.113.5', 'HTTP'), 'access denied: 203.0.113.5 is banned');
  t.equal((await call(A, 'DELETE', `${L}/2/203.0.113.0%2F24`)).status, 200);
  t.equal((await version('203.0.113.5')).status, 200, 'removed: allowed at once');

  // rate limiter safe list (type 3)
  await call(A, 'POST', `${L}/3`, { payload: { ipornet: '198.51.100.0/24', protocols: 8 } });
  t.ok(await ipLists.isRateLimitExempt('198.51.100.7', 'HTTP'));
  t.notOk(await ipLists.isRateLimitExempt('198.51.100.7', 'FTP'));
  t.notOk(await ipLists.isRateLimitExempt('198.51.101.7', 'HTTP'));
  t.same(
    (await ipLists.matches(2, '172.16.5.9')).map((m) => [m.ipornet, m.mode]),
    [
      ['172.16.5.0/24', 1],
      ['172.16.0.0/12', 2],
    ],
    'matches: most specific first',
  );
  t.same(await ipLists.matches(1, 'garbage'), [], 'an unparsable address matches nothing');
});

t.test('thousands of entries', async (t) => {
  const ipLists = A.app.container.resolve(IpListService);
  const now = Date.now();
  // 3000 rows in one statement: the index must reflect rows written by anyone once their version changes
  const values = Array.from({ length: 3000 }, (_, i) => `(3, '100.${64 + (i >> 8)}.${i & 255}.0/24', 1, 0, '', ${now}, ${now})`).join(',');
  await A.sql(`insert into ip_lists (type, ipornet, mode, protocols, description, created_at, updated_at) values ${values}`);
  ipLists.invalidate();
  t.notOk(await ipLists.isRateLimitExempt('100.70.1.1'), 'rows written without a version change are not loaded (the version is unchanged)');
  await A.sql(`update settings set value = 'changed-elsewhere' where key = 'ip_lists_version'`);
  ipLists.invalidate();
  t.ok(await ipLists.isRateLimitExempt('100.70.1.1'), 'version changed: reloaded');
  t.ok(await ipLists.isRateLimitExempt('100.75.183.200'));
  t.notOk(await ipLists.isRateLimitExempt('100.76.0.1'));
  const page = (await call(A, 'GET', `${L}/3?filter=100.70.&limit=500`)).body as unknown[];
  t.equal(page.length, 256);
});

t.test('several nodes sharing one database', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-ipl-nodes-'));
  const shared = (ttl: number) => ({ common: { ip_lists_cache_ttl: ttl }, ...(usePostgres() ? {} : { data_provider: { name: 'ferry.db' } }) });
  const n1 = await createTestApp({ dataDir: dir, config: shared(3600) });
  const n2 = await createTestApp({ dataDir: dir, config: shared(0), ...(n1.databaseUrl ? { databaseUrl: n1.databaseUrl } : {}) });
  t.teardown(async () => {
    await n2.close();
    await n1.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const tok1 = await n1.adminToken();
  const tok2 = await n2.adminToken();
  const deny = { ipornet: '203.0.113.0/24', mode: 2 };
  const probe = (app: TestApp, token: string) => call(app, 'GET', '/api/v2/version', { token, ip: '203.0.113.9' });

  t.equal((await probe(n1, tok1)).status, 200, 'node 1 caches the empty lists for an hour');
  t.equal((await call(n2, 'POST', `${L}/2`, { token: tok2, payload: deny })).status, 201, 'node 2 adds a deny entry');
  t.equal((await probe(n2, tok2)).status, 403, 'node 2: at once');
  t.equal((await probe(n1, tok1)).status, 200, 'node 1: not before its cache TTL');
  (n1.config.common as { ip_lists_cache_ttl: number }).ip_lists_cache_ttl = 0;
  t.equal((await probe(n1, tok1)).status, 403, 'node 1: once its TTL is over, the changed version makes it reload');
  t.equal((await call(n1, 'DELETE', `${L}/2/203.0.113.0%2F24`, { token: tok1 })).status, 200, 'node 1 deletes it');
  t.equal((await probe(n2, tok2)).status, 200, 'node 2 (TTL 0) sees the delete at its next request');
});

t.test('dumpdata and loaddata', async (t) => {
  const B = await accountsApp();
  t.teardown(() => B.close());
  const dump = async (app: AccountsApp, q = '') => {
    const r = await call(app, 'GET', `/api/v2/dumpdata?output-data=1${q}`);
    t.equal(r.status, 200);
    return r.body;
  };
  const load = (app: AccountsApp, data: unknown, q = '') => call(app, 'POST', `/api/v2/loaddata${q}`, { payload: data });

  const full = await dump(A);
  t.ok(Array.isArray(full.ip_lists), 'ip_lists is part of a full dump');
  const a = await dump(A, '&scopes=ip_lists');
  t.same(Object.keys(a).sort(), ['ip_lists', 'version']);
  t.ok(a.ip_lists.length > 3000);
  const types = a.ip_lists.map((e: { type: number }) => e.type);
  t.same(types, [...types].sort(), 'ordered by list type');
  t.match(
    a.ip_lists.find((e: { ipornet: string; type: number }) => e.type === 2 && e.ipornet === '172.16.0.0/12'),
    { mode: 2, protocols: 0, description: '', created_at: Number, updated_at: Number },
  );

  B.events.length = 0;
  const r = await load(B, a);
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.same(await dump(B, '&scopes=ip_lists'), a, 'a second dump is identical');
  t.equal(
    B.events.filter((e) => e.object_type === 'ip_list_entry' && e.action === 'add').length,
    a.ip_lists.length,
    'provider events for the restored entries',
  );

  // the restore is enforced at once on the restoring node
  const common = B.config.common as { allow_list_status: boolean };
  t.teardown(() => void (common.allow_list_status = false));
  common.allow_list_status = true;
  t.equal((await call(B, 'GET', '/api/v2/version', { ip: '10.8.1.1' })).status, 200);
  t.equal((await call(B, 'GET', '/api/v2/version', { ip: '10.50.0.1' })).status, 403);
  common.allow_list_status = false;
  t.equal((await call(B, 'GET', '/api/v2/version', { ip: '172.17.0.1' })).status, 403, 'restored deny entry');

  // modes: 1 keeps existing entries, 0 overwrites them
  t.equal((await call(B, 'PUT', `${L}/1/10.8.0.0%2F16`, { payload: { description: 'changed on B', protocols: 8 } })).status, 200);
  const one = {
    ip_lists: [
      { ipornet: '10.8.0.0/16', type: 1, description: 'from backup', protocols: 8 },
      { ipornet: '10.200.0.0/16', type: 3 },
    ],
  };
  t.equal((await load(B, one, '?mode=1')).status, 200);
  t.equal((await call(B, 'GET', `${L}/1/10.8.0.0%2F16`)).body.description, 'changed on B', 'mode 1 keeps the existing entry');
  t.equal((await call(B, 'GET', `${L}/3/10.200.0.0%2F16`)).status, 200, 'mode 1 adds new entries');
  t.equal((await load(B, one, '?mode=0')).status, 200);
  t.equal((await call(B, 'GET', `${L}/1/10.8.0.0%2F16`)).body.description, 'from backup', 'mode 0 overwrites');

  // validated whole before anything is written
  const refuse = async (items: unknown[], msg: RegExp) => {
    const res = await load(B, { ip_lists: [{ ipornet: '10.201.0.0/16', type: 3 }, ...items] });
    t.equal(res.status, 400, JSON.stringify(items));
    t.match(res.body, { message: msg });
  };
  await refuse([{ ipornet: 'bad', type: 1 }], /ip_lists\[1\].*"ipornet"/);
  await refuse([{ ipornet: '10.0.0.9' }], /ip_lists\[1\].*"type" is required/);
  await refuse([{ ipornet: '10.0.0.9', type: 4 }], /ip_lists\[1\].*"type"/);
  await refuse([{ ipornet: '10.0.0.9', type: 1, mode: 2 }], /ip_lists\[1\].*"mode"/);
  await refuse([{ ipornet: '10.0.0.9', type: 3, protocols: 99 }], /ip_lists\[1\].*"protocols"/);
  await refuse(
    [
      { ipornet: '10.201.0.0', type: 3 },
      { ipornet: '10.201.0.0/16', type: 3 },
    ],
    /appears more than once/,
  );
  t.equal((await call(B, 'GET', `${L}/3/10.201.0.0%2F16`)).status, 404, 'nothing written by refused restores');
  t.equal(
    (
      await load(B, {
        ip_lists: [
          { ipornet: '10.201.0.0/16', type: 3 },
          { ipornet: '10.201.0.0/16', type: 2, mode: 2 },
        ],
      })
    ).status,
    200,
    'one network on two lists',
  );
});
