import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { addUser, fileApp } from '../helpers/user-files.js';
import { FileSessions } from '../../src/vfs/file-sessions.service.js';
import { FsErrorCode, isFsError } from '../../src/fs/fs-error.js';
import type { FileSession, SessionWrite } from '../../src/sdk/file-session.js';

// SessionWriteOptions.early: openWrite resolves once the checks that need no storage pass (write
// access, file patterns, the upload and the overwrite permission of the parent); what needs the
// storage rejects `done` and stores nothing. When those checks do not pass, or with an offset, it
// waits and rejects as without the option.
const ta = await fileApp();
t.teardown(() => ta.close());
const sessions = ta.app.container.resolve(FileSessions);
let keys = 0;
const open = (username: string): Promise<FileSession> => sessions.open({ username, ip: '127.0.0.1', protocol: 'SFTP', sessionKey: `ew-${++keys}` });

const home = await addUser(ta, { username: 'ew' });
await addUser(ta, {
  username: 'ew-limited',
  permissions: { '/': ['list', 'download', 'upload'] },
  filters: { file_patterns: [{ path: '/', denied_patterns: ['*.exe'] }] },
});

/** The refusal `p` rejects with (null when it resolves). */
const refusal = <T>(p: Promise<T>) =>
  p.then(
    () => null,
    (err: unknown) => err,
  );
/** Whether openWrite resolved (true) or rejected (its error). */
const opened = (p: Promise<SessionWrite>) =>
  p.then(
    (w) => (w.done.catch(() => undefined), true as const),
    (err: unknown) => err,
  );

t.test('a refusal of the storage rejects done, not openWrite; nothing is stored', async (t) => {
  const s = await open('ew');
  t.teardown(() => s.close());
  t.ok(isFsError(await refusal(s.openWrite('/missing/a.txt')), FsErrorCode.NotFound), 'without early: openWrite rejects');
  const w = await s.openWrite('/missing/a.txt', { early: true });
  w.stream.end(Buffer.from('data'));
  t.ok(isFsError(await refusal(w.done), FsErrorCode.NotFound), 'with early: done rejects with the same refusal');
  t.notOk(existsSync(path.join(home, 'missing')), 'nothing is stored');

  const dir = await s.openWrite('/d/x', { mkdirParents: true });
  dir.stream.end('x');
  await dir.done;
  const onDir = await s.openWrite('/d', { early: true });
  onDir.stream.end(Buffer.from('data'));
  t.ok(isFsError(await refusal(onDir.done), FsErrorCode.IsDirectory), 'a directory in the place of the file: done rejects');
  t.same(readdirSync(path.join(home, 'd')), ['x'], 'the directory stays as it was');
});

t.test('a successful early write stores the bytes written before the backend was open', async (t) => {
  const s = await open('ew');
  t.teardown(() => s.close());
  const w = await s.openWrite('/early.txt', { early: true });
  w.stream.write(Buffer.from('written '));
  w.stream.end(Buffer.from('early'));
  t.same(await w.done, { size: 13 });
  t.equal(readFileSync(path.join(home, 'early.txt'), 'utf8'), 'written early');
});

t.test('checks that need no storage are made before openWrite resolves; without both permissions it waits', async (t) => {
  const s = await open('ew-limited');
  t.teardown(() => s.close());
  t.match(await opened(s.openWrite('/bad.exe', { early: true })), { message: /file patterns/ }, 'a denied name: openWrite rejects');
  t.ok(
    isFsError(await opened(s.openWrite('/missing/a.txt', { early: true })), FsErrorCode.NotFound),
    'no overwrite permission: openWrite waits for the storage',
  );
  const w = await s.openWrite('/kept.txt');
  w.stream.end('kept');
  await w.done;
  t.match(await opened(s.openWrite('/kept.txt', { early: true })), { message: /overwrite/ }, 'and an existing file is refused by openWrite');
});

t.test('a write at an offset waits for its checks', async (t) => {
  const s = await open('ew');
  t.teardown(() => s.close());
  const w = await s.openWrite('/four.txt');
  w.stream.end('four');
  await w.done;
  const past = await opened(s.openWrite('/four.txt', { early: true, offset: 100 }));
  t.not(past, true, 'an offset past the end of the file: openWrite rejects');
  t.match(past, { message: /100/ });
});

t.test('an upload whose batch opened its parent as a directory does not look at the parent again', async (t) => {
  // the local backend as the app loaded it (the same module): its stat() calls are counted
  const specifier: string = '@ferry/fs-local';
  const { LocalFs } = (await import(specifier)) as { LocalFs: { prototype: { stat(p: string, o?: unknown): Promise<unknown> } } };
  const stats: string[] = [];
  const stat = LocalFs.prototype.stat;
  LocalFs.prototype.stat = function (this: unknown, p: string, o?: unknown) {
    stats.push(p);
    return stat.call(this, p, o);
  };
  t.teardown(() => {
    LocalFs.prototype.stat = stat;
  });
  const s = await open('ew');
  t.teardown(() => s.close());
  await s.mkdir('/sub');
  stats.length = 0;
  const w = await s.openWrite('/sub/new.txt');
  w.stream.end('new');
  await w.done;
  t.same(stats, ['/sub/new.txt'], 'only the destination is looked up');
  t.equal(readFileSync(path.join(home, 'sub', 'new.txt'), 'utf8'), 'new');
});
