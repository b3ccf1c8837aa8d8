import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Test } from 'tap';
import type { Fs } from '@ferry/core';
import { isFsErrorLike } from './fs-helpers.js';

export interface LocalEscapeOptions {
  name: string;
  /** An Fs confined to `root` (an existing directory), with `dataDir` for temporary files. */
  create(root: string, dataDir: string): Promise<Fs>;
}

const SECRET = 'TOP SECRET: this file lives outside the root';

/**
 * Each case gets its own fixture:
 *   case-N/outside/{secret.txt, sub/deep.txt}   must never be read or changed
 *   case-N/root/                                the Fs root, with links planted in it
 *   case-N/data/                                temp area (must end up empty)
 */
async function fixture(dir: string, create: LocalEscapeOptions['create']): Promise<{ fs: Fs; root: string; outside: string; data: string }> {
  const outside = path.join(dir, 'outside');
  const root = path.join(dir, 'root');
  const data = path.join(dir, 'data');
  await mkdir(path.join(outside, 'sub'), { recursive: true });
  await mkdir(path.join(root, 'sub'), { recursive: true });
  await writeFile(path.join(outside, 'secret.txt'), SECRET);
  await writeFile(path.join(outside, 'sub', 'deep.txt'), SECRET);
  await writeFile(path.join(root, 'inside.txt'), 'inside');
  await symlink('../outside', path.join(root, 'out-dir'));
  await symlink(outside, path.join(root, 'abs-dir'));
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'out-file'));
  await symlink(path.join(outside, 'missing.txt'), path.join(root, 'dangling'));
  await symlink(path.join(outside, 'no-dir'), path.join(root, 'dangling-dir'));
  await symlink('../..', path.join(root, 'sub', 'up'));
  await symlink('..', path.join(root, 'sub', 'root-link'));
  await symlink('sub', path.join(root, 'in-link'));
  await symlink('loop-b', path.join(root, 'loop-a'));
  await symlink('loop-a', path.join(root, 'loop-b'));
  return { fs: await create(root, data), root, outside, data };
}

/** Everything under `dir` except the subtrees named in `skip`: path → type and content digest. */
async function snapshot(dir: string, skip: string[] = []): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string): Promise<void> => {
    for (const name of await readdir(d)) {
      const full = path.join(d, name);
      const rel = path.relative(dir, full);
      if (skip.includes(rel)) continue;
      const st = await lstat(full);
      if (st.isSymbolicLink()) out[rel] = `link:${await readlink(full)}`;
      else if (st.isDirectory()) {
        out[rel] = `dir:${st.mtimeMs}`;
        await walk(full);
      } else
        out[rel] = `file:${st.mtimeMs}:${createHash('sha256')
          .update(await readFile(full))
          .digest('hex')}`;
    }
  };
  await walk(dir);
  return out;
}

export type EscapeExpectation = 'ESCAPE' | 'INVALID' | 'REFUSED' | 'NOT_FOUND';

/** Crafted paths and what stat() must answer (REFUSED: ESCAPE or INVALID, e.g. a symlink loop). */
export function craftedPaths(outside: string, root: string): [string, EscapeExpectation][] {
  return [
    ['..', 'ESCAPE'],
    ['../', 'ESCAPE'],
    ['/..', 'ESCAPE'],
    ['../outside/secret.txt', 'ESCAPE'],
    ['/../outside/secret.txt', 'ESCAPE'],
    ['sub/../../outside/secret.txt', 'ESCAPE'],
    ['/sub/../../outside', 'ESCAPE'],
    ['./../outside', 'ESCAPE'],
    ['/./../outside/secret.txt', 'ESCAPE'],
    ['..../outside', 'ESCAPE'],
    ['.../outside', 'ESCAPE'],
    ['.. /outside', 'ESCAPE'],
    [' ../outside', 'ESCAPE'],
    ['/sub/in/../../../outside', 'ESCAPE'],
    ['%2e%2e/outside/secret.txt', 'ESCAPE'],
    ['%2E%2E/%2E%2E/outside', 'ESCAPE'],
    ['..%2foutside%2fsecret.txt', 'ESCAPE'],
    ['%2e%2e%2f%2e%2e%2foutside', 'ESCAPE'],
    ['%252e%252e/outside', 'ESCAPE'],
    ['..%5coutside', 'ESCAPE'],
    ['%2e./outside', 'ESCAPE'],
    ['.%2e/outside', 'ESCAPE'],
    ['/sub%2f..%2f..%2foutside', 'ESCAPE'],
    ['..\\outside\\secret.txt', 'ESCAPE'],
    ['\\..\\outside', 'ESCAPE'],
    ['sub\\..\\..\\outside\\secret.txt', 'ESCAPE'],
    ['/sub\\../..\\outside', 'ESCAPE'],
    ['..\\..\\..\\..\\etc\\passwd', 'ESCAPE'],
    [`${root}/../outside/secret.txt`, 'ESCAPE'],
    ['..\u0000/outside', 'INVALID'],
    ['secret.txt\u0000.jpg', 'INVALID'],
    ['..\t/outside', 'INVALID'],
    ['/sub/\n../outside', 'INVALID'],
    ['\u001b[2J', 'INVALID'],
    // Absolute or foreign spellings land under the root, where nothing like them exists.
    [`${outside}/secret.txt`, 'NOT_FOUND'],
    [outside, 'NOT_FOUND'],
    ['/etc/passwd', 'NOT_FOUND'],
    ['//etc/passwd', 'NOT_FOUND'],
    ['\\\\server\\share\\secret.txt', 'NOT_FOUND'],
    ['C:\\Windows\\system32', 'NOT_FOUND'],
    ['file:///etc/passwd', 'NOT_FOUND'],
    ['．．/outside/secret.txt', 'NOT_FOUND'],
    ['%c0%ae%c0%ae/outside', 'NOT_FOUND'],
    ['..;/outside', 'NOT_FOUND'],
    // Symbolic links planted in the root.
    ['/out-dir', 'ESCAPE'],
    ['/out-dir/secret.txt', 'ESCAPE'],
    ['/out-dir/sub/deep.txt', 'ESCAPE'],
    ['/out-dir/sub', 'ESCAPE'],
    ['/out-dir/new-dir/new-file', 'ESCAPE'],
    ['/abs-dir', 'ESCAPE'],
    ['/abs-dir/secret.txt', 'ESCAPE'],
    ['/out-file', 'ESCAPE'],
    ['/dangling', 'ESCAPE'],
    ['/dangling-dir/new-file', 'ESCAPE'],
    ['/sub/up', 'ESCAPE'],
    ['/sub/up/outside/secret.txt', 'ESCAPE'],
    ['/sub/root-link/out-dir/secret.txt', 'ESCAPE'],
    ['/in-link/up/outside', 'ESCAPE'],
    ['/in-link/root-link/abs-dir/sub', 'ESCAPE'],
    ['/loop-a', 'REFUSED'],
    ['/loop-a/x', 'REFUSED'],
  ];
}

async function drain(p: Promise<NodeJS.ReadableStream>): Promise<string> {
  let s = '';
  for await (const c of await p) s += String(c);
  return s;
}

async function writeVia(fs: Fs, p: string): Promise<void> {
  const h = await fs.openWrite(p);
  h.stream.end('PWNED');
  await h.done;
}

/** Every operation that takes a path, with the crafted path in each position. */
function operations(fs: Fs, p: string): [string, () => Promise<unknown>][] {
  const list = async (): Promise<unknown> => {
    const out = [];
    for await (const page of fs.list(p)) out.push(...page);
    return out;
  };
  return [
    ['stat', () => fs.stat(p)],
    ['openRead', () => drain(fs.openRead(p))],
    ['openRead range', () => drain(fs.openRead(p, { start: 3, end: 20 }))],
    ['list', list],
    ['openWrite', () => writeVia(fs, p)],
    ['openWrite child', () => writeVia(fs, `${p}/planted.txt`)],
    ['mkdir', () => fs.mkdir(`${p}/newdir`)],
    ['mkdir recursive', () => fs.mkdir(`${p}/a/b`, { recursive: true })],
    ['copy from', async () => fs.copy?.(p, '/copied.txt')],
    ['copy to', async () => fs.copy?.('/inside.txt', p)],
    ['rename to', () => fs.rename('/inside.txt', `${p}/moved.txt`)],
    ['chtimes', async () => fs.chtimes?.(p, new Date(0))],
    ['usedSpace', () => fs.usedSpace(p)],
    ['remove child', () => fs.remove(`${p}/secret.txt`)],
    ['rename from', () => fs.rename(p, '/renamed')],
    ['remove', () => fs.remove(p)],
    ['remove recursive', () => fs.remove(p, { recursive: true })],
  ];
}

/**
 * Path-escape suite for backends that store under a local root (fs-local,
 * fs-crypt, third-party local backends). For each of 60+ crafted paths
 * (`..` in every spelling, percent-encoded and double-encoded dots and
 * separators, backslashes, absolute host paths, control characters, and
 * symlinks planted in the root that point outside, dangle, loop or pass
 * through a symlinked parent) it builds a fresh fixture with a secret next to
 * the root, then runs every Fs method with the path in every position and
 * checks: stat() refuses as expected, no call returns the secret, every
 * refusal is an FsError, nothing outside the root changed (byte for byte) and
 * no upload is left in the temp area.
 */
export async function localEscapeConformance(t: Test, opts: LocalEscapeOptions): Promise<void> {
  await t.test(`localEscapeConformance: ${opts.name}`, async (t) => {
    const base = t.testdir({});
    const count = craftedPaths('/x', '/y').length;
    t.ok(count >= 50, `${count} crafted paths`);
    for (let i = 0; i < count; i++) {
      const [label] = craftedPaths('<outside>', '<root>')[i]!;
      await t.test(`path ${i}: ${JSON.stringify(label).slice(0, 60)}`, async (t) => {
        const dir = path.join(base, `case-${i}`);
        await mkdir(dir);
        const { fs, root, outside, data } = await fixture(dir, opts.create);
        t.teardown(() => fs.close());
        const [p, expected] = craftedPaths(outside, root)[i]!;
        const before = await snapshot(dir, ['root', 'data']);

        const statErr = await fs.stat(p).then(
          () => undefined,
          (e: unknown) => e,
        );
        const codes = expected === 'REFUSED' ? ['ESCAPE', 'INVALID'] : [expected];
        t.ok(isFsErrorLike(statErr) && codes.includes(statErr.code), `stat() refuses with ${codes.join('/')}`, {
          found: statErr instanceof Error ? `${statErr.name} ${(statErr as { code?: string }).code} ${statErr.message}` : statErr,
        });

        const leaks: string[] = [];
        const rawErrors: string[] = [];
        for (const [name, op] of operations(fs, p)) {
          try {
            const result = await op();
            if (JSON.stringify(result ?? '').includes('TOP SECRET')) leaks.push(name);
          } catch (err) {
            if (!isFsErrorLike(err)) rawErrors.push(`${name}: ${String(err)}`);
          }
        }
        t.same(leaks, [], 'no operation returned outside content');
        t.same(rawErrors, [], 'every refusal is an FsError');
        t.same(await snapshot(dir, ['root', 'data']), before, 'nothing outside the root changed');
        t.same(await readdir(path.join(data, 'uploads-tmp')).catch(() => []), [], 'no upload left in the temp area');
        t.equal(await readFile(path.join(outside, 'secret.txt'), 'utf8'), SECRET, 'the secret is intact');
      });
    }
  });
}
