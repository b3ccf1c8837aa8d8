import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { FsError, fsErrorFromNode, silentLogger, type FsProviderDef, type PluginContext } from '@ferry/core';
import {
  expectFsError,
  listAll,
  otherDeviceDir,
  randomStream,
  readFile as readFsFile,
  rejectionOf,
  sha256Stream,
  writeFile as writeFsFile,
} from '@ferry/testkit';
import manifest, { HIDDEN_TMP_PREFIX, LocalFs, localFsProvider, ROOT_CHECK_INTERVAL_MS } from '../src/index.js';
import { batchIo } from '../src/batch-io.js';
import { SMALL_UPLOAD_MAX } from '../src/atomic-upload.js';

const base = t.testdir({});
let n = 0;
async function freshDirs(): Promise<{ root: string; data: string; tmp: string }> {
  const dir = path.join(base, `d${n++}`);
  const root = path.join(dir, 'root');
  const data = path.join(dir, 'data');
  await mkdir(root, { recursive: true });
  return { root, data, tmp: path.join(data, 'uploads-tmp') };
}

t.test('manifest and provider', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
  t.equal(manifest.name, '@ferry/fs-local', 'name is the package name');
  t.equal(manifest.version, pkg.version, 'version comes from package.json');
  t.equal(manifest.apiVersion, 1);
  t.match(localFsProvider, { provider: 0, key: 'local', configKey: 'osconfig', requiresLocalRoot: true });
  t.same(Object.values(localFsProvider.capabilities), [true, true, true, true, true, true, true, true], 'every capability');

  const { data } = await freshDirs();
  await mkdir(path.join(data, 'uploads-tmp', 'stale-dir'), { recursive: true });
  await writeFile(path.join(data, 'uploads-tmp', 'stale.upload'), 'left by a crash');
  const registered: FsProviderDef[] = [];
  const ctx = { name: manifest.name, logger: silentLogger(), config: {}, dataDir: data, registerFsProvider: (d: FsProviderDef) => registered.push(d) };
  await manifest.register(ctx as unknown as PluginContext, {});
  t.same(await readdir(path.join(data, 'uploads-tmp')), [], 'register() empties the temp area');
  t.equal(registered[0], localFsProvider, 'register() registers provider 0');
});

t.test('create()', async (t) => {
  const { data } = await freshDirs();
  await t.rejects(
    Promise.resolve().then(() => localFsProvider.create({}, { username: 'u', dataDir: data })),
    { code: 'INVALID' },
    'a root is required',
  );
  const root = path.join(base, 'created-on-demand', 'home');
  const fs = await localFsProvider.create({ read_buffer_size: 1 }, { username: 'u', root, dataDir: data });
  t.ok((await stat(root)).isDirectory(), 'a missing root is created');
  await writeFsFile(fs, '/big', randomStream(3 * 1024 * 1024, 'buf'));
  const sizes: number[] = [];
  for await (const c of await fs.openRead('/big')) sizes.push((c as Buffer).length);
  t.equal(sizes[0], 1024 * 1024, 'read_buffer_size (MiB) sets the read chunk size');
});

t.test('create(): a root found is checked again only after ROOT_CHECK_INTERVAL_MS', async (t) => {
  const { data } = await freshDirs();
  const root = path.join(base, 'checked-root', 'home');
  await localFsProvider.create({}, { username: 'u', root, dataDir: data });
  await rm(root, { recursive: true });
  await localFsProvider.create({}, { username: 'u', root, dataDir: data });
  t.notOk(existsSync(root), 'removed within the interval: not checked (no syscall per session)');
  const realNow = Date.now;
  Date.now = () => realNow() + ROOT_CHECK_INTERVAL_MS + 1;
  t.teardown(() => (Date.now = realNow));
  await localFsProvider.create({}, { username: 'u', root, dataDir: data });
  t.ok(existsSync(root), 'created again once the interval passed');
});

t.test('create() with skipRootCheck (disable_fs_checks): a missing root is not created', async (t) => {
  const { data } = await freshDirs();
  const root = path.join(base, 'unchecked-root', 'home');
  const fs = await localFsProvider.create({}, { username: 'u', root, dataDir: data, skipRootCheck: true });
  t.notOk(existsSync(root), 'not created');
  await t.rejects(fs.stat('/'), { code: 'NOT_FOUND' }, 'operations fail as on any missing path');
});

/** The paths LocalFs opens from now on the usual way (its openFile). */
function spyOpens(fs: LocalFs): string[] {
  const opened: string[] = [];
  const target = fs as unknown as { openFile: (p: string, ...rest: unknown[]) => Promise<unknown> };
  const openFile = target.openFile.bind(fs);
  target.openFile = (p, ...rest) => (opened.push(p), openFile(p, ...rest));
  return opened;
}

t.test('openReadWithInfo(): a file of one read buffer at most in one open, a larger one left to openRead()', async (t) => {
  const { root, tmp } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: tmp, readBufferSize: 8192 });
  await writeFile(path.join(root, 'small.bin'), Buffer.alloc(8192, 1));
  await writeFile(path.join(root, 'large.bin'), Buffer.alloc(8193, 2));
  const fds = async () => (await readdir('/proc/self/fd')).length;
  // (the batch I/O worker, started by the first small read, holds descriptors of its own)
  (await fs.openReadWithInfo!('/small.bin'))?.stream.destroy();
  await new Promise((r) => setImmediate(r));
  const before = await fds();
  const got = await fs.openReadWithInfo!('/small.bin');
  t.ok(got, 'a file of readBufferSize bytes: opened');
  const st = await fs.stat('/small.bin');
  t.same({ ...got!.info }, { ...st }, 'its info is what stat() reports');
  t.same(await readFsFile(fs, '/small.bin'), Buffer.alloc(8192, 1));
  const chunks: Buffer[] = [];
  for await (const c of got!.stream) chunks.push(c as Buffer);
  t.same(Buffer.concat(chunks), Buffer.alloc(8192, 1), 'every byte');
  const opened = spyOpens(fs);
  t.equal(await fs.openReadWithInfo!('/large.bin'), undefined, 'one byte more: undefined (stat() and openRead() read it)');
  t.same(opened, [], 'found too large by the worker: not opened once more to find that out');
  await new Promise((r) => setImmediate(r));
  t.equal(await fds(), before, 'no descriptor left open');
  await expectFsError(t, fs.openReadWithInfo!('/missing.bin'), 'NOT_FOUND', 'a missing file');
});

t.test('openReadWithInfo(): small files in one message to the batch I/O worker; links, larger files and non-files as before', async (t) => {
  const { root, tmp } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: tmp, readBufferSize: 1024 * 1024 });
  await mkdir(path.join(root, 'd'));
  await writeFile(path.join(root, 'd', 'small.txt'), 'small');
  await writeFile(path.join(root, 'd', 'empty.txt'), '');
  await writeFile(path.join(root, 'd', 'over.bin'), Buffer.alloc(64 * 1024 + 1, 3));
  await writeFile(path.join(base, 'outside.txt'), 'secret');
  await symlink('small.txt', path.join(root, 'd', 'link.txt'));
  await symlink(path.join(base, 'outside.txt'), path.join(root, 'd', 'out.txt'));
  execFileSync('mkfifo', [path.join(root, 'd', 'fifo')]);
  const bytesOf = async (p: string) => {
    const got = await fs.openReadWithInfo!(p);
    if (!got) return undefined;
    const st = await fs.stat(p);
    t.same({ ...got.info }, { ...st }, `${p}: the info is what stat() reports`);
    const chunks: Buffer[] = [];
    for await (const c of got.stream) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString();
  };
  t.equal(await bytesOf('/d/small.txt'), 'small', 'a small file in a subdirectory');
  t.equal(await bytesOf('/d/empty.txt'), '', 'an empty file: an empty stream');
  t.equal(await bytesOf('/d/link.txt'), 'small', 'a link inside the root: followed (the usual way)');
  await expectFsError(t, fs.openReadWithInfo!('/d/out.txt'), 'ESCAPE', 'a link leading out of the root: refused');
  await expectFsError(t, fs.openReadWithInfo!('/d/fifo'), 'INVALID', 'a FIFO: not a regular file (and no hang)');
  await expectFsError(t, fs.openReadWithInfo!('/d'), 'IS_DIR', 'a directory');
  await expectFsError(t, fs.openReadWithInfo!('/nowhere/x.txt'), 'NOT_FOUND', 'a missing parent');
  const opened = spyOpens(fs);
  const over = await fs.openReadWithInfo!('/d/over.bin');
  t.ok(over, 'over 64 KiB but within the read buffer: opened the usual way');
  t.same(opened, ['/d/over.bin']);
  over!.stream.destroy();
  const ac = new AbortController();
  ac.abort();
  await expectFsError(t, fs.openReadWithInfo!('/d/small.txt', { signal: ac.signal }), 'ABORTED', 'an aborted signal');
});

t.test('openReadWithInfo(): the worker opens the parent by its path and reads only when it really is there', async (t) => {
  const { root, tmp } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: tmp });
  await mkdir(path.join(root, 'd'));
  await writeFile(path.join(root, 'd', 'a.txt'), 'in d');
  await symlink('d', path.join(root, 'via'));
  const outside = path.join(base, `outside-dir-${Date.now()}`);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await symlink(outside, path.join(root, 'out'));
  const answers: string[] = [];
  const { read, readAt } = batchIo;
  batchIo.readAt = async (...a) => {
    const got = await readAt.apply(batchIo, a);
    answers.push(`readAt ${a[0].slice(root.length) || '/'}: ${got ? 'read' : 'elsewhere'}`);
    return got;
  };
  batchIo.read = (...a) => (answers.push('read'), read.apply(batchIo, a));
  t.teardown(() => Object.assign(batchIo, { read, readAt }));
  const text = async (p: string) => {
    const got = await fs.openReadWithInfo!(p);
    const chunks: Buffer[] = [];
    for await (const c of got!.stream) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString();
  };

  t.equal(await text('/d/a.txt'), 'in d');
  t.same(answers, ['readAt /d: read'], 'one message, no other step');
  answers.length = 0;
  t.equal(await text('/via/a.txt'), 'in d', 'through a link inside the root');
  t.same(answers, ['readAt /via: elsewhere', 'read'], 'the worker found the directory elsewhere: the usual path read it');
  answers.length = 0;
  await expectFsError(t, fs.openReadWithInfo!('/out/secret.txt'), 'ESCAPE', 'a parent leading out of the root: refused');
  t.same(answers, ['readAt /out: elsewhere'], 'nothing was read there');
  await expectFsError(t, fs.openReadWithInfo!('/.ferry-tmp-x/a.txt'), 'PERMISSION', 'a reserved name: refused before any message');
});

t.test('a small subdirectory is listed in one message to the worker, with the entries and pages of the usual path', async (t) => {
  const { root, tmp } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: tmp });
  await mkdir(path.join(root, 'd', 'sub'), { recursive: true });
  for (let i = 0; i < 10; i++) await writeFile(path.join(root, 'd', `f${i}.txt`), 'x'.repeat(i));
  const pagesOf = async (p: string, pageSize: number) => {
    const pages: string[][] = [];
    for await (const page of fs.list(p, { pageSize })) pages.push(page.map((e) => `${e.name}:${e.isDir ? 'd' : e.size}`));
    return pages;
  };
  const plain = await pagesOf('/d', 4);
  t.same(
    plain.map((p) => p.length),
    [4, 4, 3],
    'pages of the size asked for',
  );
  t.same(plain.flat().sort(), [...Array.from({ length: 10 }, (_, i) => `f${i}.txt:${i}`), 'sub:d'].sort(), 'every entry with its size');
  const st = await fs.stat('/d/f3.txt');
  const listed = [];
  for await (const page of fs.list('/d')) listed.push(...page);
  t.same({ ...listed.find((e) => e.name === 'f3.txt') }, { ...st }, 'an entry as stat() reports it');
  // entries the one-message path leaves to the usual one: a link (shown as its target) and a reserved name (hidden)
  await symlink('f9.txt', path.join(root, 'd', 'link.txt'));
  const linked = (await pagesOf('/d', 100)).flat();
  t.ok(linked.includes('link.txt:9'), 'a link inside the root: listed as its target');
  t.equal(linked.length, 12);
  await rm(path.join(root, 'd', 'link.txt'));
  await writeFile(path.join(root, 'd', `${HIDDEN_TMP_PREFIX}leftover`), 'partial');
  const mixed = (await pagesOf('/d', 100)).flat();
  t.notOk(
    mixed.some((e) => e.startsWith(HIDDEN_TMP_PREFIX)),
    'a reserved name: never listed',
  );
  t.equal(mixed.length, 11);
  await symlink(path.join(root, 'd'), path.join(root, 'via-link'));
  t.same((await pagesOf('/via-link/sub', 10)).flat(), [], 'through a link inside the root: listed');
  const ac = new AbortController();
  ac.abort();
  await t.rejects(
    (async () => {
      for await (const page of fs.list('/d', { signal: ac.signal })) void page;
    })(),
    { code: 'ABORTED' },
    'an aborted signal',
  );
});

t.test('the temp directory is made once per process, and again when it was removed', async (t) => {
  const { root, tmp } = await freshDirs();
  await writeFsFile(new LocalFs({ root, tempDir: tmp }), '/a.txt', 'one');
  t.ok(existsSync(tmp), 'made by the first upload');
  await rm(tmp, { recursive: true });
  // another LocalFs (a new file session) trusts the directory made before, finds it gone and makes it again
  const fs = new LocalFs({ root, tempDir: tmp });
  await writeFsFile(fs, '/b.txt', 'two');
  t.equal(await readFile(path.join(root, 'b.txt'), 'utf8'), 'two', 'the upload went through');
  t.ok(existsSync(tmp), 'the temp directory is back');
  await rm(tmp, { recursive: true });
  await writeFsFile(fs, '/c.txt', 'three');
  t.equal(await readFile(path.join(root, 'c.txt'), 'utf8'), 'three', 'the same LocalFs too');
});

t.test('atomic writes', async (t) => {
  const { root, tmp } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: tmp });
  const h = await fs.openWrite('/f.txt');
  h.stream.write('partial');
  await new Promise((r) => setTimeout(r, 20));
  t.same(await readdir(root), [], 'nothing in the destination while writing');
  t.same(await readdir(tmp), [], 'the first bytes are held back (the upload may end small): no temporary file yet');
  const middle = 'm'.repeat(SMALL_UPLOAD_MAX);
  h.stream.write(middle);
  while ((await readdir(tmp)).length === 0) await new Promise((r) => setTimeout(r, 5));
  t.same(await readdir(root), [], 'nothing in the destination while writing');
  t.equal((await readdir(tmp)).length, 1, 'past SMALL_UPLOAD_MAX, bytes go to the temp area');
  h.stream.end(' and the rest');
  t.same(await h.done, { size: 20 + SMALL_UPLOAD_MAX, replaced: { size: 0, existed: false } }, 'done reports the bytes, and that nothing was replaced');
  t.same(await readdir(tmp), [], 'the temp file was moved, not copied');
  t.equal(await readFile(path.join(root, 'f.txt'), 'utf8'), `partial${middle} and the rest`);

  // a small upload: its temporary file created, written and closed in one message to the batch I/O worker
  const puts: string[] = [];
  const put = batchIo.put.bind(batchIo);
  batchIo.put = (file, chunks) => (puts.push(file), put(file, chunks));
  t.teardown(() => {
    batchIo.put = put;
  });
  const small = await fs.openWrite('/small.txt', { mtime: new Date('2020-01-02T03:04:05Z') });
  small.stream.write('one, ');
  small.stream.end('two');
  t.same(await small.done, { size: 8, replaced: { size: 0, existed: false } });
  t.equal(puts.length, 1, 'one message');
  t.match(puts[0], /\.upload$/, 'into a temporary file');
  t.equal(await readFile(path.join(root, 'small.txt'), 'utf8'), 'one, two');
  t.equal((await stat(path.join(root, 'small.txt'))).mtime.toISOString(), '2020-01-02T03:04:05.000Z', 'with its mtime');
  const empty = await fs.openWrite('/empty.txt');
  empty.stream.end();
  t.same(await empty.done, { size: 0, replaced: { size: 0, existed: false } });
  t.equal(await readFile(path.join(root, 'empty.txt'), 'utf8'), '', 'an empty upload publishes an empty file');
  const over = await fs.openWrite('/small.txt');
  over.stream.end('three');
  t.same(await over.done, { size: 5, replaced: { size: 8, existed: true } }, 'an overwrite reports the file it replaced, as it was then');
  const kept = await fs.openWrite('/new.txt', { overwrite: false });
  kept.stream.end('y');
  t.same(await kept.done, { size: 1, replaced: { size: 0, existed: false } }, 'overwrite:false replaces nothing');
  t.same(await readdir(tmp), [], 'nothing left in the temp area');

  const aborted = await fs.openWrite('/g.txt');
  aborted.stream.write('x');
  await aborted.abort();
  await aborted.abort();
  t.match(await rejectionOf(aborted.done), { code: 'ABORTED' }, 'abort() rejects done with ABORTED, and is idempotent');
  t.same(await readdir(tmp), [], 'abort removes the temp file');
  const late = await fs.openWrite('/late.txt');
  late.stream.end('ok');
  await late.done;
  await late.abort();
  t.equal(await readFile(path.join(root, 'late.txt'), 'utf8'), 'ok', 'abort() after done leaves the file alone');
});

t.test('a small upload without an mtime is put and published in one message to the worker', async (t) => {
  const { root, tmp } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: tmp });
  const sent: string[] = [];
  const { put, putReplace } = batchIo;
  batchIo.put = (...a) => (sent.push('put'), put.apply(batchIo, a));
  batchIo.putReplace = (...a) => (sent.push('putReplace'), putReplace.apply(batchIo, a));
  t.teardown(() => Object.assign(batchIo, { put, putReplace }));

  let seen = '';
  const h = await fs.openWrite('/a.txt', {
    beforePublish: async (p) => {
      t.same(await readdir(tmp), [], 'no temporary file while the hook runs: the bytes are held');
      t.equal(p.size, 9);
      for await (const c of await p.openRead()) seen += String(c);
    },
  });
  h.stream.end('held here');
  t.same(await h.done, { size: 9, replaced: { size: 0, existed: false } });
  t.equal(seen, 'held here', 'the hook read the held bytes');
  t.same(sent, ['putReplace'], 'one message');
  t.equal(await readFile(path.join(root, 'a.txt'), 'utf8'), 'held here');

  const over = await fs.openWrite('/a.txt');
  over.stream.end('again');
  t.same(await over.done, { size: 5, replaced: { size: 9, existed: true } }, 'what it replaced, as the worker found it');

  sent.length = 0;
  const kept = await fs.openWrite('/b.txt', { overwrite: false });
  kept.stream.end('b');
  await kept.done;
  t.same(sent, ['put'], 'overwrite:false puts, then links (no rename)');

  // the rename fails (a non-empty directory made there meanwhile): nothing published, nothing left behind
  const failing = await fs.openWrite('/d');
  await mkdir(path.join(root, 'd', 'x'), { recursive: true });
  failing.stream.end('no');
  t.ok(await rejectionOf(failing.done), 'the upload fails');
  t.same(await readdir(path.join(root, 'd')), ['x'], 'the directory is untouched');
  t.same(await readdir(tmp), [], 'and the temporary file removed');
});

t.test('adopt(): a completed file of the server moves into place instead of being streamed', async (t) => {
  const { root, data, tmp } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: tmp });
  await mkdir(data, { recursive: true });
  const staged = path.join(data, 'staged.bin');
  await writeFile(staged, 'adopted bytes', { mode: 0o600 });
  const mtime = new Date('2021-05-06T07:08:09Z');
  let pending = '';
  const h = await fs.openWrite('/a.bin', {
    mtime,
    beforePublish: async (p) => {
      for await (const c of await p.openRead()) pending += String(c);
    },
  });
  t.ok(await h.adopt!(staged), 'taken');
  t.notOk(existsSync(staged), 'moved, not copied');
  t.same(await readdir(root), [], 'nothing visible before the stream ends');
  h.stream.end();
  t.same(await h.done, { size: 13, replaced: { size: 0, existed: false } }, 'done reports the adopted size');
  t.equal(pending, 'adopted bytes', 'beforePublish reads the adopted bytes');
  t.equal(await readFile(path.join(root, 'a.bin'), 'utf8'), 'adopted bytes');
  const st = await stat(path.join(root, 'a.bin'));
  t.equal(st.mtime.getTime(), mtime.getTime(), 'mtime applied');
  await writeFsFile(fs, '/plain.bin', 'x');
  t.equal(st.mode & 0o777, (await stat(path.join(root, 'plain.bin'))).mode & 0o777, 'the mode of any new upload, not the staged 0600');
  t.same(await readdir(tmp), [], 'the temp area is empty');

  // refused once bytes were written: nothing changes, the caller streams
  await writeFile(staged, 'second');
  const written = await fs.openWrite('/b.bin');
  written.stream.write('streamed');
  t.notOk(await written.adopt!(staged), 'not after a write');
  t.ok(existsSync(staged), 'the file stays where it was');
  written.stream.end();
  await written.done;
  t.equal(await readFile(path.join(root, 'b.bin'), 'utf8'), 'streamed');

  // a failed write removes what it adopted, and publishes nothing
  const failing = await fs.openWrite('/c.bin');
  t.ok(await failing.adopt!(staged));
  await failing.abort();
  t.match(await rejectionOf(failing.done), { code: 'ABORTED' });
  t.notOk(existsSync(staged), 'the adopted file is removed with the write');
  t.notOk(existsSync(path.join(root, 'c.bin')), 'nothing published');
  t.same(await readdir(tmp), [], 'nothing left in the temp area');
});

const xdevDir = await otherDeviceDir(base);
const xdevSkip = xdevDir ? false : 'no writable directory on another device (set FERRY_TEST_XDEV_DIR to one)';
t.test('publishing across devices (EXDEV)', { skip: xdevSkip }, async (t) => {
  const xdev = xdevDir!;
  t.teardown(() => rm(xdev, { recursive: true, force: true }));
  const { root } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: path.join(xdev, 'uploads-tmp') });
  const want = await sha256Stream(randomStream(5_000_000, 'xdev'));
  const mtime = new Date('2020-01-02T03:04:05Z');
  let pendingSize = -1;
  await writeFsFile(fs, '/x.bin', randomStream(5_000_000, 'xdev'), { mtime, beforePublish: async (p) => void (pendingSize = p.size) });
  t.equal(pendingSize, 5_000_000, 'beforePublish ran');
  t.same(await sha256Stream(await fs.openRead('/x.bin')), want, 'the copied file is complete');
  t.equal((await fs.stat('/x.bin')).mtime.getTime(), mtime.getTime(), 'mtime applied to the copy');
  t.same(await readdir(root), ['x.bin'], `no ${HIDDEN_TMP_PREFIX}* file left beside it`);
  t.same(await readdir(path.join(xdev, 'uploads-tmp')), [], 'the temp area is empty');
  t.match(await rejectionOf(writeFsFile(fs, '/x.bin', 'no', { overwrite: false })), { code: 'EXISTS' }, 'overwrite:false still holds');
  await writeFsFile(fs, '/x.bin', 'replaced');
  t.equal(await readFile(path.join(root, 'x.bin'), 'utf8'), 'replaced', 'overwrite across devices');
  t.same((await readdir(root)).sort(), ['x.bin'], 'still nothing hidden left');
});

t.test('adopt() of a file on another device than the temp area: published from there, copied once', { skip: xdevSkip }, async (t) => {
  // (the test above removes the directory when it ends)
  await mkdir(xdevDir!, { recursive: true });
  const xdev = await mkdtemp(path.join(xdevDir!, 'adopt-'));
  t.teardown(() => rm(xdev, { recursive: true, force: true }));
  const { root, tmp } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: tmp });
  const staged = path.join(xdev, 'staged.bin');
  await writeFile(staged, 'from another device');
  const h = await fs.openWrite('/x.bin');
  t.ok(await h.adopt!(staged));
  h.stream.end();
  t.same(await h.done, { size: 19, replaced: { size: 0, existed: false } });
  t.equal(await readFile(path.join(root, 'x.bin'), 'utf8'), 'from another device');
  t.notOk(existsSync(staged), 'removed once copied');
  t.same(await readdir(root), ['x.bin'], 'no hidden file left');
});

t.test('symbolic links inside the root', async (t) => {
  const { root, tmp } = await freshDirs();
  const warnings: { obj: object; msg: string }[] = [];
  const fs = new LocalFs({ root, tempDir: tmp, logger: { warn: (obj, msg) => void warnings.push({ obj, msg }) } });
  await mkdir(path.join(root, 'real-dir'));
  await writeFile(path.join(root, 'real-dir', 'target.txt'), '12345');
  await symlink('real-dir/target.txt', path.join(root, 'file-link'));
  await symlink('real-dir', path.join(root, 'dir-link'));
  await symlink('/', path.join(root, 'slash-link'));
  const info = await fs.stat('/file-link');
  t.match(info, { name: 'file-link', path: '/file-link', isDir: false, size: 5 }, 'stat follows a link that stays inside');
  t.equal((await readFsFile(fs, '/dir-link/target.txt')).toString(), '12345', 'reads through a directory link');
  const listed = Object.fromEntries((await listAll(fs, '/')).entries.map((e) => [e.name, e]));
  t.match(listed['file-link'], { isDir: false, size: 5 }, 'list reports an inside link as its target');
  t.match(listed['dir-link'], { isDir: true }, 'and a directory link as a directory');
  t.notOk('slash-link' in listed, 'a link leading outside is left out of the listing');
  t.match(warnings, [{ obj: { path: '/slash-link' }, msg: 'symbolic link left out of a listing' }], 'and the leave-out is logged');
  await expectFsError(t, fs.stat('/slash-link'), 'ESCAPE', 'but cannot be followed');
  t.same(await fs.usedSpace('/'), { size: 5, files: 1 }, 'usedSpace neither follows nor counts links');
  await fs.remove('/file-link');
  t.equal(await readFile(path.join(root, 'real-dir', 'target.txt'), 'utf8'), '12345', 'remove() of a link keeps its target');
  await fs.remove('/slash-link');
  t.ok((await stat('/')).isDirectory(), 'removing a link to / removes the link only');
});

t.test('special files and modes', async (t) => {
  const { root, tmp } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: tmp });
  await writeFile(path.join(root, 'm.txt'), 'm');
  await chmod(path.join(root, 'm.txt'), 0o640);
  const info = await fs.stat('/m.txt');
  t.equal(info.mode & 0o777, 0o640, 'permission bits come from lstat');
  t.equal(info.mode & 0o170000, 0o100000, 'a regular file carries S_IFREG');
  t.equal((await fs.stat('/')).mode & 0o170000, 0o040000, 'a directory carries S_IFDIR');
});

const fifoDirs = await freshDirs();
const fifoSkip = ((): string | false => {
  try {
    execFileSync('mkfifo', [path.join(fifoDirs.root, 'fifo')]);
    return false;
  } catch {
    return 'mkfifo is not available';
  }
})();
t.test('a FIFO in the tree', { skip: fifoSkip }, async (t) => {
  const fs = new LocalFs({ root: fifoDirs.root, tempDir: fifoDirs.tmp });
  await expectFsError(t, fs.openRead('/fifo'), 'INVALID', 'a FIFO is refused without blocking');
});

t.test('rename and remove guards', async (t) => {
  const { root, tmp } = await freshDirs();
  const fs = new LocalFs({ root, tempDir: tmp });
  await fs.mkdir('/a/b', { recursive: true });
  await expectFsError(t, fs.rename('/a', '/a/b/c'), 'INVALID', 'a directory cannot move into itself');
  await expectFsError(t, fs.rename('/', '/x'), 'INVALID', 'the root cannot be renamed');
  await expectFsError(t, fs.remove('/'), 'PERMISSION', 'the root cannot be removed');
  await expectFsError(t, fs.remove('/', { recursive: true }), 'PERMISSION', 'not even recursively');
  await expectFsError(t, fs.copy('/a', '/a2'), 'IS_DIR', 'copy() of a directory');
  await fs.rename('/a', '/a');
  t.ok((await fs.stat('/a')).isDir, 'renaming onto itself is a no-op');
  await writeFsFile(fs, '/file', 'f');
  await expectFsError(t, fs.rename('/file', '/a'), ['IS_DIR', 'EXISTS', 'NOT_EMPTY'], 'a file cannot replace a directory');
  t.same(
    (await readdir(root)).filter((x) => x.startsWith(HIDDEN_TMP_PREFIX)),
    [],
    'no hidden copies left',
  );
});

t.test('Node error mapping (fsErrorFromNode)', async (t) => {
  const cases: [string, string][] = [
    ['ENOENT', 'NOT_FOUND'],
    ['EEXIST', 'EXISTS'],
    ['EACCES', 'PERMISSION'],
    ['EPERM', 'PERMISSION'],
    ['ENOTDIR', 'NOT_DIR'],
    ['EISDIR', 'IS_DIR'],
    ['ENOTEMPTY', 'NOT_EMPTY'],
    ['EXDEV', 'CROSS_DEVICE'],
    ['ENOSPC', 'QUOTA'],
    ['EDQUOT', 'QUOTA'],
  ];
  for (const [node, code] of cases) {
    const err = fsErrorFromNode(Object.assign(new Error(node), { code: node }), '/p');
    t.ok(err instanceof FsError && err.code === code, `${node} → ${code}`);
  }
  const odd = new Error('odd');
  t.equal(fsErrorFromNode(odd, '/p'), odd, 'an unknown error passes through');
});

t.test('usedSpace() of a large tree leaves the event loop free', async (t) => {
  // 20 directories x 1000 one-byte files, plus a nested level; a private directory, so a run of
  // this file in another process (same t.testdir path) cannot remove the tree under the scan
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-used-space-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const root = path.join(dir, 'root');
  const DIRS = 20;
  const PER_DIR = 1000;
  for (let d = 0; d < DIRS; d++) {
    const sub = path.join(root, `d${d}`, d % 2 ? 'nested' : '');
    mkdirSync(sub, { recursive: true });
    for (let f = 0; f < PER_DIR; f++) writeFileSync(path.join(sub, `f${f}`), 'x');
  }
  const fs = new LocalFs({ root, tempDir: path.join(dir, 'tmp') });

  // the longest gap between two turns of the event loop while the scan runs, seen by a 5 ms timer
  // (the gap from its last tick to the end of the scan included: a synchronous walk never ticks)
  let ticks = 0;
  let maxGapMs = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
    ticks++;
  }, 5);
  const started = performance.now();
  const used = await fs.usedSpace('/');
  const ended = performance.now();
  clearInterval(timer);
  maxGapMs = Math.max(maxGapMs, ended - last);
  const elapsedMs = ended - started;

  t.same(used, { size: DIRS * PER_DIR, files: DIRS * PER_DIR }, 'every file counted');
  t.comment(`scan ${elapsedMs.toFixed(0)} ms, longest event-loop stall ${maxGapMs.toFixed(1)} ms, ${ticks} timer ticks`);
  // a responsiveness check, not a speed one: a walk with synchronous calls stalls the loop for
  // the whole scan; an asynchronous one only for short slices, however loaded the machine (no
  // absolute bound: on a loaded machine one slice or a GC pause can take hundreds of ms)
  t.ok(maxGapMs < Math.max(elapsedMs / 2, 50), `the loop kept turning during the ${elapsedMs.toFixed(0)} ms scan (longest stall ${maxGapMs.toFixed(1)} ms)`);
  t.ok(ticks > 0, 'timers fired while the scan ran');
});
