import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { SFTPWrapper } from 'ssh2';
import SftpClient from 'ssh2-sftp-client';
import { sshKey, startSftp } from './helpers.js';

// ssh2-sftp-client (the Node client fs-sftp is built on) against the service.
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Every file under `root` with its hash, by relative path. */
function tree(root: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const p = path.posix.join(rel, e.name);
    if (e.isDirectory()) Object.assign(out, tree(root, p));
    else out[p] = sha(readFileSync(path.join(root, p)));
  }
  return out;
}

/** Waits (at most 10 s) until every file below `like` has its size below `root` too. */
async function filesSized(root: string, like: string, rel = ''): Promise<void> {
  for (const e of readdirSync(path.join(like, rel), { withFileTypes: true })) {
    const p = path.join(rel, e.name);
    if (e.isDirectory()) await filesSized(root, like, p);
    else
      for (let waited = 0; waited < 10_000 && statSync(path.join(root, p), { throwIfNoEntry: false })?.size !== statSync(path.join(like, p)).size; waited += 20)
        await new Promise((r) => setTimeout(r, 20));
  }
}

/** put() options writing into an existing file at `start` (ssh2 takes any fs flag; the typings only 'w' and 'a'). */
const atOffset = (start: number) => ({ writeStreamOptions: { flags: 'r+', start } }) as unknown as SftpClient.TransferOptions;

t.test('ssh2-sftp-client', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const home = await h.addUser('nico', { public_keys: [key.pub] });
  const c = new SftpClient();
  await c.connect({ host: '127.0.0.1', port: h.port, username: 'nico', privateKey: readFileSync(key.file), readyTimeout: 20_000 });
  t.teardown(() => c.end());
  const data = randomBytes(3 * 1024 * 1024 + 17);

  await t.test('put and get: buffers, streams, files, fastPut and fastGet', async (t) => {
    await c.put(data, '/buf.bin');
    t.equal(sha(readFileSync(path.join(home, 'buf.bin'))), sha(data));
    await c.put(Readable.from([data.subarray(0, 1000), data.subarray(1000)]), '/stream.bin');
    t.equal(sha(readFileSync(path.join(home, 'stream.bin'))), sha(data));
    const back = (await c.get('/buf.bin')) as Buffer;
    t.equal(sha(back), sha(data), 'get into a buffer');
    writeFileSync(path.join(dir, 'local.bin'), data);
    await c.fastPut(path.join(dir, 'local.bin'), '/fast.bin');
    t.equal(sha(readFileSync(path.join(home, 'fast.bin'))), sha(data), 'fastPut (concurrent writes in order)');
    await c.fastGet('/fast.bin', path.join(dir, 'fast-back.bin'));
    t.equal(sha(readFileSync(path.join(dir, 'fast-back.bin'))), sha(data), 'fastGet (concurrent reads)');
    const s = await c.stat('/fast.bin');
    t.equal(s.size, data.length);
    t.equal(s.isFile, true);
  });

  await t.test('list, rename, posixRename, exists, delete', async (t) => {
    const names = (await c.list('/')).map((e) => `${e.type}:${e.name}:${e.size}`).sort();
    t.same(names, [`-:buf.bin:${data.length}`, `-:fast.bin:${data.length}`, `-:stream.bin:${data.length}`]);
    await c.rename('/buf.bin', '/renamed.bin');
    t.notOk(existsSync(path.join(home, 'buf.bin')));
    await t.rejects(c.rename('/renamed.bin', '/fast.bin'), 'rename refuses an existing target (SFTP v3)');
    await c.posixRename('/renamed.bin', '/fast.bin');
    t.notOk(existsSync(path.join(home, 'renamed.bin')), 'posix-rename replaces it');
    t.equal(await c.exists('/fast.bin'), '-');
    t.equal(await c.exists('/nope'), false);
    await c.delete('/fast.bin');
    await c.delete('/stream.bin');
    t.same(readdirSync(home), []);
    await t.rejects(c.delete('/fast.bin'), { code: 2 }, 'a missing file: NO_SUCH_FILE');
  });

  await t.test('mkdir and rmdir recursive, chmod', async (t) => {
    await c.mkdir('/p/q/r', true);
    t.ok(existsSync(path.join(home, 'p/q/r')));
    await c.put(Buffer.from('leaf'), '/p/q/r/leaf.txt');
    await c.chmod('/p/q/r/leaf.txt', 0o600);
    t.equal(readFileSync(path.join(home, 'p/q/r/leaf.txt'), 'utf8'), 'leaf', 'chmod is accepted, the file untouched');
    await t.rejects(c.rmdir('/p'), 'not recursive: a directory that is not empty stays');
    t.ok(existsSync(path.join(home, 'p/q/r/leaf.txt')));
    await c.rmdir('/p', true);
    t.notOk(existsSync(path.join(home, 'p')), 'removed with everything in it');
  });

  await t.test('append, and reput at an offset', async (t) => {
    await c.put(data.subarray(0, 1_000_000), '/app.bin');
    await c.append(data.subarray(1_000_000), '/app.bin');
    t.equal(sha(readFileSync(path.join(home, 'app.bin'))), sha(data), 'appended');
    // the part on the server is marked: a write at the offset keeps it
    const kept = 1_500_000;
    writeFileSync(path.join(home, 'reput.bin'), Buffer.alloc(kept, 0x55));
    await c.put(data.subarray(kept), '/reput.bin', atOffset(kept));
    t.ok(readFileSync(path.join(home, 'reput.bin')).equals(Buffer.concat([Buffer.alloc(kept, 0x55), data.subarray(kept)])), 'the rest written after the part');
    // (ssh2's write stream loses the error of a WRITE when it closes itself: the raw channel shows it)
    const raw = (c as unknown as { sftp: SFTPWrapper }).sftp;
    const handle = await new Promise<Buffer>((resolve, reject) => raw.open('/reput.bin', 'r+', (err, hnd) => (err ? reject(err) : resolve(hnd))));
    const gap = await new Promise<(Error & { code?: number }) | null>((resolve) =>
      raw.write(handle, Buffer.from('x'), 0, 1, data.length + 10, (err) => resolve(err ?? null)),
    );
    await new Promise<void>((resolve) => raw.close(handle, () => resolve()));
    t.equal(gap?.code, 8, 'a write past the end of the file: OP_UNSUPPORTED');
    t.equal(readFileSync(path.join(home, 'reput.bin')).length, data.length, 'the file is as it was');
  });

  await t.test('uploadDir and downloadDir', async (t) => {
    const local = path.join(dir, 'tree');
    mkdirSync(path.join(local, 'a/b'), { recursive: true });
    writeFileSync(path.join(local, 'top.txt'), 'top\n');
    writeFileSync(path.join(local, 'a/one.bin'), randomBytes(200_000));
    writeFileSync(path.join(local, 'a/b/two.bin'), randomBytes(1_300_000));
    await c.uploadDir(local, '/up');
    t.same(tree(path.join(home, 'up')), tree(local), 'the tree uploaded');
    await c.uploadDir(local, '/up-fast', { useFastput: true });
    t.same(tree(path.join(home, 'up-fast')), tree(local), 'with fastPut too');
    await c.downloadDir('/up', path.join(dir, 'down'));
    // ssh2-sftp-client's get() resolves when the remote stream ends, not when its local file is
    // written (12.1.1: `rdr.once('end', resolve)`): the last file may still be flushing here
    await filesSized(path.join(dir, 'down'), local);
    t.same(tree(path.join(dir, 'down')), tree(local), 'and downloaded');
  });
});
