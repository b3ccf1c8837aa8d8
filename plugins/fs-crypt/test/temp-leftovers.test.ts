import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { expectFsError, listAll, otherDeviceDir, readFile as readFsFile, writeFile as writeFsFile } from '@ferry/testkit';
import { HIDDEN_TMP_PREFIX } from '@ferry/fs-local';
import { CryptFs } from '../src/index.js';

// fs-crypt stores through LocalFs (same atomic uploads, same hidden copies
// beside the destination when the temp area is on another device): a crash
// leftover must be just as invisible, uncounted, unaddressable and swept.
// A leftover of an encrypted upload is partial ciphertext, whose size maps
// to no plaintext size at all.

const base = t.testdir({});
let n = 0;
const scrypt = { logN: 10, r: 8, p: 1 };
async function fresh(o: { maxAge?: number; tempDir?: string } = {}): Promise<{ fs: CryptFs; root: string }> {
  const dir = path.join(base, `c${n++}`);
  const root = path.join(dir, 'root');
  await mkdir(root, { recursive: true });
  const fs = new CryptFs({ root, tempDir: o.tempDir ?? path.join(dir, 'tmp'), passphrase: 'pass', scrypt, hiddenTmpMaxAgeMs: o.maxAge });
  return { fs, root };
}
const leftoverName = () => `${HIDDEN_TMP_PREFIX}${randomUUID()}`;

t.test('a crash leftover of an encrypted upload is invisible, not counted and swept', async (t) => {
  const { fs, root } = await fresh();
  await writeFsFile(fs, '/real.txt', 'plaintext');
  const hidden = leftoverName();
  await writeFile(path.join(root, hidden), Buffer.alloc(70_001, 9));
  t.same(
    (await listAll(fs, '/')).entries.map((e) => [e.name, e.size]),
    [['real.txt', 9]],
    'only the real file, with its plaintext size',
  );
  t.same(await fs.usedSpace('/'), { size: 9, files: 1 }, 'the leftover is not counted');
  await expectFsError(t, fs.openRead(`/${hidden}`), 'PERMISSION', 'cannot be read');
  await expectFsError(t, fs.openWrite('/.ferry-tmp-new'), 'PERMISSION', 'the prefix cannot be written');
  t.ok(existsSync(path.join(root, hidden)), 'a fresh leftover is kept (it may be live)');

  const sweeping = new CryptFs({ root, tempDir: path.join(base, 'unused-tmp'), passphrase: 'pass', scrypt, hiddenTmpMaxAgeMs: 0 });
  await listAll(sweeping, '/');
  t.notOk(existsSync(path.join(root, hidden)), 'a stale one is swept when the directory is listed');
  t.equal((await readFsFile(sweeping, '/real.txt')).toString(), 'plaintext', 'the real file is intact');
});

const xdev = await otherDeviceDir(base);
t.test('encrypted uploads across devices leave no hidden file', { skip: xdev ? false : 'no writable directory on another device' }, async (t) => {
  t.teardown(() => rm(xdev!, { recursive: true, force: true }));
  const { fs, root } = await fresh({ tempDir: path.join(xdev!, 'uploads-tmp'), maxAge: 0 });
  const data = Buffer.alloc(200_000, 5);
  await writeFsFile(fs, '/x.bin', data);
  t.same(await readdir(root), ['x.bin'], 'nothing hidden beside it');
  t.ok((await readFsFile(fs, '/x.bin')).equals(data), 'decrypts to what was written');
  t.same(await readdir(path.join(xdev!, 'uploads-tmp')), [], 'the temp area is empty');
});
