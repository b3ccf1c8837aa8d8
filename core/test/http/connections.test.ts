import t from 'tap';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { once } from 'node:events';
import { addUser, eventually, fileApp, listen, PASSWORD, slowUpload, socketDownload, updateUser } from '../helpers/user-files.js';
import { processTag } from '../../src/sdk/process-tag.js';

interface ConnStatus {
  username: string;
  connection_id: string;
  protocol: string;
  remote_address: string;
  connection_time: number;
  last_activity: number;
  client_version: string;
  command: string;
  node: string;
  active_transfers: { operation_type: string; path: string; size: number; start_time: number }[];
}

const ta = await fileApp({ config: { common: { instance_id: 'node-a' } } });
t.teardown(() => ta.close());
const base = await listen(ta);
const admin = await ta.adminToken();
// (no assertion at the top level: tap would end the root test early)
if ((await ta.inject('POST', '/api/v2/roles', { token: admin, payload: { name: 'team-x' } })).statusCode !== 201) throw new Error('role not created');
const home = await addUser(ta, { username: 'uma' });
await addUser(ta, { username: 'rita', role: 'team-x' });
const token = await ta.userToken('uma', PASSWORD);
const conns = async (tok = admin): Promise<ConnStatus[]> => {
  const r = await ta.inject('GET', '/api/v2/connections', { token: tok });
  if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${r.payload}`);
  return JSON.parse(r.payload) as ConnStatus[];
};
const withTransfer = (op: string) => async () => (await conns()).filter((c) => c.active_transfers.some((x) => x.operation_type === op));
const uploadsTmp = () => readdirSync(path.join(ta.dataDir, 'uploads-tmp', processTag()));

t.test('an upload in progress is a connection with an active transfer', async (t) => {
  t.same(await conns(), []);
  const up = slowUpload(base, token, '/slow.bin', { chunks: 20, size: 64 * 1024, delayMs: 30 });
  const list = await eventually(withTransfer('upload'), (l) => l.length === 1 && l[0]!.active_transfers[0]!.size > 0);
  t.equal(list.length, 1);
  const c = list[0]!;
  t.match(c, {
    username: 'uma',
    connection_id: /^[0-9a-f]{24}$/,
    protocol: 'HTTP',
    remote_address: '127.0.0.1',
    node: 'node-a',
    command: /POST upload \/slow\.bin/,
    client_version: String,
  });
  t.ok(c.connection_time <= Date.now() && c.last_activity >= c.connection_time);
  t.match(c.active_transfers, [{ operation_type: 'upload', path: '/slow.bin', size: Number, start_time: Number }]);
  const r = await up.result;
  t.equal(r.status, 201, r.body ?? '');
  t.same(await eventually(conns, (l) => l.length === 0), [], 'the connection ends with its last request');
});

t.test('closing a connection interrupts a running upload: no file is left', async (t) => {
  const up = slowUpload(base, token, '/cut.bin', { chunks: 200, size: 64 * 1024, delayMs: 20 });
  const [c] = await eventually(withTransfer('upload'), (l) => l.length === 1);
  const del = await ta.inject('DELETE', `/api/v2/connections/${c!.connection_id}`, { token: admin });
  t.equal(del.statusCode, 200, del.payload);
  t.match(JSON.parse(del.payload), { message: String });
  const r = await up.result;
  t.ok(r.error || (r.status ?? 0) >= 400, `the client sees the exchange fail (${r.status ?? r.error?.message})`);
  t.ok(up.sent() < 200 * 64 * 1024, 'stopped before the end');
  await eventually(
    () => uploadsTmp(),
    (l) => l.length === 0,
  );
  t.notOk(existsSync(path.join(home, 'cut.bin')), 'no visible file');
  t.same(uploadsTmp(), [], 'no temporary file');
  t.equal((await ta.inject('DELETE', `/api/v2/connections/${c!.connection_id}`, { token: admin })).statusCode, 404);
  t.same(await eventually(conns, (l) => l.length === 0), []);
});

t.test('closing a connection interrupts a running download', async (t) => {
  writeFileSync(path.join(home, 'big.bin'), Buffer.alloc(4 * 1024 * 1024, 9));
  await updateUser(ta, 'uma', { download_bandwidth: 256 });
  const dl = socketDownload(base, token, '/big.bin');
  const [c] = await eventually(withTransfer('download'), (l) => l.length === 1 && l[0]!.active_transfers[0]!.size > 0);
  t.match(c!.active_transfers, [{ operation_type: 'download', path: '/big.bin' }]);
  t.equal((await ta.inject('DELETE', `/api/v2/connections/${c!.connection_id}`, { token: admin })).statusCode, 200);
  const r = await dl.result;
  t.notOk(r.complete, 'the download was cut');
  t.ok(dl.received() < 4 * 1024 * 1024, `received ${dl.received()} bytes`);
  t.same(await eventually(conns, (l) => l.length === 0), []);
  await updateUser(ta, 'uma', { download_bandwidth: 0 });
});

t.test('a client that disconnects mid-upload leaves no file', async (t) => {
  for (const contentLength of [true, false]) {
    const name = `gone-${contentLength}.bin`;
    const up = slowUpload(base, token, `/${name}`, { chunks: 100, size: 64 * 1024, delayMs: 10, contentLength });
    await eventually(withTransfer('upload'), (l) => l.length === 1 && l[0]!.active_transfers[0]!.size > 256 * 1024);
    up.cut();
    await up.result;
    await eventually(conns, (l) => l.length === 0);
    await eventually(
      () => uploadsTmp(),
      (l) => l.length === 0,
    );
    t.notOk(existsSync(path.join(home, name)), `${contentLength ? 'Content-Length' : 'chunked'}: no visible file`);
    t.same(uploadsTmp(), [], 'no temporary file');
  }
  t.same(await conns(), []);
});

t.test('a client that disconnects mid-multipart-upload leaves no file', async (t) => {
  const boundary = '----ferry-cut';
  for (let round = 0; round < 5; round++) {
    const name = `mp-gone-${round}.bin`;
    const req = http.request(`${base}/api/v2/user/files?path=/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': 64 * 1024 * 1024 },
    });
    req.on('error', () => undefined);
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      res.resume();
    });
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="filenames"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, round);
    for (let i = 0; i < 16; i++) if (!req.write(chunk)) await once(req, 'drain');
    await eventually(withTransfer('upload'), (l) => l.length === 1 && l[0]!.active_transfers[0]!.size > 256 * 1024);
    req.destroy();
    await eventually(conns, (l) => l.length === 0);
    await eventually(
      () => uploadsTmp(),
      (l) => l.length === 0,
    );
    t.same(uploadsTmp(), [], `round ${round}: no temporary file`);
    t.notOk(existsSync(path.join(home, name)), `round ${round}: no visible file`);
    t.notOk(answered, `round ${round}: no answer to a client that went away`);
  }
  t.same(await conns(), []);
});

t.test('admin permissions and role scoping', async (t) => {
  const mk = async (username: string, permissions: string[], roleName = '') => {
    const r = await ta.inject('POST', '/api/v2/admins', {
      token: admin,
      payload: { username, password: 'pass-word-1', permissions, role: roleName },
    });
    t.equal(r.statusCode, 201, r.payload);
    return ta.adminToken(username, 'pass-word-1');
  };
  const viewer = await mk('viewer', ['view_conns']);
  const nobody = await mk('nobody', ['view_users']);
  const teamAdmin = await mk('team-admin', ['view_conns', 'close_conns'], 'team-x');
  t.equal((await ta.inject('GET', '/api/v2/connections', { token: nobody })).statusCode, 403);
  t.equal((await ta.inject('GET', '/api/v2/connections', { token })).statusCode, 401, 'user tokens are not admin credentials');
  const rita = await ta.userToken('rita', PASSWORD);
  const u1 = slowUpload(base, token, '/r1.bin', { chunks: 30, size: 16 * 1024, delayMs: 30 });
  const u2 = slowUpload(base, rita, '/r2.bin', { chunks: 30, size: 16 * 1024, delayMs: 30 });
  await eventually(withTransfer('upload'), (l) => l.length === 2);
  t.same((await conns(viewer)).map((c) => c.username).sort(), ['rita', 'uma']);
  const scoped = await conns(teamAdmin);
  t.same(
    scoped.map((c) => c.username),
    ['rita'],
    'a role admin sees only its role',
  );
  const umaConn = (await conns()).find((c) => c.username === 'uma')!;
  t.equal((await ta.inject('DELETE', `/api/v2/connections/${umaConn.connection_id}`, { token: viewer })).statusCode, 403, 'close_conns needed');
  t.equal((await ta.inject('DELETE', `/api/v2/connections/${umaConn.connection_id}`, { token: teamAdmin })).statusCode, 404, 'other roles are invisible');
  t.equal((await ta.inject('DELETE', '/api/v2/connections/unknown-id', { token: admin })).statusCode, 404);
  t.equal((await u1.result).status, 201);
  t.equal((await u2.result).status, 201);
});

t.test('max_sessions per user: a second session is refused with 429, the same session may transfer in parallel', async (t) => {
  await addUser(ta, { username: 'solo', max_sessions: 1 });
  const t1 = await ta.userToken('solo', PASSWORD);
  const t2 = await ta.userToken('solo', PASSWORD);
  const up = slowUpload(base, t1, '/s1.bin', { chunks: 20, size: 16 * 1024, delayMs: 30 });
  await eventually(withTransfer('upload'), (l) => l.some((c) => c.username === 'solo'));
  const other = await ta.inject('GET', '/api/v2/user/dirs?path=/', { token: t2 });
  t.equal(other.statusCode, 429, other.payload);
  t.match(JSON.parse(other.payload), { message: /too many open sessions/, error: 'Too Many Requests' });
  const same = await ta.inject('GET', '/api/v2/user/dirs?path=/', { token: t1 });
  t.equal(same.statusCode, 200, 'same session');
  t.equal((await up.result).status, 201);
  await eventually(conns, (l) => l.length === 0);
  t.equal((await ta.inject('GET', '/api/v2/user/dirs?path=/', { token: t2 })).statusCode, 200, 'free again');
});

t.test('transfer limits per host and in total', async (t) => {
  for (const [key, limit] of [
    ['max_per_host_transfers', /from 127\.0\.0\.1 \(maximum 1\)/],
    ['max_total_transfers', /on this server \(maximum 1\)/],
  ] as const) {
    const app = await fileApp({ config: { common: { [key]: 1, ...(key === 'max_total_transfers' ? { max_per_host_transfers: 0 } : {}) } } });
    await addUser(app, { username: 'x' });
    const url = await listen(app);
    const tok = await app.userToken('x', PASSWORD);
    const up = slowUpload(url, tok, '/a.bin', { chunks: 40, size: 16 * 1024, delayMs: 30 });
    // the session is listed before its upload holds a transfer slot: wait for the transfer itself
    const adminTok = await app.adminToken();
    const listed = await eventually(
      async () => JSON.parse((await app.inject('GET', '/api/v2/connections', { token: adminTok })).payload) as ConnStatus[],
      (l) => l.length === 1 && l[0]!.active_transfers.length === 1 && l[0]!.active_transfers[0]!.size > 0,
    );
    t.equal(listed[0]?.active_transfers.length, 1, 'the slow upload holds the only slot');
    const second = await app.inject('POST', '/api/v2/user/files/upload?path=/b.bin', { token: tok, payload: 'x' });
    t.equal(second.statusCode, 429, `${key}: ${second.payload}`);
    t.match(JSON.parse(second.payload).message, limit);
    t.equal((await app.inject('GET', '/api/v2/user/dirs?path=/', { token: tok })).statusCode, 200, 'non-transfer requests still work');
    t.equal((await up.result).status, 201);
    t.equal((await app.inject('POST', '/api/v2/user/files/upload?path=/b.bin', { token: tok, payload: 'x' })).statusCode, 201, 'allowed once the first ended');
    await app.close();
  }
});
