import t, { type Test } from 'tap';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { text } from 'node:stream/consumers';
import { addUser, eventually, fileApp, userRow } from '../helpers/user-files.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { FsEvent } from '../../src/events/event-types.js';
import { FileSessions } from '../../src/vfs/file-sessions.service.js';
import { ConnectionManager } from '../../src/vfs/connection-manager.js';
import { isFsError } from '../../src/fs/fs-error.js';
import type { FileSession, SessionWrite } from '../../src/sdk/file-session.js';
import type { Protocol } from '../../src/sdk/protocols.js';

// The session a front-end holds (sdk/file-session.ts), through FileSessions.open as a service
// plugin would call it: stat, per-operation signals, writes at an offset and truncation, the
// web-client-only write-disabled option and the protocol of the connection.
const ta = await fileApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-crypt' }] });
t.teardown(() => ta.close());
const sessions = ta.app.container.resolve(FileSessions);
const connections = ta.app.container.resolve(ConnectionManager);
const events: FsEvent[] = [];
ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('fs', (e) => {
  events.push(e);
});

let keys = 0;
async function open(username: string, protocol: Protocol = 'SFTP', signal?: AbortSignal): Promise<FileSession> {
  return sessions.open({ username, ip: '127.0.0.1', protocol, sessionKey: `test-${++keys}`, clientVersion: 'test-client', signal });
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  return undefined;
}

async function expectCode(t: Test, p: Promise<unknown>, code: string, message: string, text?: RegExp): Promise<void> {
  const err = await rejection(p);
  t.ok(isFsError(err) && err.code === code, `${message} (${code})`, { found: err });
  if (text) t.match((err as Error)?.message, text, `${message}: the message says why`);
}

/** Writes `data` through openWrite and resolves with done. */
async function put(s: FileSession, vpath: string, data: string, o: Parameters<FileSession['openWrite']>[1] = {}): Promise<{ size: number }> {
  const w: SessionWrite = await s.openWrite(vpath, { size: Buffer.byteLength(data), ...o });
  w.stream.end(Buffer.from(data));
  return w.done;
}

async function read(s: FileSession, vpath: string, o: Parameters<FileSession['openRead']>[1] = {}): Promise<string> {
  const r = await s.openRead(vpath, o);
  const body = await text(r.stream);
  await r.done;
  return body;
}

const home = await addUser(ta, {
  username: 'fe',
  quota_size: 1000,
  permissions: { '/': ['*'], '/nolist': ['upload', 'overwrite'], '/dlonly': ['download'], '/noover': ['list', 'download', 'upload'] },
  filters: {
    file_patterns: [
      { path: '/', denied_patterns: ['*.exe'] },
      { path: '/secret', denied_patterns: ['*.key'], deny_policy: 1 },
    ],
  },
});
for (const d of ['nolist', 'dlonly', 'noover', 'secret']) mkdirSync(path.join(home, d));
for (const f of ['nolist/a.txt', 'dlonly/a.txt', 'secret/x.key', 'secret/ok.txt', 'run.exe']) writeFileSync(path.join(home, f), 'data');

t.test('the session a front-end holds: account, protocol, connection', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  t.same(s.account, { username: 'fe', homeDir: home });
  t.equal(s.protocol, 'SFTP');
  const conn = connections.get(s.connectionId);
  t.equal(conn?.protocol, 'SFTP', 'the connection shows the front-end protocol');
  t.equal(conn?.client_version, 'test-client');
  t.ok(s.hasPermission('/dlonly', 'download'));
  t.notOk(s.hasPermission('/dlonly', 'upload'));
  t.ok(s.hasPermission('/', 'upload'), '* grants everything');
});

t.test('denied_protocols is checked as the login protocol of the session', async (t) => {
  await addUser(ta, { username: 'nossh', filters: { denied_protocols: ['SSH'] } });
  t.match(await rejection(open('nossh', 'SFTP')), { message: /protocol SSH is not allowed/ }, 'SFTP is refused as SSH');
  t.match(await rejection(open('nossh', 'SCP')), { message: /protocol SSH is not allowed/ }, 'SCP too');
  const s = await open('nossh', 'HTTP');
  t.equal(s.protocol, 'HTTP', 'HTTP still opens');
  await s.close();
  await addUser(ta, { username: 'nohttp', filters: { denied_protocols: ['HTTP'] } });
  t.match(await rejection(open('nohttp', 'HTTPShare')), { message: /protocol HTTP is not allowed/ }, 'HTTPShare is checked as HTTP');
});

t.test('stat: list or download permission on the parent, patterns as elsewhere', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  const info = await s.stat('/dlonly/a.txt');
  t.match(info, { name: 'a.txt', path: '/dlonly/a.txt', isDir: false, size: 4 }, 'the download permission is enough');
  t.match(await s.stat('/nolist'), { name: 'nolist', path: '/nolist', isDir: true }, 'a directory');
  t.match(await s.stat('/'), { isDir: true }, 'the root');
  await expectCode(t, s.stat('/nolist/a.txt'), 'PERMISSION', 'neither list nor download on the parent', /"list" or "download"/);
  await expectCode(t, s.stat('/secret/x.key'), 'NOT_FOUND', 'a hidden name is missing');
  t.match(await s.stat('/secret/ok.txt'), { size: 4 }, 'a name the hidden pattern does not match');
  await expectCode(t, s.stat('/run.exe'), 'PERMISSION', 'a denied name is refused');
  await expectCode(t, s.stat('/none.txt'), 'NOT_FOUND', 'a missing file');
});

t.test("abort() fires the session's signal: what runs and what comes next stops", async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  t.notOk(s.signal.aborted);
  s.abort(new Error('the client went away'));
  t.ok(s.signal.aborted, 'the signal fired');
  t.match(s.signal.reason, { message: 'the client went away' }, 'with the reason given');
  await expectCode(t, s.stat('/dlonly/a.txt'), 'ABORTED', 'a later operation is refused');
  const other = await open('fe');
  t.teardown(() => other.close());
  t.notOk(other.signal.aborted, 'another session of the user is untouched');
  t.match(await other.stat('/dlonly/a.txt'), { size: 4 });
});

t.test('session keys: a stable hash of the credential, the same when asked again after many others', async (t) => {
  const first = FileSessions.sessionKey(['jwt:abc']);
  t.match(first, /^[0-9a-f]{32}$/, '32 hex digits');
  t.not(first, FileSessions.sessionKey(['jwt:abd']), 'another credential, another key');
  t.not(FileSessions.sessionKey(['a', 'b']), FileSessions.sessionKey(['ab']), 'parts are kept apart');
  for (let i = 0; i < 3000; i++) FileSessions.sessionKey([`jwt:${i}`]);
  t.equal(FileSessions.sessionKey(['jwt:abc']), first, 'the same key once forgotten and computed again');
});

t.test('every operation takes its own signal, linked to the session', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  const gone = new AbortController();
  gone.abort(new Error('the channel closed'));
  await expectCode(t, s.mkdir('/sig', false, { signal: gone.signal }), 'ABORTED', 'mkdir with an aborted signal');
  await expectCode(t, s.stat('/dlonly/a.txt', { signal: gone.signal }), 'ABORTED', 'stat');
  await expectCode(t, s.list('/', { signal: gone.signal }), 'ABORTED', 'list');
  await expectCode(t, s.openRead('/dlonly/a.txt', { signal: gone.signal }), 'ABORTED', 'openRead');
  await expectCode(t, put(s, '/sig.txt', 'x', { signal: gone.signal }), 'ABORTED', 'openWrite');
  t.notOk(s.signal.aborted, "the session's signal is untouched");
  await s.mkdir('/sig', false, { signal: new AbortController().signal });
  t.match(await s.stat('/sig'), { isDir: true }, 'the next operation works');

  // an operation's signal fired during a download stops that download only
  writeFileSync(path.join(home, 'big.bin'), Buffer.alloc(4 * 1024 * 1024, 1));
  const op = new AbortController();
  const r = await s.openRead('/big.bin', { signal: op.signal });
  const failed = new Promise<unknown>((resolve) => {
    r.stream.once('error', resolve);
    r.stream.once('end', () => resolve(undefined));
  });
  r.stream.once('data', () => op.abort(new Error('stop this one')));
  r.stream.resume();
  t.ok(await failed, 'the download fails once its signal fires');
  await r.done;
  t.equal(await read(s, '/dlonly/a.txt'), 'data', 'the session reads on');

  // and a listing holds its signal until its pages end
  const pages = await s.list('/', { signal: new AbortController().signal });
  const names: string[] = [];
  for await (const page of pages) names.push(...page.map((e) => e.name));
  t.ok(names.includes('dlonly') && !names.includes('x.key'), 'listed');
});

t.test('a listing stopped early (after its first page, or before any) closes its directory', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  mkdirSync(path.join(home, 'big'), { recursive: true });
  for (let i = 0; i < 2500; i++) writeFileSync(path.join(home, `big/f-${i}.txt`), '');
  const fds = () =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(path.join(home, 'big'));
      } catch {
        return false;
      }
    }).length;
  const before = fds();
  const first = await s.list('/big');
  t.ok(fds() > before, 'the listing holds the directory open while it runs');
  await first[Symbol.asyncIterator]().return?.(undefined);
  t.equal(fds(), before, 'return() before any page: closed');
  const second = await s.list('/big');
  for await (const page of second) {
    t.ok(page.length > 0 && page.length < 2500, 'a first page, not the whole directory');
    break;
  }
  t.equal(fds(), before, 'a break after the first page: closed');
});

t.test('openRead: ranges', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  writeFileSync(path.join(home, 'r.txt'), '0123456789');
  t.equal(await read(s, '/r.txt'), '0123456789', 'whole');
  t.equal(await read(s, '/r.txt', { start: 3, end: 5 }), '345', 'a range');
  t.equal(await read(s, '/r.txt', { start: 7 }), '789', 'from an offset');
  t.equal(await read(s, '/r.txt', { start: 10 }), '', 'at the end: nothing');
  await expectCode(t, s.openRead('/r.txt', { start: 5, end: 2 }), 'INVALID', 'an inverted range');
  await expectCode(t, s.openRead('/nolist/a.txt'), 'PERMISSION', 'download permission');
});

t.test('openRead with recycle: written with writeTo into lent buffers, whole and in ranges', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  // larger than a pooled buffer several times over, so buffers are read into again once given back
  const data = Buffer.alloc(3 * 1024 * 1024 + 7);
  for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
  writeFileSync(path.join(home, 'lent.bin'), data);
  const collect = async (o: Parameters<FileSession['openRead']>[1]): Promise<Buffer> => {
    const r = await s.openRead('/lent.bin', o);
    t.type(r.writeTo, 'function', 'a recycled read offers writeTo');
    const chunks: Buffer[] = [];
    // a destination that takes its time: the bytes must still be those of the file, not of a buffer read into again
    const dest = new Writable({ write: (c: Buffer, _e, cb) => void (chunks.push(Buffer.from(c)), setImmediate(cb)) });
    r.writeTo!(dest);
    await finished(dest);
    await r.done;
    return Buffer.concat(chunks);
  };
  t.ok((await collect({ recycle: true })).equals(data), 'the whole file, byte for byte');
  t.ok((await collect({ recycle: true, start: 1000, end: 2_500_000 })).equals(data.subarray(1000, 2_500_001)), 'a range, byte for byte');
  const plain = await s.openRead('/lent.bin');
  t.equal(plain.writeTo, undefined, 'without recycle: no writeTo (the stream is piped)');
  t.equal((await text(plain.stream)).length > 0, true);
  await plain.done;
  // the destination gone mid-way: the download stops and settles
  const r = await s.openRead('/lent.bin', { recycle: true });
  const dest = new Writable({ write: (_c, _e, cb) => void setImmediate(cb) });
  r.writeTo!(dest);
  dest.destroy();
  await r.done;
  t.ok(r.stream.destroyed, 'the download is stopped when the destination closes');
});

t.test('writes at an offset: resume, append, truncate, with quotas, permissions and events', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  const used = async () => Number((await userRow(ta, 'fe')).used_quota_size);
  const before = await used();
  t.same(await put(s, '/res.txt', 'hello'), { size: 5 }, 'a whole upload');
  t.equal(await used(), before + 5);

  events.length = 0;
  t.same(await put(s, '/res.txt', ' world', { offset: 5 }), { size: 11 }, 'a resume reports the final size');
  t.equal(readFileSync(path.join(home, 'res.txt'), 'utf8'), 'hello world');
  t.equal(await used(), before + 11, 'only the bytes added count against the quota');
  const ev = await eventually(
    () => events.find((e) => e.action === 'upload' && e.virtual_path === '/res.txt'),
    (e) => !!e,
  );
  t.equal(ev?.file_size, 11, 'the upload event carries the final size');
  t.equal(ev?.protocol, 'SFTP', 'and the protocol of the session');

  await put(s, '/res.txt', 'XY', { offset: 2 });
  t.equal(readFileSync(path.join(home, 'res.txt'), 'utf8'), 'heXYo world', 'a write inside the file keeps the rest');
  t.equal(await used(), before + 11, 'no byte added, nothing counted');

  await put(s, '/res.txt', 'p!', { offset: 3, truncate: true });
  t.equal(readFileSync(path.join(home, 'res.txt'), 'utf8'), 'heXp!', 'with truncate the file ends where the write ends');
  t.equal(await used(), before + 5, 'the cut bytes are credited');

  await put(s, '/res.txt', 'new', { offset: 0, truncate: true });
  t.equal(readFileSync(path.join(home, 'res.txt'), 'utf8'), 'new', 'offset 0 with truncate is a whole upload');
  t.equal(await used(), before + 3);

  await expectCode(t, put(s, '/res.txt', 'x', { offset: 4 }), 'INVALID', 'an offset past the end', /offset 4/);
  await expectCode(t, put(s, '/none.txt', 'x', { offset: 1 }), 'NOT_FOUND', 'a resume of a missing file');
  await expectCode(t, put(s, '/res.txt', 'x', { offset: -1 }), 'INVALID', 'a negative offset');
  writeFileSync(path.join(home, 'noover', 'f.txt'), 'abc');
  await expectCode(t, put(s, '/noover/f.txt', 'd', { offset: 3 }), 'PERMISSION', 'a resume needs the overwrite permission', /"overwrite"/);
  t.equal(readFileSync(path.join(home, 'noover', 'f.txt'), 'utf8'), 'abc', 'unchanged');

  // the quota refuses bytes past it; the file keeps what it had
  const q = 1000 - (await used());
  writeFileSync(path.join(home, 'full.txt'), 'abc');
  await expectCode(t, put(s, '/full.txt', 'x'.repeat(q + 1), { offset: 3 }), 'QUOTA', 'a resume past the size quota');
  t.equal(readFileSync(path.join(home, 'full.txt'), 'utf8'), 'abc', 'nothing written');
  t.equal(await used(), 1000 - q, 'the usage is as before');
});

t.test('an aborted resume keeps what was written and counts it', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  await put(s, '/ab.txt', 'start');
  const used0 = Number((await userRow(ta, 'fe')).used_quota_size);
  const w = await s.openWrite('/ab.txt', { offset: 5 });
  await new Promise<void>((resolve, reject) => w.stream.write(Buffer.from('-more'), (err) => (err ? reject(err) : resolve())));
  await eventually(
    () => readFileSync(path.join(home, 'ab.txt'), 'utf8'),
    (v) => v === 'start-more',
  );
  w.abort(new Error('client gone'));
  await expectCode(t, w.done, 'ABORTED', 'done rejects');
  t.equal(readFileSync(path.join(home, 'ab.txt'), 'utf8'), 'start-more', 'the written bytes stay');
  t.equal(Number((await userRow(ta, 'fe')).used_quota_size), used0 + 5, 'and count against the quota');
});

t.test('truncate: overwrite permission, quota, capability', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  await put(s, '/tr.txt', '0123456789');
  const used0 = Number((await userRow(ta, 'fe')).used_quota_size);
  await s.truncate('/tr.txt', 4);
  t.equal(readFileSync(path.join(home, 'tr.txt'), 'utf8'), '0123');
  t.equal(Number((await userRow(ta, 'fe')).used_quota_size), used0 - 6, 'credited');
  await s.truncate('/tr.txt', 6);
  t.equal(readFileSync(path.join(home, 'tr.txt')).length, 6, 'extended');
  t.equal(Number((await userRow(ta, 'fe')).used_quota_size), used0 - 4, 'counted');
  await expectCode(t, s.truncate('/tr.txt', 100_000), 'QUOTA', 'growing past the quota');
  await expectCode(t, s.truncate('/noover/f.txt', 0), 'PERMISSION', 'needs the overwrite permission');
  await expectCode(t, s.truncate('/sig', 0), 'IS_DIR', 'a directory');
  await expectCode(t, s.truncate('/none.txt', 0), 'NOT_FOUND', 'a missing file');
  await expectCode(t, s.truncate('/run.exe', 0), 'PERMISSION', 'a denied name');
});

t.test('a backend without the capabilities refuses, naming the operation and the backend', async (t) => {
  await addUser(ta, { username: 'enc', filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'enc-pass' } } } });
  const s = await open('enc');
  t.teardown(() => s.close());
  await put(s, '/e.txt', 'secret');
  t.equal(await read(s, '/e.txt'), 'secret', 'whole uploads work');
  await expectCode(
    t,
    put(s, '/e.txt', 'more', { offset: 6 }),
    'NOT_SUPPORTED',
    'a resume',
    /writing at an offset is not supported by the crypt storage backend/,
  );
  await expectCode(t, s.truncate('/e.txt', 1), 'NOT_SUPPORTED', 'a truncation', /truncating a file is not supported by the crypt storage backend/);
  t.equal(await read(s, '/e.txt'), 'secret', 'the file is unchanged');
});

t.test('write-disabled (a web client option) blocks the web front-ends only', async (t) => {
  await addUser(ta, { username: 'ro-web', filters: { web_client: ['write-disabled'] } });
  const web = await open('ro-web', 'HTTP');
  t.teardown(() => web.close());
  await expectCode(t, web.mkdir('/d'), 'PERMISSION', 'HTTP: mkdir', /write operations are disabled/);
  await expectCode(t, put(web, '/f.txt', 'x'), 'PERMISSION', 'HTTP: upload', /write operations are disabled/);
  const share = await open('ro-web', 'HTTPShare');
  t.teardown(() => share.close());
  await expectCode(t, share.mkdir('/d'), 'PERMISSION', 'HTTPShare: mkdir', /write operations are disabled/);
  for (const protocol of ['SFTP', 'FTP', 'DAV'] as const) {
    const s = await open('ro-web', protocol);
    await s.mkdir(`/${protocol}`);
    t.same(await put(s, `/${protocol}/f.txt`, 'x'), { size: 1 }, `${protocol}: writes as its permissions allow`);
    await s.truncate(`/${protocol}/f.txt`, 0);
    await s.removeDir(`/${protocol}`);
    await s.close();
  }
});

t.test('refusals name no REST route', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  const e1 = await rejection(s.removeFile('/sig'));
  t.match(e1, { code: 'IS_DIR', message: /is a directory: remove it as a directory/ });
  const e2 = await rejection(s.removeDir('/res.txt'));
  t.match(e2, { code: 'NOT_DIR', message: /is not a directory: remove it as a file/ });
  t.notMatch(String((e1 as Error).message) + String((e2 as Error).message), /\/user\/|DELETE|POST/);
});

t.test('openWrite refuses before any byte when a check fails', async (t) => {
  const s = await open('fe');
  t.teardown(() => s.close());
  await expectCode(t, s.openWrite('/run.exe'), 'PERMISSION', 'a denied name');
  await expectCode(t, s.openWrite('/missing-dir/f.txt'), 'NOT_FOUND', 'a missing parent');
  const w = await s.openWrite('/new-dir/f.txt', { mkdirParents: true });
  Readable.from([Buffer.from('a'), Buffer.from('b')]).pipe(w.stream);
  t.same(await w.done, { size: 2 }, 'mkdirParents creates the parent');
});
