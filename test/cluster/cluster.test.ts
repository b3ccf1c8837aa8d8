/**
 * Three `ferry serve` processes on loopback sharing one fresh PostgreSQL
 * database: what one node changes holds on the others (docs/cluster.md).
 * PostgreSQL only (FERRY_TEST_DB=postgres; CI's PostgreSQL pass): nodes do
 * not share a SQLite database.
 */
import t from 'tap';
import crypto from 'node:crypto';
import http from 'node:http';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createPgDatabase, usePostgres } from '@ferry/core/testing';
import { adminToken, call, eventually, ROOT, startNode, userToken, writeNodeConfig, type Node } from './helpers/cluster.js';
import { connectLine } from '../../examples/service-line/client.js';

if (!usePostgres()) {
  t.plan(0, 'cluster nodes share a PostgreSQL database: run with FERRY_TEST_DB=postgres');
  process.exit(0);
}

// the whole suite is bounded (most of it waits for the scheduler's next minute): a hang fails it here
t.setTimeout(180_000);

const IP_TTL = 1; // common.ip_lists_cache_ttl of the nodes, seconds
const PASSWORD = 'cluster-user-password-1';

// --- a real HTTP server in this process receiving the scheduled rule's calls (the HTTP action's target)
const hookCalls: string[] = [];
const hook = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    hookCalls.push(body);
    res.end('ok');
  });
});
await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => hook.close(() => resolve())));
const hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/tick`;

// --- the cluster
const dir = t.testdir({});
const homes = path.join(dir, 'homes');
const shared = path.join(dir, 'shared');
mkdirSync(homes);
mkdirSync(shared);
const db = await createPgDatabase();
t.teardown(() => db.drop());
const nodes: Node[] = [];
t.teardown(async () => {
  for (const n of nodes) await n.kill('SIGKILL');
});
// the example service plugin (examples/service-line, a TCP front-end on a free port) runs on every node
const LINE_PLUGIN = 'ferry-plugin-service-line';
const config = (name: string) => {
  const file = writeNodeConfig(dir, name, {
    databaseUrl: db.url,
    common: [`ip_lists_cache_ttl: ${IP_TTL}`, `shared_dir: "${shared}"`],
    binding: ['upload_chunk_size: 1', 'client_ip_proxy_header: X-Forwarded-For', 'proxy_allowed: [127.0.0.1]'],
    plugins: ['@ferry/fs-local', '@ferry/action-http', LINE_PLUGIN],
    yaml: ['defender:', '  enabled: true', '  threshold: 4', '  score_invalid: 2', 'log:', '  level: debug'].join('\n'),
  });
  // loaded by folder (it is not installed under node_modules)
  const entry = `  - name: "${LINE_PLUGIN}"\n`;
  writeFileSync(file, readFileSync(file, 'utf8').replace(entry, `${entry}    path: "${path.join(ROOT, 'examples/service-line')}"\n`));
  return file;
};
// the first node creates the schema; the others start together on it
nodes.push(await startNode('n1', config('n1')));
nodes.push(...(await Promise.all(['n2', 'n3'].map((n) => startNode(n, config(n))))));
const [A, B, C] = nodes.map((n) => n.url) as [string, string, string];
const nameOf = (base: string) => nodes.find((n) => n.url === base)?.name ?? base;
const admin = await adminToken(A);
// the test itself (127.0.0.1 without X-Forwarded-For) is on the defender's safe list: refusals it
// provokes on purpose (deleted keys, revoked tokens) must not ban it
{
  const r = await call(A, 'POST', '/api/v2/iplists/2', { token: admin, body: { ipornet: '127.0.0.1/32', mode: 1, description: 'the test' } });
  if (r.status !== 201) throw new Error(`safe list: ${r.status} ${r.text}`);
}

async function ok(base: string, method: string, route: string, body?: unknown, expect = [200, 201]) {
  const r = await call(base, method, route, { token: admin, body });
  if (!expect.includes(r.status)) throw new Error(`${method} ${route} on ${base}: ${r.status} ${r.text}`);
  return r;
}
async function createUser(username: string, extra: Record<string, unknown> = {}) {
  await ok(A, 'POST', '/api/v2/users', {
    username,
    password: PASSWORD,
    status: 1,
    home_dir: path.join(homes, username),
    permissions: { '/': ['*'] },
    ...extra,
  });
}
async function tokenOf(base: string, username: string): Promise<string> {
  const r = await userToken(base, username, PASSWORD);
  if (r.status !== 200) throw new Error(`token of ${username}: ${r.status} ${r.text}`);
  return r.json<{ access_token: string }>().access_token;
}

// --- a rule every minute, created first so that its tick comes while the other checks run
await ok(B, 'POST', '/api/v2/eventactions', {
  name: 'tick-hook',
  type: 1,
  options: { http_config: { endpoint: hookUrl, method: 'POST', timeout: 10, body: 'tick' } },
});
await ok(B, 'POST', '/api/v2/eventrules', {
  name: 'every-minute',
  status: 1,
  trigger: 3,
  conditions: { schedules: [{ minute: '*', hour: '*', day_of_week: '*', day_of_month: '*', month: '*' }] },
  actions: [{ name: 'tick-hook', order: 1 }],
});

t.test('token revocation: a logout on one node holds on the others', async (t) => {
  const tok = await adminToken(A);
  for (const n of [B, C]) t.equal((await call(n, 'GET', '/api/v2/admins', { token: tok })).status, 200, 'the token works on every node');
  t.equal((await call(A, 'GET', '/api/v2/logout', { token: tok })).status, 200);
  for (const n of [A, B, C]) t.equal((await call(n, 'GET', '/api/v2/admins', { token: tok })).status, 401, `refused on ${nameOf(n)}`);

  await createUser('tess');
  const ut = await tokenOf(B, 'tess');
  t.equal((await call(C, 'GET', '/api/v2/user/dirs', { token: ut })).status, 200);
  t.equal((await call(C, 'GET', '/api/v2/user/logout', { token: ut })).status, 200);
  for (const n of [A, B]) t.equal((await call(n, 'GET', '/api/v2/user/dirs', { token: ut })).status, 401, `user token refused on ${nameOf(n)}`);
});

t.test('API keys: created on one node, usable on another; deleted, refused everywhere', async (t) => {
  await createUser('kim', { filters: { allow_api_key_auth: true } });
  const created = (await ok(A, 'POST', '/api/v2/apikeys', { name: 'kim-key', scope: 2, user: 'kim' })).json<{ key: string }>();
  const id = (await ok(A, 'GET', '/api/v2/apikeys')).json<{ id: string; name: string }[]>().find((k) => k.name === 'kim-key')!.id;
  for (const n of [A, B, C]) t.equal((await call(n, 'GET', '/api/v2/user/dirs', { apiKey: created.key })).status, 200, `key works on ${nameOf(n)}`);
  await ok(C, 'DELETE', `/api/v2/apikeys/${id}`);
  for (const n of [A, B, C]) t.equal((await call(n, 'GET', '/api/v2/user/dirs', { apiKey: created.key })).status, 401, `key refused on ${nameOf(n)}`);
});

t.test('a disabled account is refused on every node', async (t) => {
  await createUser('dora');
  const tokens = await Promise.all([A, B, C].map((n) => tokenOf(n, 'dora')));
  const u = (await ok(B, 'GET', '/api/v2/users/dora')).json();
  delete u.password;
  await ok(B, 'PUT', '/api/v2/users/dora', { ...u, status: 0 });
  for (const [i, n] of [A, B, C].entries()) {
    const r = await call(n, 'GET', '/api/v2/user/dirs', { token: tokens[i] });
    t.ok([401, 403].includes(r.status), `the token of node ${i + 1} refused on ${nameOf(n)} (${r.status})`);
    t.equal((await userToken(n, 'dora', PASSWORD)).status, 401, `no new token on ${nameOf(n)}`);
  }
});

t.test('defender: a ban made on one node holds on the others; lifted on one, lifted everywhere', async (t) => {
  const ip = '198.51.100.7';
  // unknown account: score_invalid 2 each, threshold 4
  for (let i = 0; i < 2; i++) await userToken(A, 'nobody', 'wrong-password-1', ip);
  for (const n of [A, B, C]) t.equal((await userToken(n, 'tess', PASSWORD, ip)).status, 403, `banned on ${nameOf(n)}`);
  t.equal((await userToken(B, 'tess', PASSWORD, '198.51.100.8')).status, 200, 'another address is not');
  const hosts = (await ok(C, 'GET', '/api/v2/defender/hosts')).json<{ id: string; ip: string }[]>();
  const host = hosts.find((h) => h.ip === ip);
  t.ok(host, 'listed on another node');
  await ok(C, 'DELETE', `/api/v2/defender/hosts/${host!.id}`);
  for (const n of [A, B, C]) t.equal((await userToken(n, 'tess', PASSWORD, ip)).status, 200, `let in again on ${nameOf(n)}`);
});

t.test('IP lists: a change made on one node reaches the others within ip_lists_cache_ttl', async (t) => {
  const ip = '203.0.113.9';
  for (const n of [A, B, C]) t.equal((await userToken(n, 'tess', PASSWORD, ip)).status, 200, `let in on ${nameOf(n)} before`);
  await ok(A, 'POST', '/api/v2/iplists/2', { ipornet: `${ip}/32`, mode: 2, description: 'cluster test' });
  t.equal((await userToken(A, 'tess', PASSWORD, ip)).status, 403, 'at once on the node that made the change');
  // the bound is checked: within the TTL (plus a margin for a busy machine), never later
  for (const n of [B, C])
    t.ok(await eventually(async () => (await userToken(n, 'tess', PASSWORD, ip)).status === 403, IP_TTL * 1000 + 3000), `denied on ${nameOf(n)}`);
  await ok(B, 'DELETE', `/api/v2/iplists/2/${encodeURIComponent(`${ip}/32`)}`);
  for (const n of [A, C])
    t.ok(await eventually(async () => (await userToken(n, 'tess', PASSWORD, ip)).status === 200, IP_TTL * 1000 + 3000), `let in again on ${nameOf(n)}`);
});

/** Sizes and count of the regular files under `root`. */
function diskUsage(root: string): { size: number; files: number } {
  let size = 0;
  let files = 0;
  for (const e of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    size += statSync(path.join(e.parentPath, e.name)).size;
    files++;
  }
  return { size, files };
}

t.test('quota counters: concurrent uploads, overwrites and deletes of one user through three nodes lose no update', async (t) => {
  await createUser('quinn');
  const tokens = await Promise.all([A, B, C].map((n) => tokenOf(n, 'quinn')));
  const ops: Promise<void>[] = [];
  for (let i = 0; i < 30; i++) {
    const node = i % 3;
    const base = [A, B, C][node]!;
    const name = `/f${i % 12}.bin`; // twelve names: uploads overwrite each other across nodes
    ops.push(
      (async () => {
        const r = await call(base, 'POST', `/api/v2/user/files/upload?path=${encodeURIComponent(name)}`, {
          token: tokens[node],
          raw: crypto.randomBytes(1000 + i * 517),
        });
        t.equal(r.status, 201, `upload ${i} on node ${node + 1}: ${r.text}`);
        if (i % 5 === 4) {
          const d = await call(base, 'DELETE', `/api/v2/user/files?path=${encodeURIComponent(name)}`, { token: tokens[(node + 1) % 3] });
          t.ok([200, 404].includes(d.status), `delete ${i}: ${d.text}`);
        }
      })(),
    );
  }
  await Promise.all(ops);
  const disk = diskUsage(path.join(homes, 'quinn'));
  const u = (await ok(C, 'GET', '/api/v2/users/quinn')).json<{ used_quota_size: number; used_quota_files: number }>();
  t.same({ size: u.used_quota_size, files: u.used_quota_files }, disk, 'the counters equal the disk');
});

t.test('connections: listed by the node holding them; closed from another node', async (t) => {
  await createUser('cole');
  const tok = await tokenOf(A, 'cole');
  // an upload on node 1 that sends a first part, then waits
  const req = http.request(`${A}/api/v2/user/files/upload?path=/slow.bin`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tok}`, 'content-length': '1000000' },
  });
  const answered = new Promise<number | string>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (err) => resolve(err.message));
  });
  req.write(Buffer.alloc(1000, 1));
  type Conn = { connection_id: string; username: string; node: string; active_transfers: unknown[] };
  const listed = async (base: string) => (await ok(base, 'GET', '/api/v2/connections')).json<Conn[]>().filter((c) => c.username === 'cole');
  t.ok(await eventually(async () => (await listed(A)).some((c) => c.active_transfers.length === 1), 10_000), 'node 1 lists the upload');
  const [conn] = await listed(A);
  t.equal(conn!.node, 'n1', 'with its node');
  t.same(await listed(B), [], 'node 2 does not hold it');
  t.same(await listed(C), [], 'node 3 does not hold it');

  const del = await call(B, 'DELETE', `/api/v2/connections/${conn!.connection_id}`, { token: admin });
  t.equal(del.status, 200, `closed through node 2: ${del.text}`);
  const end = await answered;
  t.not(end, 201, `the upload stopped (${end})`);
  t.same(await listed(A), [], 'gone from node 1');
  t.same(readdirSync(path.join(homes, 'cole')), [], 'no file left');
  t.equal((await call(C, 'DELETE', `/api/v2/connections/${conn!.connection_id}`, { token: admin })).status, 404, 'a closed connection is unknown');
  t.equal((await call(C, 'DELETE', '/api/v2/connections/none-such', { token: admin })).status, 404, 'an unknown id is 404 on any node');
  req.destroy();
});

t.test("a service plugin's connection held by one node is closed from another", async (t) => {
  await createUser('lena');
  const status = (await ok(B, 'GET', '/api/v2/status')).json<{ line: { is_active: boolean; bindings: { address: string; port: number }[] } }>();
  t.equal(status.line.is_active, true, 'the example service runs on node 2');
  const client = await connectLine(status.line.bindings[0]!.port);
  t.teardown(() => client.close());
  t.same(await client.send(`user lena ${PASSWORD}`), ['OK logged in'], 'logged in on node 2');
  type Conn = { connection_id: string; username: string; node: string; protocol: string };
  const listed = async (base: string) => (await ok(base, 'GET', '/api/v2/connections')).json<Conn[]>().filter((c) => c.username === 'lena');
  const [conn] = await listed(B);
  t.match(conn, { node: 'n2', protocol: 'FTP' }, 'node 2 lists it with its node and protocol');
  t.same(await listed(A), [], 'node 1 does not hold it');
  const del = await call(A, 'DELETE', `/api/v2/connections/${conn!.connection_id}`, { token: admin });
  t.equal(del.status, 200, `closed through node 1: ${del.text}`);
  await client.closed;
  t.pass('node 2 closed the client socket');
  t.same(await listed(B), [], 'gone from node 2');
  t.equal((await call(C, 'DELETE', `/api/v2/connections/${conn!.connection_id}`, { token: admin })).status, 404, 'then unknown on any node');
});

t.test('shares: created on one node, used on the others; a TUS upload continued on another node', async (t) => {
  await createUser('sam');
  const tok = await tokenOf(A, 'sam');
  await call(A, 'POST', '/api/v2/user/dirs?path=/drop', { token: tok });
  await call(A, 'POST', '/api/v2/user/files/upload?path=/drop/hello.txt', { token: tok, raw: 'hello from node 1' });
  const created = await call(A, 'POST', '/api/v2/user/shares', { token: tok, body: { name: 'drop', scope: 3, paths: ['/drop'], password: 'share-pw-1' } });
  t.equal(created.status, 201, created.text);
  const id = created.headers.get('x-object-id')!;
  const basic = { username: 'x', password: 'share-pw-1' };
  const got = await call(B, 'GET', `/api/v2/shares/${id}/files?path=hello.txt`, { basic });
  t.equal(got.status, 200, got.text);
  t.equal(got.text, 'hello from node 1', 'downloaded through node 2');

  // TUS: created on node 1, first chunk on node 2, offset read and last chunk on node 3
  const body = crypto.randomBytes(300_000);
  const auth = 'Basic ' + Buffer.from('x:share-pw-1').toString('base64');
  const meta = `share_id ${Buffer.from(id).toString('base64')},path ${Buffer.from('big.bin').toString('base64')}`;
  const tus = { authorization: auth, 'tus-resumable': '1.0.0' };
  const c = await call(A, 'POST', '/api/v2/shares-chunked-uploads', { headers: { ...tus, 'upload-length': String(body.length), 'upload-metadata': meta } });
  t.equal(c.status, 201, c.text);
  const loc = new URL(c.headers.get('location')!, A).pathname;
  const patch = (base: string, from: number, to: number) =>
    call(base, 'PATCH', loc, {
      headers: { ...tus, 'upload-offset': String(from), 'content-type': 'application/offset+octet-stream' },
      raw: body.subarray(from, to),
    });
  const p1 = await patch(B, 0, 100_000);
  t.equal(p1.status, 204, `first chunk on node 2: ${p1.text}`);
  t.equal(p1.headers.get('upload-offset'), '100000');
  const head = await call(C, 'HEAD', loc, { headers: tus });
  t.equal(head.status, 200, 'node 3 knows the upload');
  t.equal(head.headers.get('upload-offset'), '100000', 'and its offset');
  t.equal((await patch(A, 0, 100_000)).status, 409, 'a stale offset is a conflict on any node');
  const p2 = await patch(C, 100_000, body.length);
  t.equal(p2.status, 204, `last chunk on node 3: ${p2.text}`);
  t.same(readFileSync(path.join(homes, 'sam', 'drop', 'big.bin')), body, 'the file is complete');
  t.equal((await call(B, 'HEAD', loc, { headers: tus })).status, 404, 'the finished upload is forgotten everywhere');
  const u = (await ok(B, 'GET', '/api/v2/users/sam')).json<{ used_quota_size: number; used_quota_files: number }>();
  t.same({ size: u.used_quota_size, files: u.used_quota_files }, diskUsage(path.join(homes, 'sam')), 'counters equal the disk');
});

t.test('a scheduled rule runs once per tick, on one node', async (t) => {
  // the first minute boundary after the rule was created
  t.ok(await eventually(async () => hookCalls.length > 0, 70_000, 250), 'the rule ran');
  // every node has evaluated that minute: it logs either that it runs the rule or that another node claimed it
  const minuteOf = (n: Node) => {
    const due = [...n.output().matchAll(/"rule":"every-minute","minute":"([^"]+)","msg":"scheduled rule (due|claimed by another node)"/g)];
    return due.map((m) => ({ minute: m[1]!, ran: m[2] === 'due' }));
  };
  t.ok(await eventually(async () => nodes.every((n) => minuteOf(n).length > 0), 20_000), 'every node evaluated the tick');
  const first = minuteOf(nodes[0]!)[0]!.minute;
  const runners = nodes.filter((n) => minuteOf(n).some((x) => x.minute === first && x.ran));
  t.equal(runners.length, 1, `one node ran the minute ${first}`);
  const ticks = new Set(
    nodes.flatMap((n) =>
      minuteOf(n)
        .filter((x) => x.ran)
        .map((x) => x.minute),
    ),
  );
  t.equal(hookCalls.length, ticks.size, 'one call per minute run');
});
