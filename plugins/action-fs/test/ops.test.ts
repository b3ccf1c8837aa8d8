import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { TOKENS, type EventBus } from '@ferry/core';
import { unzip } from '@ferry/testkit';
import { harness, local } from './helpers.js';

// Sub-types 1-6 and 8 on a local user whose own permissions allow nothing
// but listing and whose file patterns deny *.csv: the action has full
// access inside the user's tree (as the reference does), stays confined to
// it, counts the quota and publishes no filesystem event.

const h = await harness();
t.teardown(() => h.close());
const U = 'ops-user';
const home = await h.user(U, local, {
  filters: { file_patterns: [{ path: '/', denied_patterns: ['*.csv'] }] },
});

const events: unknown[] = [];
h.ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('fs', (e) => void events.push(e));

const run = (cfg: Record<string, unknown>) => h.run(U, cfg);
const usage = async () => {
  const r = await h.ta.inject('GET', `/api/v2/users/${U}`, { token: h.admin });
  const u = r.result as { used_quota_size: number; used_quota_files: number };
  return [u.used_quota_size, u.used_quota_files];
};

t.test('1 rename: from/to list, parents created, update_modtime, permissions and patterns not applied', async (t) => {
  await h.put(U, '/r/a.csv', 'alpha');
  await h.put(U, '/r/b.txt', 'beta');
  utimesSync(path.join(home, 'r/b.txt'), new Date('2001-01-01'), new Date('2001-01-01'));
  await run({
    type: 1,
    renames: [
      { key: '/r/a.csv', value: '/r2/deep/a.csv' },
      { key: '/r/b.txt', value: '/r/c.txt', update_modtime: true },
    ],
  });
  t.equal(readFileSync(path.join(home, 'r2/deep/a.csv'), 'utf8'), 'alpha');
  t.notOk(existsSync(path.join(home, 'r/a.csv')));
  t.ok(Date.now() - statSync(path.join(home, 'r/c.txt')).mtimeMs < 60_000, 'modification time updated');
  await t.rejects(run({ type: 1, renames: [{ key: '/r/missing', value: '/r/x' }] }), /rename \/r\/missing -> \/r\/x: .*no such file/);
  await t.rejects(run({ type: 1, renames: [{ key: '/r/c.txt', value: '/../../etc/x' }] }), /'\.\.'/, 'a target escaping the root is refused');
});

t.test('2 delete: trailing / empties and keeps, without it removes recursively; quota credited', async (t) => {
  await h.put(U, '/d/keep/x.txt', '12345');
  await h.put(U, '/d/keep/sub/y.txt', '123');
  await h.put(U, '/d/gone/z.txt', '1');
  await h.put(U, '/d/file.txt', '1');
  const before = await usage();
  await run({ type: 2, deletes: ['/d/keep/', '/d/gone', '/d/file.txt'] });
  t.ok(statSync(path.join(home, 'd/keep')).isDirectory(), 'the emptied directory stays');
  t.same(await h.tree(U, '/d'), ['/d/keep/'], 'everything else is gone');
  const after = await usage();
  t.same([before[0]! - after[0]!, before[1]! - after[1]!], [10, 4], 'the quota is credited with the removed bytes and files');
  await t.rejects(run({ type: 2, deletes: ['/d/missing'] }), /delete \/d\/missing: .*no such file/);
  await t.rejects(run({ type: 2, deletes: ['/d/keep/nofile/'] }), /no such file/);
});

t.test('3 mkdirs: parents created, existing directories fine, a file in the way fails', async (t) => {
  await run({ type: 3, mkdirs: ['/m/a/b/c', '/m/a'] });
  t.ok(statSync(path.join(home, 'm/a/b/c')).isDirectory());
  await h.put(U, '/m/file', 'x');
  await t.rejects(run({ type: 3, mkdirs: ['/m/file'] }), /mkdir \/m\/file: .*not a directory/);
});

t.test('4 exist: fails naming every missing path', async (t) => {
  await h.put(U, '/e/here.txt', 'x');
  await run({ type: 4, exist: ['/e/here.txt', '/e'] });
  await t.rejects(run({ type: 4, exist: ['/e/here.txt', '/e/nope', '/e/also-nope'] }), /missing: \/e\/nope, \/e\/also-nope/);
});

t.test('5 compress: files and trees in one zip, names relative to the common directory', async (t) => {
  await h.put(U, '/c/src/one.txt', 'one');
  await h.put(U, '/c/src/tree/two.csv', 'two');
  await h.put(U, '/c/src/tree/deeper/three.bin', Buffer.alloc(100_000, 7));
  await run({ type: 5, compress: { name: '/c/out/archive.zip', paths: ['/c/src/one.txt', '/c/src/tree'] } });
  const entries = unzip(readFileSync(path.join(home, 'c/out/archive.zip')));
  t.same([...entries.keys()].sort(), ['one.txt', 'tree/', 'tree/deeper/', 'tree/deeper/three.bin', 'tree/two.csv']);
  t.equal(entries.get('tree/two.csv')!.toString(), 'two');
  t.same(entries.get('tree/deeper/three.bin'), Buffer.alloc(100_000, 7));
  await t.rejects(run({ type: 5, compress: { name: '/c/src/inside.zip', paths: ['/c/src'] } }), /cannot be written inside \/c\/src/);
  await t.rejects(run({ type: 5, compress: { name: '/c/out/x.zip', paths: ['/c/src/one.txt', '/c/nope'] } }), /no such file/);
  t.notOk(existsSync(path.join(home, 'c/out/x.zip')), 'no archive left by a failed run');
});

t.test('6 copy: files and trees, an existing target file replaced', async (t) => {
  await h.put(U, '/k/a.txt', 'A');
  await h.put(U, '/k/t/b.txt', 'B');
  await h.put(U, '/k/dst.txt', 'old');
  await run({
    type: 6,
    copy: [
      { key: '/k/a.txt', value: '/k/dst.txt' },
      { key: '/k/t', value: '/k2/t' },
    ],
  });
  t.equal(readFileSync(path.join(home, 'k/dst.txt'), 'utf8'), 'A');
  t.equal(readFileSync(path.join(home, 'k2/t/b.txt'), 'utf8'), 'B');
  t.ok(existsSync(path.join(home, 'k/a.txt')), 'the source stays');
  await t.rejects(run({ type: 6, copy: [{ key: '/k/t', value: '/k/t/inside' }] }), /into itself/);
});

t.test('8 metadata check: size and age bounds; metadata conditions need a backend with user metadata', async (t) => {
  await h.put(U, '/meta/f.bin', Buffer.alloc(1000));
  utimesSync(path.join(home, 'meta/f.bin'), new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
  await run({ type: 8, metadata_check: { paths: ['/meta/f.bin'], min_size: 1000, max_size: 1000, min_age: 3000, max_age: 4000 } });
  await t.rejects(
    run({ type: 8, metadata_check: { paths: ['/meta/f.bin', '/meta/none'], min_size: 1001, max_age: 60 } }),
    /metadata check failed: \/meta\/f\.bin: size 1000 is below min_size 1001, modified 36\d\ds ago, more than max_age 60s; \/meta\/none: does not exist/,
  );
  await t.rejects(run({ type: 8, metadata_check: { paths: ['/meta'], max_size: 10 } }), /\/meta: is a directory/);
  await t.rejects(
    run({ type: 8, metadata_check: { paths: ['/meta/f.bin'], metadata: [{ key: 'owner', condition: 3 }] } }),
    /the storage backend has no user metadata/,
  );
});

t.test('quota: a write that does not fit fails and leaves nothing', async (t) => {
  const Q = 'quota-user';
  const qhome = await h.user(Q, local, { quota_size: 100_000 });
  await h.put(Q, '/q/rnd.bin', randomBytes(60_000));
  await h.put(Q, '/q/small.txt', 'small');
  await t.rejects(h.run(Q, { type: 6, copy: [{ key: '/q/rnd.bin', value: '/q/copy.bin' }] }), /quota/);
  await t.rejects(h.run(Q, { type: 5, compress: { name: '/q/rnd.zip', paths: ['/q/rnd.bin'] } }), /quota/);
  t.notOk(existsSync(path.join(qhome, 'q/copy.bin')));
  t.notOk(existsSync(path.join(qhome, 'q/rnd.zip')));
  await h.run(Q, { type: 5, compress: { name: '/q/small.zip', paths: ['/q/small.txt'] } });
  t.ok(existsSync(path.join(qhome, 'q/small.zip')), 'what fits is written');
});

t.test('no filesystem event is published by the action', async (t) => {
  t.same(events, [], 'none of the runs above fired an event');
});

t.test('on-demand rules run for every user matching the rule (here: all)', async (t) => {
  const a = await h.user('sched-a', local);
  const b = await h.user('sched-b', local);
  await h.run('', { type: 3, mkdirs: ['/made-on-demand'] }, { rule: { trigger: 6 } });
  t.ok(existsSync(path.join(a, 'made-on-demand')));
  t.ok(existsSync(path.join(b, 'made-on-demand')));
  t.ok(existsSync(path.join(home, 'made-on-demand')));
});

t.test('virtual folders: moves and copies across mounts, the folder quota, mount points protected', async (t) => {
  const mapped = path.join(h.ta.dataDir, 'folders', 'vf-data');
  mkdirSync(mapped, { recursive: true });
  const f = await h.ta.inject('POST', '/api/v2/folders', { token: h.admin, payload: { name: 'vf-data', mapped_path: mapped, filesystem: { provider: 0 } } });
  t.equal(f.statusCode, 201, f.payload);
  const V = 'vf-user';
  const vhome = await h.user(V, local, { virtual_folders: [{ name: 'vf-data', virtual_path: '/data', quota_size: 10_000, quota_files: 0 }] });
  await h.put(V, '/in/small.txt', 'small');
  await h.put(V, '/in/big.bin', randomBytes(20_000));
  await h.run(V, { type: 1, renames: [{ key: '/in/small.txt', value: '/data/moved/small.txt' }] });
  t.equal(readFileSync(path.join(mapped, 'moved/small.txt'), 'utf8'), 'small', 'moved into the folder');
  t.notOk(existsSync(path.join(vhome, 'in/small.txt')));
  await t.rejects(h.run(V, { type: 6, copy: [{ key: '/in/big.bin', value: '/data/big.bin' }] }), /quota/, "the folder's own quota holds");
  t.notOk(existsSync(path.join(mapped, 'big.bin')));
  await h.run(V, { type: 6, copy: [{ key: '/data/moved', value: '/back' }] });
  t.equal(readFileSync(path.join(vhome, 'back/small.txt'), 'utf8'), 'small', 'copied out of the folder');
  await t.rejects(h.run(V, { type: 2, deletes: ['/data'] }), /virtual folder/, 'a mount point cannot be removed');
  await t.rejects(h.run(V, { type: 1, renames: [{ key: '/data', value: '/elsewhere' }] }), /virtual folder/);
  await h.run(V, { type: 2, deletes: ['/data/'] });
  t.same(readdirSync(mapped), [], 'but it can be emptied');
});
