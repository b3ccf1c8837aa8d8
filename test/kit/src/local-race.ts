import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Test } from 'tap';
import type { Fs } from '@ferry/core';
import { isFsErrorLike } from './fs-helpers.js';

export interface LocalRaceOptions {
  name: string;
  /** An Fs confined to `root` (an existing directory), with `dataDir` for temporary files. */
  create(root: string, dataDir: string): Promise<Fs>;
  /** Rounds of operations (each round runs every operation once). Default 60. */
  rounds?: number;
}

/** Content of every file outside the root: no answer may ever carry it. */
const CANARY = 'CANARY-OUTSIDE-THE-ROOT';
/** Name of a file that exists only outside the root: no listing may ever show it. */
const CANARY_NAME = 'canary-only-outside.txt';

/**
 * The swapper, a separate process so it truly runs beside the Fs's worker
 * threads: `root/race` is, in turn, a real directory and a symlink to the
 * outside directory (an absolute link, then a relative one).
 */
const SWAPPER = `
const fs = require('node:fs');
const [root, outside] = process.argv.slice(1);
const race = root + '/race', real = root + '/race.real', abs = root + '/race.abs', rel = root + '/race.rel';
try { fs.symlinkSync(outside, abs); } catch {}
try { fs.symlinkSync('../outside', rel); } catch {}
let n = 0;
const stopAt = Date.now() + 120000;
process.stdin.on('data', () => process.exit(0));
(function loop() {
  for (let i = 0; i < 200; i++) {
    const link = (n++ & 1) ? abs : rel;
    try { fs.renameSync(race, real); } catch { try { fs.mkdirSync(real); } catch {} }
    try { fs.renameSync(link, race); } catch {}
    try { fs.renameSync(race, link); } catch {}
    try { fs.renameSync(real, race); } catch {}
  }
  if (Date.now() < stopAt) setImmediate(loop);
})();
`;

async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of await readdir(dir, { recursive: true })) {
    const full = path.join(dir, name);
    const st = await lstat(full);
    out[name] = st.isFile()
      ? `file:${st.mtimeMs}:${st.ctimeMs}:${createHash('sha256')
          .update(await readFile(full))
          .digest('hex')}`
      : `${st.isDirectory() ? 'dir' : 'other'}:${st.mtimeMs}`;
  }
  return out;
}

async function drain(s: NodeJS.ReadableStream): Promise<string> {
  let out = '';
  for await (const c of s) out += String(c);
  return out;
}

async function write(fs: Fs, p: string, body: string): Promise<void> {
  const h = await fs.openWrite(p);
  h.stream.end(body);
  await h.done;
}

/**
 * TOCTOU suite for backends that store under a local root: while another
 * process keeps swapping a directory of the root for a symlink to the
 * outside (absolute and relative), every Fs method is run, many times, on
 * paths through that directory. Nothing outside may be read, listed,
 * written, created, renamed, removed or touched (contents, names, mtimes and
 * ctimes are compared), every failure must be an FsError, and the temp area
 * must end up empty.
 */
export async function localRaceConformance(t: Test, opts: LocalRaceOptions): Promise<void> {
  await t.test(`localRaceConformance: ${opts.name}`, async (t) => {
    const base = t.testdir({});
    const root = path.join(base, 'root');
    const outside = path.join(base, 'outside');
    const data = path.join(base, 'data');
    await mkdir(path.join(outside, 'sub'), { recursive: true });
    await mkdir(path.join(root, 'race'), { recursive: true });
    await mkdir(data);
    for (const name of ['secret.txt', CANARY_NAME, 'sub/deep.txt', 'a.txt']) await writeFile(path.join(outside, name), CANARY);
    const before = await snapshot(outside);
    const fs = await opts.create(root, data);
    t.teardown(() => fs.close());
    await write(fs, '/inside.txt', 'inside');

    const swapper = spawn(process.execPath, ['-e', SWAPPER, root, outside], { stdio: ['pipe', 'ignore', 'inherit'] });
    const exited = new Promise((resolve) => swapper.once('exit', resolve));
    const leaks: string[] = [];
    const rawErrors: string[] = [];
    let succeeded = 0;
    const ops: [string, (i: number) => Promise<unknown>][] = [
      ['write race/secret.txt', () => write(fs, '/race/secret.txt', `inside ${Date.now()}`)],
      ['write race/new', (i) => write(fs, `/race/new-${i}.txt`, 'new')],
      ['read race/secret.txt', async () => drain(await fs.openRead('/race/secret.txt'))],
      ['read race/a.txt', async () => drain(await fs.openRead('/race/a.txt', { start: 0, end: 9 }))],
      ['stat race/secret.txt', () => fs.stat('/race/secret.txt')],
      [
        'list race',
        async () => {
          const names: string[] = [];
          for await (const page of fs.list('/race')) names.push(...page.map((e) => e.name));
          return names;
        },
      ],
      [
        'list race/sub',
        async () => {
          const names: string[] = [];
          for await (const page of fs.list('/race/sub')) names.push(...page.map((e) => e.name));
          return names;
        },
      ],
      ['copy from race', (i) => fs.copy!('/race/secret.txt', `/copied-${i % 5}.txt`)],
      ['copy into race', () => fs.copy!('/inside.txt', '/race/copied.txt')],
      [
        'rename into race',
        async (i) => {
          await write(fs, `/m-${i}.txt`, 'moved');
          await fs.rename(`/m-${i}.txt`, `/race/moved-${i}.txt`);
        },
      ],
      ['rename from race', (i) => fs.rename('/race/a.txt', `/taken-${i}.txt`)],
      ['mkdir race/dir', (i) => fs.mkdir(`/race/dir-${i}`)],
      ['mkdir -p race/a/b', (i) => fs.mkdir(`/race/p-${i}/b`, { recursive: true })],
      ['chtimes race/secret.txt', () => fs.chtimes!('/race/secret.txt', new Date(86_400_000))],
      ['chtimes race/sub', () => fs.chtimes!('/race/sub', new Date(86_400_000))],
      ['usedSpace race', () => fs.usedSpace('/race')],
      ['remove race/deep', () => fs.remove('/race/sub/deep.txt')],
      ['remove race/secret.txt', () => fs.remove('/race/secret.txt')],
      ['remove -r race/sub', () => fs.remove('/race/sub', { recursive: true })],
    ];
    const rounds = opts.rounds ?? 60;
    try {
      for (let i = 0; i < rounds; i++) {
        // Half the operations run one after another, half at once: both interleavings with the swapper.
        const run = async ([name, op]: (typeof ops)[number]): Promise<void> => {
          try {
            const result = await op(i);
            succeeded++;
            const text = JSON.stringify(result ?? '');
            if (text.includes(CANARY) || text.includes(CANARY_NAME) || text.includes('deep.txt')) leaks.push(`${name}: ${text.slice(0, 80)}`);
          } catch (err) {
            if (!isFsErrorLike(err)) rawErrors.push(`${name}: ${String(err)}`);
          }
        };
        if (i % 2) await Promise.all(ops.map(run));
        else for (const op of ops) await run(op);
      }
    } finally {
      swapper.stdin!.end('stop');
      await exited;
    }
    t.ok(succeeded > rounds, `operations went through while the tree was changing (${succeeded} of ${rounds * ops.length})`);
    t.same(leaks, [], 'no answer carried outside content or names');
    t.same(rawErrors, [], 'every refusal is an FsError');
    t.same(await snapshot(outside), before, 'nothing outside the root was written, created, renamed, removed or touched');
    t.same(await readdir(path.join(data, 'uploads-tmp')).catch(() => []), [], 'no upload left in the temp area');
    t.same(
      (await readdir(outside, { recursive: true })).filter((n) => n.includes('.ferry-tmp-')),
      [],
      'no hidden temporary file outside',
    );
    // sanity: the link really pointed outside, so the suite could have seen an escape
    await symlink(outside, path.join(base, 'probe'));
    t.equal(await readFile(path.join(base, 'probe', 'secret.txt'), 'utf8'), CANARY, 'the outside tree was reachable through a link');
  });
}
