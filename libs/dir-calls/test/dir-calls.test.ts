import t, { type Test } from 'tap';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync, openSync, closeSync, lstatSync, constants } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addonPath, loadAddon, type DirCallsAddon, type SweepResult } from '../src/index.js';

const addon = loadAddon();

function scratch(t: Test): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'dir-calls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const sizesOf = (r: SweepResult) => Array.from(new Float64Array(r.sizes));

t.test('the addon is built on this machine (npm ci runs node-gyp; FERRY_DIR_CALLS=off is the only way out)', async (t) => {
  const off = process.env.FERRY_DIR_CALLS === 'off';
  t.equal(addonPath() === null, off);
  t.equal(addon === null, off);
});

t.test('native sweep', { skip: addon === null ? 'FERRY_DIR_CALLS=off' : false }, async (t) => {
  const a = addon as DirCallsAddon;

  t.test('counted: regular files removed with their sizes, subdirectories and links answered or unlinked, nothing outside touched', async (t) => {
    const root = scratch(t);
    const dir = path.join(root, 'd');
    mkdirSync(path.join(dir, 'sub'), { recursive: true });
    writeFileSync(path.join(dir, 'sub', 'kept.txt'), 'inside a subdirectory');
    writeFileSync(path.join(dir, 'a.txt'), 'aaa');
    writeFileSync(path.join(dir, 'empty'), '');
    writeFileSync(path.join(dir, 'näme ünicode'), '12345');
    writeFileSync(path.join(root, 'outside.txt'), 'outside');
    symlinkSync(path.join(root, 'outside.txt'), path.join(dir, 'link-out'));
    symlinkSync(root, path.join(dir, 'link-dir'));
    const r = a.sweep(dir, [], 1000, true, 0, 0);
    const got = Object.fromEntries(r.files.map((f, i) => [f, sizesOf(r)[i]]));
    t.same(got, { 'a.txt': 3, empty: 0, 'näme ünicode': 5 }, 'the regular files and their sizes');
    t.same(r.dirs, ['sub']);
    t.same(r.errors, []);
    t.equal(r.more, false);
    t.same(readdirSync(dir).sort(), ['sub'], 'links unlinked (not counted), the subdirectory left');
    t.ok(existsSync(path.join(root, 'outside.txt')), 'a link target outside is untouched');
    t.ok(existsSync(path.join(dir, 'sub', 'kept.txt')), 'a subdirectory is not entered');
  });

  t.test('not counted: files unlinked, nothing answered but the subdirectories', async (t) => {
    const dir = scratch(t);
    for (let i = 0; i < 50; i++) writeFileSync(path.join(dir, `f${i}`), 'x');
    mkdirSync(path.join(dir, 'sub'));
    const r = a.sweep(dir, [], 1000, false, 0, 0);
    t.same(r.files, []);
    t.equal(r.sizes.byteLength, 0);
    t.same(r.dirs, ['sub']);
    t.same(readdirSync(dir), ['sub']);
  });

  t.test('max: stops after that many entries and answers more; skip: names left alone', async (t) => {
    const dir = scratch(t);
    for (let i = 0; i < 25; i++) writeFileSync(path.join(dir, `f${i}`), 'x');
    const r1 = a.sweep(dir, ['f3', 'f7'], 10, true, 0, 0);
    t.equal(r1.files.length, 10);
    t.equal(r1.more, true);
    t.equal(readdirSync(dir).length, 15);
    const r2 = a.sweep(dir, ['f3', 'f7'], 100, true, 0, 0);
    t.equal(r2.files.length, 13);
    t.equal(r2.more, false);
    t.notOk(r1.files.includes('f3') || r2.files.includes('f3') || r1.files.includes('f7') || r2.files.includes('f7'));
    t.same(readdirSync(dir).sort(), ['f3', 'f7']);
    // max 0 with entries left: nothing taken, more
    const r3 = a.sweep(dir, [], 0, true, 0, 0);
    t.same([r3.files, r3.more], [[], true]);
  });

  t.test('parts: every entry in exactly one part', async (t) => {
    const dir = scratch(t);
    const names = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? `ü-${i}` : `file-${i}.txt`));
    for (const n of names) closeSync(openSync(path.join(dir, n), 'w'));
    const p0 = a.sweep(dir, [], 1000, true, 0, 2);
    t.ok(p0.files.length > 50 && p0.files.length < 250, `part 0 took ${p0.files.length}`);
    t.equal(readdirSync(dir).length, 300 - p0.files.length, 'part 0 left the others');
    const p1 = a.sweep(dir, [], 1000, true, 1, 2);
    t.same([...p0.files, ...p1.files].sort(), [...names].sort());
    t.same(readdirSync(dir), []);
  });

  t.test('a directory that cannot be opened throws with its code; bad arguments throw', async (t) => {
    const dir = scratch(t);
    t.throws(() => a.sweep(path.join(dir, 'missing'), [], 10, true, 0, 0), { code: 'ENOENT', message: /^ENOENT: .*opendir/ });
    writeFileSync(path.join(dir, 'file'), 'x');
    t.throws(() => a.sweep(path.join(dir, 'file'), [], 10, true, 0, 0), { code: 'ENOTDIR' });
    t.throws(() => (a.sweep as unknown as (...x: unknown[]) => unknown)(dir), TypeError);
    t.throws(() => (a.sweep as unknown as (...x: unknown[]) => unknown)(dir, 'not an array', 10, true, 0, 0));
    t.ok(existsSync(path.join(dir, 'file')), 'nothing removed on a bad call');
  });

  t.test('through a descriptor path (/proc/self/fd/N), as the batch I/O workers name directories', async (t) => {
    const dir = scratch(t);
    writeFileSync(path.join(dir, 'one'), '1');
    const fd = openSync(dir, 'r');
    t.teardown(() => closeSync(fd));
    const r = a.sweep(`/proc/self/fd/${fd}`, [], 10, true, 0, 0);
    t.same(r.files, ['one']);
    t.same(readdirSync(dir), []);
  });

  t.test('readFiles: regular files read whole, larger ones, directories, links, FIFOs and missing names told apart', async (t) => {
    const dir = scratch(t);
    writeFileSync(path.join(dir, 'a'), 'alpha');
    writeFileSync(path.join(dir, 'empty'), '');
    writeFileSync(path.join(dir, 'max'), Buffer.alloc(100, 9));
    writeFileSync(path.join(dir, 'over'), Buffer.alloc(101, 9));
    mkdirSync(path.join(dir, 'sub'));
    symlinkSync('a', path.join(dir, 'link'));
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    const names = ['a', 'empty', 'max', 'over', 'sub', 'link', 'fifo', 'missing', 'sub/x', '', 'a'];
    const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
    const r = a.readFiles(dir, names, 100, flags);
    const m = new Float64Array(r.meta);
    t.equal(m.length, 5 * names.length);
    const kinds = names.map((_, i) => m[5 * i]);
    t.same(kinds, [0, 0, 0, 1, 2, 2, 2, 2, 2, 2, 0]);
    const errors = Object.fromEntries(r.errors.map(([i, code]) => [names[i]!, code]));
    t.same(errors, { sub: 'EISDIR', link: 'ELOOP', fifo: 'NOTREG', missing: 'ENOENT', 'sub/x': 'EINVAL', '': 'EINVAL' });
    const data = Buffer.from(r.data);
    const bytes = (i: number) => data.subarray(m[5 * i + 1], m[5 * i + 1]! + m[5 * i + 2]!);
    t.equal(bytes(0).toString(), 'alpha');
    t.equal(bytes(1).length, 0);
    t.same(bytes(2), Buffer.alloc(100, 9));
    t.equal(bytes(10).toString(), 'alpha', 'a name asked twice is read twice');
    t.equal(data.length, 5 + 0 + 100 + 5, 'only the files read are in data');
    const st = lstatSync(path.join(dir, 'a'));
    t.equal(m[3], st.mtimeMs, 'mtimeMs as node computes it');
    t.equal(m[4], st.mode);
    t.throws(() => a.readFiles(path.join(dir, 'nowhere'), ['a'], 100, flags), { code: 'ENOENT' });
    t.throws(() => (a.readFiles as unknown as (...x: unknown[]) => unknown)(dir, ['a']), TypeError);
  });
});
