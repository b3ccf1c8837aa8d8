import 'reflect-metadata';
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AccountCache } from '../../src/accounts/account-cache.js';
import { addFolder, addUser, fileApp, PASSWORD, updateUser } from '../helpers/user-files.js';

// Accounts from memory on one node (SQLite: the only node; PostgreSQL: the node that made the change):
// the request after a change's answer sees it, with the user held in memory before (docs/cluster.md,
// "Accounts held in memory"). The cluster case is test/cluster/account-cache.test.ts.
const ta = await fileApp();
t.teardown(() => ta.close());
const admin = await ta.adminToken();
const cache = ta.app.container.resolve(AccountCache);
const get = (token: string, p: string) => ta.inject('GET', `/api/v2/user/files?path=${encodeURIComponent(p)}`, { token });

async function heldUser(username: string, extra: Record<string, unknown> = {}) {
  const home = await addUser(ta, { username, ...extra });
  writeFileSync(path.join(home, 'a.txt'), 'home file');
  const token = await ta.userToken(username, PASSWORD);
  const r = await get(token, '/a.txt');
  if (r.statusCode !== 200) throw new Error(`${username}: ${r.statusCode} ${r.payload}`);
  return token;
}

t.test('a served user is held in memory', async (t) => {
  await heldUser('held');
  t.ok(cache.user('held'), 'held after one request');
});

t.test('disabled, permission taken, deleted: the next request refused', async (t) => {
  const token = await heldUser('l-dis');
  await updateUser(ta, 'l-dis', { status: 0 });
  t.equal((await get(token, '/a.txt')).statusCode, 401, 'disabled');
  const t2 = await heldUser('l-perm');
  await updateUser(ta, 'l-perm', { permissions: { '/': ['list'] } });
  t.equal((await get(t2, '/a.txt')).statusCode, 403, 'no download permission');
  const t3 = await heldUser('l-del');
  t.equal((await ta.inject('DELETE', '/api/v2/users/l-del', { token: admin })).statusCode, 200);
  t.equal((await get(t3, '/a.txt')).statusCode, 401, 'deleted');
});

t.test('a logout: the token refused at once', async (t) => {
  const token = await heldUser('l-out');
  t.equal((await ta.inject('GET', '/api/v2/user/logout', { token })).statusCode, 200);
  t.equal((await get(token, '/a.txt')).statusCode, 401);
});

t.test('a password change: the old one refused, the new one taken', async (t) => {
  await heldUser('l-pwd');
  await updateUser(ta, 'l-pwd', { password: 'user-password-2' });
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'l-pwd', password: PASSWORD } })).statusCode, 401);
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'l-pwd', password: 'user-password-2' } })).statusCode, 200);
});

t.test("a group's and a folder's change: applied by the next request", async (t) => {
  const one = await addFolder(ta, 'l-one');
  const two = path.join(ta.dataDir, 'folders', 'l-two');
  mkdirSync(two, { recursive: true });
  writeFileSync(path.join(one, 'f.txt'), 'one');
  writeFileSync(path.join(two, 'f.txt'), 'two');
  const g = await ta.inject('POST', '/api/v2/groups', {
    token: admin,
    payload: { name: 'l-group', virtual_folders: [{ name: 'l-one', virtual_path: '/team' }] },
  });
  t.equal(g.statusCode, 201, g.payload);
  const token = await heldUser('l-grp', { groups: [{ name: 'l-group', type: 2 }] });
  t.equal((await get(token, '/team/f.txt')).payload, 'one');
  const f = JSON.parse((await ta.inject('GET', '/api/v2/folders/l-one', { token: admin })).payload) as Record<string, unknown>;
  t.equal((await ta.inject('PUT', '/api/v2/folders/l-one', { token: admin, payload: { ...f, mapped_path: two } })).statusCode, 200);
  t.equal((await get(token, '/team/f.txt')).payload, 'two', "the folder's new path");
  const group = JSON.parse((await ta.inject('GET', '/api/v2/groups/l-group', { token: admin })).payload) as Record<string, unknown>;
  t.equal((await ta.inject('PUT', '/api/v2/groups/l-group', { token: admin, payload: { ...group, virtual_folders: [] } })).statusCode, 200);
  t.equal((await get(token, '/team/f.txt')).statusCode, 404, "the group's folder gone");
});
