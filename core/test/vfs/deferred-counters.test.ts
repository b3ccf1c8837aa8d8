import t from 'tap';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { addFolder, addUser, eventually, fileApp, folderRow, userRow } from '../helpers/user-files.js';
import { FileSessions } from '../../src/vfs/file-sessions.service.js';
import { UPLOAD_JOURNAL_DIR } from '../../src/vfs/upload-journal.js';
import { isFsError } from '../../src/fs/fs-error.js';
import type { FileSession } from '../../src/sdk/file-session.js';

// SessionWriteOptions.deferCounters (SFTP): the quota and transfer counters of uploads sent one
// after the other are stored together shortly after, with the upload journal kept until then;
// quotas are enforced meanwhile; quota() and close() store what is pending; uploads into the
// user's storage, a folder counted in the user quota and a folder with its own quota are each
// counted where they belong.
const ta = await fileApp();
t.teardown(() => ta.close());
const sessions = ta.app.container.resolve(FileSessions);
let keys = 0;
const open = (username: string): Promise<FileSession> => sessions.open({ username, ip: '127.0.0.1', protocol: 'SFTP', sessionKey: `dc-${++keys}` });

await addFolder(ta, 'dc-own');
await addFolder(ta, 'dc-shared');
await addUser(ta, {
  username: 'dc',
  quota_files: 6,
  folders: [
    { name: 'dc-own', virtual_path: '/own', quota_size: 0, quota_files: 2 },
    { name: 'dc-shared', virtual_path: '/shared' },
  ],
});

async function put(s: FileSession, vpath: string, data: string, deferCounters = true): Promise<void> {
  const w = await s.openWrite(vpath, { deferCounters });
  w.stream.end(Buffer.from(data));
  await w.done;
}

const usage = async (username: string) => {
  const u = await userRow(ta, username);
  return { size: Number(u.used_quota_size), files: Number(u.used_quota_files), up: Number(u.used_upload_data_transfer) };
};
const folderUsage = async (name: string) => {
  const f = await folderRow(ta, name);
  return { size: Number(f.used_quota_size), files: Number(f.used_quota_files) };
};
const journalEntries = () => {
  try {
    return readdirSync(path.join(ta.dataDir, UPLOAD_JOURNAL_DIR), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  } catch {
    return 0;
  }
};

t.test('stored together after the uploads; quotas enforced before they are stored; quota() stores them first', async (t) => {
  const s = await open('dc');
  t.teardown(() => s.close());
  await put(s, '/a.txt', 'aaaa');
  await put(s, '/b.txt', 'bbbbbb');
  await put(s, '/shared/c.txt', 'cc');
  await put(s, '/own/d.txt', 'ddd');
  t.ok(journalEntries() > 0, 'the upload journal keeps the uploads whose counters are not stored');
  const quota = await s.quota('/');
  t.same(quota.files, { limit: 6, used: 3 }, 'quota() answers with the deferred uploads stored');
  t.same(quota.size.used, 12, 'bytes of the home and of the folder counted in the user quota');
  t.same(await usage('dc'), { size: 12, files: 3, up: 15 }, 'user: usage of its storage and the shared folder, every byte uploaded');
  t.same(await folderUsage('dc-shared'), { size: 2, files: 1 }, 'the shared folder counts its own file too');
  t.same(await folderUsage('dc-own'), { size: 3, files: 1 }, 'the folder with its own quota counts its file, the user does not');

  // the quota sees the files not stored yet: 3 stored + 3 deferred = 6, the 7th is refused
  for (const n of ['e', 'f', 'g']) await put(s, `/${n}.txt`, n);
  const refused = await put(s, '/h.txt', 'h').then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(isFsError(refused) && refused.code === 'QUOTA', 'the file quota counts the deferred uploads', { found: refused });
  await put(s, '/own/i.txt', 'i');
  const folderRefused = await put(s, '/own/j.txt', 'j').then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(isFsError(folderRefused) && folderRefused.code === 'QUOTA', "and so does the folder's own quota", { found: folderRefused });

  const stored = await eventually(
    async () => ({ user: await usage('dc'), own: await folderUsage('dc-own') }),
    (u) => u.user.up === 19 && u.own.files === 2,
  );
  t.same(stored, { user: { size: 15, files: 6, up: 19 }, own: { size: 4, files: 2 } }, 'stored shortly after, without a call');
  await eventually(journalEntries, (n) => n === 0, 5000);
  t.equal(journalEntries(), 0, 'the journal entries go once the counters are stored (and linger no longer)');
});

t.test('close() stores the pending counters; uploads without the option are stored before done resolves', async (t) => {
  await addUser(ta, { username: 'dc2' });
  const s = await open('dc2');
  await put(s, '/x.txt', 'xx', false);
  t.same(await usage('dc2'), { size: 2, files: 1, up: 2 }, 'stored before done resolved');
  await put(s, '/y.txt', 'yyy');
  await s.close();
  t.same(await usage('dc2'), { size: 5, files: 2, up: 5 }, 'stored by close()');
});
