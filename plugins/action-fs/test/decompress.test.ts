import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { craftZip } from './fixtures/zip-writer.js';
import { harness, local } from './helpers.js';

// Decompress (sub-type 9) on a local user: a good archive is extracted with
// its tree; zip-slip archives (../x, absolute paths, backslashes), symlink
// entries, zip bombs (ratio, entry count, total size, sizes that lie) are
// refused and leave nothing inside or outside the target; the overwrite
// policy and the quota hold.

const h = await harness();
t.teardown(() => h.close());
const U = 'unzip-user';
const home = await h.user(U, local, { quota_size: 30 * 1024 * 1024 });
const run = (cfg: Record<string, unknown>) => h.run(U, { type: 9, decompress: cfg });
/** Everything on disk under the user's home and next to it (what an escape would create). */
const snapshot = () => {
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? [`${path.join(d, e.name)}/`, ...walk(path.join(d, e.name))] : [path.join(d, e.name)],
    );
  return walk(path.dirname(home)).sort();
};

t.test('a good archive: files, directories, mtime kept', async (t) => {
  const big = randomBytes(200_000);
  await h.put(
    U,
    '/in/good.zip',
    craftZip([
      { name: 'top.txt', data: Buffer.from('top') },
      { name: 'dir/', unixMode: 0o040755 },
      { name: 'dir/sub/big.bin', data: big },
      { name: 'implicit/parent/file.txt', data: Buffer.from('made parents'), unixMode: 0o100644 },
    ]),
  );
  await run({ name: '/in/good.zip', target: '/out/good' });
  t.same(await h.tree(U, '/out/good'), [
    '/out/good/dir/',
    '/out/good/dir/sub/',
    '/out/good/dir/sub/big.bin',
    '/out/good/implicit/',
    '/out/good/implicit/parent/',
    '/out/good/implicit/parent/file.txt',
    '/out/good/top.txt',
  ]);
  t.same(readFileSync(path.join(home, 'out/good/dir/sub/big.bin')), big);
  t.equal(readFileSync(path.join(home, 'out/good/top.txt'), 'utf8'), 'top');
});

t.test('overwrite policy: 1 fails before writing, 2 replaces, 3 skips existing files', async (t) => {
  await h.put(
    U,
    '/in/ow.zip',
    craftZip([
      { name: 'a.txt', data: Buffer.from('new-a') },
      { name: 'b.txt', data: Buffer.from('new-b') },
    ]),
  );
  await h.put(U, '/ow/a.txt', 'old-a');
  await t.rejects(run({ name: '/in/ow.zip', target: '/ow' }), /\/ow\/a\.txt already exists \(overwrite 1: fail\)/);
  t.notOk(existsSync(path.join(home, 'ow/b.txt')), 'nothing written');
  await run({ name: '/in/ow.zip', target: '/ow', overwrite: 3 });
  t.equal(readFileSync(path.join(home, 'ow/a.txt'), 'utf8'), 'old-a', 'skipped');
  t.equal(readFileSync(path.join(home, 'ow/b.txt'), 'utf8'), 'new-b');
  await run({ name: '/in/ow.zip', target: '/ow', overwrite: 2 });
  t.equal(readFileSync(path.join(home, 'ow/a.txt'), 'utf8'), 'new-a', 'replaced');
});

const refusals: { name: string; entries: Parameters<typeof craftZip>[0]; reason: RegExp; cfg?: Record<string, unknown> }[] = [
  {
    name: 'zip slip ../x',
    entries: [
      { name: 'ok.txt', data: Buffer.from('ok') },
      { name: '../x', data: Buffer.from('escaped') },
    ],
    reason: /invalid relative path: \.\.\/x|escapes|'\.\.'/,
  },
  { name: 'zip slip deep ../../../', entries: [{ name: 'a/../../../../x', data: Buffer.from('escaped') }], reason: /invalid relative path|escapes|'\.\.'/ },
  { name: 'absolute path', entries: [{ name: '/etc/x', data: Buffer.from('abs') }], reason: /absolute path/ },
  { name: 'windows drive path', entries: [{ name: 'C:/x', data: Buffer.from('abs') }], reason: /absolute path/ },
  { name: 'backslash escape', entries: [{ name: '..\\x', data: Buffer.from('bs') }], reason: /invalid characters|'\.\.'/ },
  {
    name: 'symlink entry',
    entries: [
      { name: 'ok.txt', data: Buffer.from('ok') },
      { name: 'link', data: Buffer.from('/etc/passwd'), unixMode: 0o120777 },
    ],
    reason: /symbolic links are not extracted/,
  },
  { name: 'device entry', entries: [{ name: 'dev', data: Buffer.alloc(0), unixMode: 0o020644 }], reason: /not a regular file or directory/ },
  {
    name: 'duplicate names',
    entries: [
      { name: 'a.txt', data: Buffer.from('1') },
      { name: 'a.txt', data: Buffer.from('2') },
    ],
    reason: /appears twice/,
  },
  {
    name: 'file and directory of one name',
    entries: [
      { name: 'a', data: Buffer.from('1') },
      { name: 'a/b', data: Buffer.from('2') },
    ],
    reason: /both a file and a directory/,
  },
  { name: 'zip bomb: high ratio', entries: [{ name: 'zeros.bin', data: Buffer.alloc(20 * 1024 * 1024) }], reason: /compression ratio above max_ratio \(100\)/ },
  {
    name: 'zip bomb: many entries',
    entries: Array.from({ length: 10_001 }, (_, i) => ({ name: `f${i}`, data: Buffer.from('x'), deflate: false })),
    reason: /more than max_entries \(10000\) entries/,
  },
  {
    name: 'max_entries configured',
    entries: Array.from({ length: 6 }, (_, i) => ({ name: `f${i}`, data: Buffer.from('x') })),
    reason: /more than max_entries \(5\)/,
    cfg: { max_entries: 5 },
  },
  {
    name: 'total size above max_size',
    entries: [
      { name: 'a', data: randomBytes(3000) },
      { name: 'b', data: randomBytes(3000) },
    ],
    reason: /uncompressed size above max_size \(5000 bytes\)/,
    cfg: { max_size: 5000 },
  },
  {
    name: 'max_ratio configured',
    entries: [{ name: 'z', data: Buffer.alloc(100_000) }],
    reason: /compression ratio above max_ratio \(5\)/,
    cfg: { max_ratio: 5 },
  },
  {
    name: 'sizes that lie (declared small, inflates big) after a good entry',
    entries: [
      { name: 'good.txt', data: Buffer.from('good') },
      { name: 'liar.bin', data: Buffer.alloc(64 * 1024, 1), declaredSize: 10 },
    ],
    reason: /liar\.bin|too many bytes|uncompressed size/i,
    cfg: { max_ratio: 10_000 },
  },
  { name: 'not a zip', entries: [], reason: /archive refused/ },
];

for (const [i, c] of refusals.entries()) {
  t.test(`refused: ${c.name}`, async (t) => {
    const zip = c.entries.length ? craftZip(c.entries) : randomBytes(1000);
    await h.put(U, `/in/bad${i}.zip`, zip);
    const before = snapshot();
    await t.rejects(run({ name: `/in/bad${i}.zip`, target: `/bad/t${i}`, ...c.cfg }), c.reason);
    t.same(snapshot(), before, 'nothing created inside or outside the target');
    t.notOk(existsSync(path.join(home, `bad/t${i}`)), 'the target directory was not left behind');
  });
}

t.test('a refusal into an existing target leaves it as it was', async (t) => {
  await h.put(U, '/keep/existing.txt', 'mine');
  await h.put(
    U,
    '/in/slip.zip',
    craftZip([
      { name: 'fine.txt', data: Buffer.from('x') },
      { name: 'sub/../../../escape', data: Buffer.from('x') },
    ]),
  );
  const before = snapshot();
  await t.rejects(run({ name: '/in/slip.zip', target: '/keep' }), /archive refused/);
  t.same(snapshot(), before);
});

t.test('quota: an archive larger than what is left fails and leaves nothing', async (t) => {
  // 3 x 8 MB of hex text (a ~13 MB archive): the third entry does not fit in the 30 MB quota
  await h.put(U, '/in/q.zip', craftZip([0, 1, 2].map((k) => ({ name: `r${k}.txt`, data: Buffer.from(randomBytes(4 * 1024 * 1024).toString('hex')) }))));
  const before = snapshot();
  await t.rejects(run({ name: '/in/q.zip', target: '/quota-out' }), /quota/);
  t.same(snapshot(), before);
  await h.run(U, { type: 2, deletes: ['/in/q.zip'] });
});

t.test('the archive must not be replaced by its own extraction', async (t) => {
  await h.put(U, '/self/a.zip', craftZip([{ name: 'a.zip', data: Buffer.from('x') }]));
  await t.rejects(run({ name: '/self/a.zip', target: '/self', overwrite: 2 }), /lies inside the target/);
});
