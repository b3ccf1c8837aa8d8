import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { addFolder, addUser, fileApp, updateUser } from '../helpers/user-files.js';
import { FileSessions } from '../../src/vfs/file-sessions.service.js';
import type { FileSession } from '../../src/sdk/file-session.js';

// What a front-end may ask about the storage behind a session's paths (sdk/file-session.ts):
// the quota a path counts against (SFTP's statvfs) and whether a copy stays on the storage (copy-data).
const ta = await fileApp();
t.teardown(() => ta.close());
const sessions = ta.app.container.resolve(FileSessions);
let keys = 0;
const open = (username: string): Promise<FileSession> => sessions.open({ username, ip: '127.0.0.1', protocol: 'SFTP', sessionKey: `space-${++keys}` });

await addFolder(ta, 'own');
await addFolder(ta, 'shared');
const home = await addUser(ta, {
  username: 'sp',
  quota_size: 5000,
  quota_files: 10,
  folders: [
    { name: 'own', virtual_path: '/own', quota_size: 300, quota_files: 0 },
    { name: 'shared', virtual_path: '/shared' },
  ],
});
await addUser(ta, { username: 'free' });

t.test('quota: the user limits and stored usage; a folder with its own quota answers for its paths', async (t) => {
  await updateUser(ta, 'sp', { used_quota_size: 1200, used_quota_files: 3 });
  const s = await open('sp');
  t.teardown(() => s.close());
  const user = { size: { limit: 5000, used: 1200 }, files: { limit: 10, used: 3 } };
  t.same(await s.quota('/'), user);
  t.same(await s.quota('/dir/a.txt'), user, 'any path of the home');
  t.same(await s.quota('/shared/x'), user, 'a folder without its own quota counts against the user quota');
  t.same(await s.quota('/own/x'), { size: { limit: 300, used: 0 }, files: { limit: 0, used: 0 } }, "the folder's own quota (0: no limit)");
  const f = await open('free');
  t.teardown(() => f.close());
  t.same(await f.quota('/'), { size: { limit: 0, used: 0 }, files: { limit: 0, used: 0 } }, 'no quota: limits 0');
});

t.test('copiesOnServer: within a local mount yes; between two local folders the bytes stream', async (t) => {
  writeFileSync(path.join(home, 'a.txt'), 'data');
  const s = await open('sp');
  t.teardown(() => s.close());
  t.equal(await s.copiesOnServer('/a.txt', '/b.txt'), true, 'fs-local copies server side');
  t.equal(await s.copiesOnServer('/own/a', '/own/b'), true, 'within one folder too');
  t.equal(await s.copiesOnServer('/a.txt', '/own/a.txt'), false, 'home to folder: streamed');
  await s.copy('/a.txt', '/b.txt');
  t.equal(await s.stat('/b.txt').then((i) => i.size), 4, 'copy() does what it said');
});
