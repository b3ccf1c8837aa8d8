import 'reflect-metadata';
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FileSessions } from '../../src/vfs/file-sessions.service.js';
import { addFolder, addUser, fileApp, PASSWORD, updateUser } from '../helpers/user-files.js';

// A bearer request of the file API reads its user once: token validation reads the
// token's revocation, the user and its mappings in one statement, and the request's
// file session starts from that row instead of reading the user again.
const ta = await fileApp();
t.teardown(() => ta.close());
let reads = 0;
const read = FileSessions.prototype.effectiveUser;
FileSessions.prototype.effectiveUser = async function (this: FileSessions, username: string) {
  reads++;
  return read.call(this, username);
};
t.teardown(() => {
  FileSessions.prototype.effectiveUser = read;
});

const home = await addUser(ta, { username: 'alice' });
writeFileSync(path.join(home, 'a.txt'), 'home file');
const folderDir = await addFolder(ta, 'shared');
mkdirSync(folderDir, { recursive: true });
writeFileSync(path.join(folderDir, 'f.txt'), 'folder file');
await updateUser(ta, 'alice', { virtual_folders: [{ name: 'shared', virtual_path: '/vf' }] });
const token = await ta.userToken('alice', PASSWORD);

t.test('a bearer download: the user read once, its virtual folders there', async (t) => {
  reads = 0;
  const r = await ta.inject('GET', '/api/v2/user/files?path=/a.txt', { token });
  t.equal(r.statusCode, 200);
  t.equal(r.payload, 'home file');
  const f = await ta.inject('GET', '/api/v2/user/files?path=/vf/f.txt', { token });
  t.equal(f.statusCode, 200, f.payload);
  t.equal(f.payload, 'folder file', 'the folder mapping came with the token statement');
  t.equal(reads, 0, 'no second read of the user');
});

t.test('a change made since the token was issued is seen by the next request', async (t) => {
  await updateUser(ta, 'alice', { virtual_folders: [] });
  const f = await ta.inject('GET', '/api/v2/user/files?path=/vf/f.txt', { token });
  t.equal(f.statusCode, 404, 'the folder is gone at once');
  t.equal(reads, 0);
});

t.test("a public share (no user token) still opens its owner's files", async (t) => {
  const s = await ta.inject('POST', '/api/v2/user/shares', { token, payload: { name: 's', scope: 1, paths: ['/a.txt'] } });
  t.equal(s.statusCode, 201, s.payload);
  const d = await ta.inject('GET', `/api/v2/shares/${s.headers['x-object-id'] as string}?compress=false`);
  t.equal(d.statusCode, 200, d.payload);
  t.equal(d.payload, 'home file');
});
