// Two nodes on one database (SQLite file or PostgreSQL): a connection held by
// one node is closed through the other (docs/cluster.md). The three-process
// version is test/cluster.
import t from 'tap';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Setting } from '../../src/data/entities/index.js';
import { addUser, eventually, fileApp, PASSWORD, slowUpload } from '../helpers/user-files.js';
import { FORWARDED_HEADER } from '../../src/http/routes/connections.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-conn-nodes-'));
const shared = { data_provider: { name: 'ferry.db' } };
const n1 = await fileApp({ dataDir: dir, config: { ...shared, common: { instance_id: 'node-1' } } });
const n2 = await fileApp({
  dataDir: dir,
  config: { ...shared, common: { instance_id: 'node-2' } },
  ...(n1.databaseUrl ? { databaseUrl: n1.databaseUrl } : {}),
});
t.teardown(async () => {
  await n2.app.stop();
  await n1.close();
  rmSync(dir, { recursive: true, force: true });
});
await n1.app.start();
await n2.app.start();
const base1 = `http://127.0.0.1:${n1.server.info.port}`;
const admin = await n2.adminToken();
if ((await n2.inject('POST', '/api/v2/roles', { token: admin, payload: { name: 'team-y' } })).statusCode !== 201) throw new Error('role not created');
if (
  (await n2.inject('POST', '/api/v2/admins', { token: admin, payload: { username: 'teamadm', password: 'pass-word-1', permissions: ['*'], role: 'team-y' } }))
    .statusCode !== 201
)
  throw new Error('admin not created');
const home = await addUser(n1, { username: 'nina' });
const userToken = await n1.userToken('nina', PASSWORD);

type Conn = { connection_id: string; node: string };
const list = async (ta: typeof n1): Promise<Conn[]> => JSON.parse((await ta.inject('GET', '/api/v2/connections', { token: admin })).payload) as Conn[];

t.test('each node registers the URL of its REST API', async (t) => {
  const rows = await n1.app.orm.em.fork().find(Setting, { key: { $like: 'node:%' } }, { orderBy: { key: 'asc' } });
  t.same(
    rows.map((r) => [r.key, JSON.parse(r.value) as unknown]),
    [
      ['node:node-1', { url: base1 }],
      ['node:node-2', { url: `http://127.0.0.1:${n2.server.info.port}` }],
    ],
  );
});

t.test('DELETE /connections/{id} on a node that does not hold the connection closes it on the node that does', async (t) => {
  const up = slowUpload(base1, userToken, '/held.bin', { chunks: 1000, size: 1024, delayMs: 20 });
  const [conn] = await eventually(
    () => list(n1),
    (l) => l.length === 1,
  );
  t.equal(conn?.node, 'node-1');
  t.same(await list(n2), [], 'node 2 lists only its own connections');

  const teamAdmin = await n2.adminToken('teamadm', 'pass-word-1');
  t.equal(
    (await n2.inject('DELETE', `/api/v2/connections/${conn!.connection_id}`, { token: teamAdmin })).statusCode,
    404,
    'an admin of another role: 404 there too',
  );
  const forwarded = await n2.inject('DELETE', `/api/v2/connections/${conn!.connection_id}`, { token: admin, headers: { [FORWARDED_HEADER]: 'node-1' } });
  t.equal(forwarded.statusCode, 404, 'a forwarded request is answered from the node itself, never forwarded again');
  t.equal((await list(n1)).length, 1, 'still open');

  const r = await n2.inject('DELETE', `/api/v2/connections/${conn!.connection_id}`, { token: admin });
  t.equal(r.statusCode, 200, r.payload);
  const end = await up.result;
  t.not(end.status, 201, 'the upload was stopped');
  t.same(
    await eventually(
      () => list(n1),
      (l) => l.length === 0,
    ),
    [],
  );
  t.equal((await n2.inject('DELETE', `/api/v2/connections/${conn!.connection_id}`, { token: admin })).statusCode, 404, 'then unknown everywhere');
  t.notOk(existsSync(path.join(home, 'held.bin')), 'no file');
});

t.test('a node that stops leaves the list', async (t) => {
  await n2.app.stop();
  const keys = (await n1.app.orm.em.fork().find(Setting, { key: { $like: 'node:%' } })).map((r) => r.key);
  t.same(keys, ['node:node-1']);
});
