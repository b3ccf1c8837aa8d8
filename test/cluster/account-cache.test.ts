/**
 * Accounts from memory, coherent across nodes (docs/cluster.md): two real
 * `ferry serve` processes on one fresh PostgreSQL database. Node B keeps the
 * users it served in memory (accounts/account-cache.ts); a change made
 * through node A reaches B as a PostgreSQL notification (LISTEN/NOTIFY,
 * data/change-feed.ts), so B refuses or applies it within WITHIN_MS of A's
 * answer: a bounded wait, not a measure of speed. Killing B's listening
 * connection (pg_terminate_backend) makes B read accounts from the database
 * until it listens again. PostgreSQL only.
 */
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createPgDatabase, usePostgres } from '@ferry/core/testing';
import { adminToken, call, eventually, startNode, userToken, writeNodeConfig, type Node } from './helpers/cluster.js';

if (!usePostgres()) {
  t.plan(0, 'cluster nodes share a PostgreSQL database: run with FERRY_TEST_DB=postgres');
  process.exit(0);
}
t.setTimeout(150_000);

/** How long after A's answer B may still act on what it held: the promise of docs/cluster.md. */
const WITHIN_MS = 100;
const PASSWORD = 'cache-user-password-1';

const dir = t.testdir({});
const homes = path.join(dir, 'homes');
mkdirSync(homes);
const db = await createPgDatabase();
t.teardown(() => db.drop());
const nodes: Node[] = [];
t.teardown(async () => {
  for (const n of nodes) await n.kill('SIGKILL');
});
const config = (name: string) => writeNodeConfig(dir, name, { databaseUrl: db.url, plugins: ['@ferry/fs-local'] });
nodes.push(await startNode('na', config('na')));
// B listens again DEAF_MS after its listening connection is lost: the window in which it must read from the database
const DEAF_MS = 4000;
process.env.FERRY_CHANGES_RETRY_MS = String(DEAF_MS);
nodes.push(await startNode('nb', config('nb')));
delete process.env.FERRY_CHANGES_RETRY_MS;
const [A, B] = nodes.map((n) => n.url) as [string, string];
const admin = await adminToken(A);

const pg = (await import('pg')).default;
const sql = new pg.Client({ connectionString: db.url });
await sql.connect();
t.teardown(() => sql.end());

async function ok(method: string, route: string, body?: unknown) {
  const r = await call(A, method, route, { token: admin, body });
  if (![200, 201].includes(r.status)) throw new Error(`${method} ${route}: ${r.status} ${r.text}`);
  return r;
}
async function createUser(username: string, extra: Record<string, unknown> = {}) {
  const home = path.join(homes, username);
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'a.txt'), 'home file');
  await ok('POST', '/api/v2/users', { username, password: PASSWORD, status: 1, home_dir: home, permissions: { '/': ['*'] }, ...extra });
}
/** The user as the admin API answers it, ready to be sent back changed. */
async function userBody(username: string): Promise<Record<string, unknown>> {
  const u = (await ok('GET', `/api/v2/users/${username}`)).json<Record<string, unknown>>();
  delete u.password;
  return u;
}
async function tokenOn(base: string, username: string, password = PASSWORD): Promise<string> {
  const r = await userToken(base, username, password);
  if (r.status !== 200) throw new Error(`token of ${username}: ${r.status} ${r.text}`);
  return r.json<{ access_token: string }>().access_token;
}
const download = (base: string, token: string, p: string) => call(base, 'GET', `/api/v2/user/files?path=${encodeURIComponent(p)}`, { token });
/** Whether `probe` holds on B within WITHIN_MS of now (polled without pause; the first poll always runs). */
const onBWithin = (probe: () => Promise<boolean>) => eventually(probe, WITHIN_MS, 1);

t.test('a user disabled on A is refused by B', async (t) => {
  await createUser('c-dis');
  const token = await tokenOn(B, 'c-dis');
  t.equal((await download(B, token, '/a.txt')).status, 200, 'B serves the user (and holds it now)');
  t.equal((await download(B, token, '/a.txt')).status, 200);
  await ok('PUT', '/api/v2/users/c-dis', { ...(await userBody('c-dis')), status: 0 });
  t.ok(await onBWithin(async () => (await download(B, token, '/a.txt')).status === 401), 'refused by B');
  t.equal((await userToken(B, 'c-dis', PASSWORD)).status, 401, 'no new token on B');
});

t.test('a password changed on A: B refuses the old one and takes the new one', async (t) => {
  await createUser('c-pwd');
  t.equal((await userToken(B, 'c-pwd', PASSWORD)).status, 200, 'B logs the user in');
  t.equal((await userToken(B, 'c-pwd', PASSWORD)).status, 200, 'again (from memory)');
  await ok('PUT', '/api/v2/users/c-pwd', { ...(await userBody('c-pwd')), password: 'cache-user-password-2' });
  t.ok(await onBWithin(async () => (await userToken(B, 'c-pwd', PASSWORD)).status === 401), 'the old password refused by B');
  t.equal((await userToken(B, 'c-pwd', 'cache-user-password-2')).status, 200, 'the new one taken');
});

t.test('a permission taken away on A is refused by B', async (t) => {
  await createUser('c-perm');
  const token = await tokenOn(B, 'c-perm');
  t.equal((await download(B, token, '/a.txt')).status, 200);
  await ok('PUT', '/api/v2/users/c-perm', { ...(await userBody('c-perm')), permissions: { '/': ['list'] } });
  t.ok(await onBWithin(async () => (await download(B, token, '/a.txt')).status === 403), 'the download refused by B');
  t.equal((await call(B, 'GET', '/api/v2/user/dirs?path=/', { token })).status, 200, 'listing still allowed');
});

t.test("a group's change on A is applied by B", async (t) => {
  const fdir = path.join(dir, 'group-folder');
  mkdirSync(fdir);
  writeFileSync(path.join(fdir, 'g.txt'), 'group file');
  await ok('POST', '/api/v2/folders', { name: 'c-gfolder', mapped_path: fdir });
  await ok('POST', '/api/v2/groups', { name: 'c-group', virtual_folders: [{ name: 'c-gfolder', virtual_path: '/team' }] });
  await createUser('c-grp', { groups: [{ name: 'c-group', type: 2 }] });
  const token = await tokenOn(B, 'c-grp');
  t.equal((await download(B, token, '/team/g.txt')).text, 'group file', "B serves the group's folder");
  const g = (await ok('GET', '/api/v2/groups/c-group')).json<Record<string, unknown>>();
  await ok('PUT', '/api/v2/groups/c-group', { ...g, virtual_folders: [] });
  t.ok(await onBWithin(async () => (await download(B, token, '/team/g.txt')).status === 404), 'the folder gone on B');
});

t.test("a folder's change on A is applied by B", async (t) => {
  const [one, two] = ['one', 'two'].map((n) => path.join(dir, `folder-${n}`));
  for (const d of [one, two]) {
    mkdirSync(d!);
    writeFileSync(path.join(d!, 'f.txt'), `in ${path.basename(d!)}`);
  }
  await ok('POST', '/api/v2/folders', { name: 'c-folder', mapped_path: one });
  await createUser('c-fld', { virtual_folders: [{ name: 'c-folder', virtual_path: '/vf' }] });
  const token = await tokenOn(B, 'c-fld');
  t.equal((await download(B, token, '/vf/f.txt')).text, 'in folder-one');
  const f = (await ok('GET', '/api/v2/folders/c-folder')).json<Record<string, unknown>>();
  await ok('PUT', '/api/v2/folders/c-folder', { ...f, mapped_path: two });
  t.ok(await onBWithin(async () => (await download(B, token, '/vf/f.txt')).text === 'in folder-two'), "B reads the folder's new path");
});

t.test('a user deleted on A is refused by B', async (t) => {
  await createUser('c-del');
  const token = await tokenOn(B, 'c-del');
  t.equal((await download(B, token, '/a.txt')).status, 200);
  await ok('DELETE', '/api/v2/users/c-del');
  t.ok(await onBWithin(async () => (await download(B, token, '/a.txt')).status === 401), 'refused by B');
});

/** Process ids of the nodes' listening connections. */
async function listeners(): Promise<number[]> {
  const r = await sql.query<{ pid: number }>("select pid from pg_stat_activity where datname = current_database() and application_name like 'ferry-changes%'");
  return r.rows.map((x) => x.pid);
}
async function listenerOf(node: string): Promise<number | undefined> {
  const r = await sql.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and application_name = $1', [
    `ferry-changes ${node}`,
  ]);
  return r.rows[0]?.pid;
}

t.test('without its listening connection B reads accounts from the database until it is back', async (t) => {
  t.equal((await listeners()).length, 2, 'each node listens on a connection of its own');
  await createUser('c-kill');
  const token = await tokenOn(B, 'c-kill');
  t.equal((await download(B, token, '/a.txt')).status, 200, 'B holds the user');
  const pid = await listenerOf('nb');
  t.ok(pid, "B's listening connection");
  const killedAt = Date.now();
  await sql.query('select pg_terminate_backend($1)', [pid]);
  // a change no node is told of: only a read from the database sees it, before B listens again (DEAF_MS)
  await sql.query('update users set status = 0 where username = $1', ['c-kill']);
  t.ok(await eventually(async () => (await download(B, token, '/a.txt')).status === 401, DEAF_MS / 2, 20), 'B read the change from the database');
  t.ok(Date.now() - killedAt < DEAF_MS && !(await listenerOf('nb')), 'while it did not listen');
  t.ok(await eventually(async () => ((await listenerOf('nb')) ?? pid) !== pid, 30_000), 'B listens again (a new connection)');
  // listening again, B holds users again and is told of changes
  await sql.query('update users set status = 1 where username = $1', ['c-kill']);
  t.ok(await eventually(async () => (await download(B, token, '/a.txt')).status === 200, 10_000, 20), 'B read the user again');
  await ok('PUT', '/api/v2/users/c-kill', { ...(await userBody('c-kill')), status: 0 });
  t.ok(await onBWithin(async () => (await download(B, token, '/a.txt')).status === 401), 'a change through A reaches B again');
});
