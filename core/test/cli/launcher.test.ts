import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// core/bin/ferry: the shell launcher that starts the compiled CLI with the
// memory settings of a long-running server (see the comment in the script).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const launcher = path.join(root, 'core/bin/ferry');
const compiled = existsSync(path.join(root, 'core/dist/src/cli.js'));

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('SERVICE_') || k.startsWith('TAP') || k.startsWith('MALLOC_') || k === 'GLIBC_TUNABLES' || k === 'FERRY_NODE_OPTIONS') continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/** Starts `<bin> serve`; resolves once it listens with the process's environment and command line, then stops it. */
function serveAndInspect(bin: string, dir: string, extraEnv: Record<string, string> = {}) {
  const config = path.join(dir, 'ferry.yaml');
  writeFileSync(config, 'common:\n  data_dir: data\nhttpd:\n  bindings:\n    - port: 0\nplugins: []\n');
  const p = spawn(bin, ['serve', '--config', config], { cwd: dir, env: cleanEnv(extraEnv) });
  let out = '';
  p.stderr.on('data', (d) => (out += d));
  let seen: { environ: string[]; argv: string[]; limits: string } | undefined;
  return new Promise<{ environ: string[]; argv: string[]; limits: string }>((resolve, reject) => {
    p.stdout.on('data', (d) => {
      out += d;
      if (seen || !/"msg":"listening"/.test(out)) return;
      // exec: the launcher's pid is the node process's pid
      seen = {
        environ: readFileSync(`/proc/${p.pid}/environ`, 'latin1').split('\0'),
        argv: readFileSync(`/proc/${p.pid}/cmdline`, 'latin1').split('\0'),
        limits: readFileSync(`/proc/${p.pid}/limits`, 'latin1'),
      };
      p.kill('SIGTERM');
    });
    p.on('close', (code) => (seen ? resolve(seen) : reject(new Error(`exited ${code} before listening: ${out}`))));
  });
}

t.test('core/bin/ferry', { skip: compiled ? false : 'core/dist is not built (npm run build); CI builds it' }, async (t) => {
  t.test('--version through the launcher', async (t) => {
    const p = spawn(launcher, ['--version'], { env: cleanEnv({}) });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    const code = await new Promise((r) => p.on('close', r));
    t.equal(code, 0);
    t.match(out, /^ferry \S+ \(commit \S+, built \S+\)\n$/);
  });

  t.test('serve gets the allocator and V8 defaults', async (t) => {
    const { environ, argv } = await serveAndInspect(launcher, t.testdir({}));
    t.ok(environ.includes('MALLOC_MMAP_THRESHOLD_=4194304'), 'fixed mmap threshold');
    t.ok(environ.includes('MALLOC_ARENA_MAX=2'), 'bounded arenas');
    t.notOk(
      environ.some((e) => e.startsWith('GLIBC_TUNABLES=')),
      'no huge pages for what glibc maps: they raise transfer peaks (see the launcher)',
    );
    t.ok(argv.includes('--max-semi-space-size=8'), 'small young generation');
    t.ok(argv.includes('--expose-gc'), 'paced young collections (core/src/vfs/gc-pacer.ts)');
    t.ok(
      argv.some((a) => a.endsWith('core/dist/src/cli.js')),
      'runs the compiled CLI',
    );
  });

  t.test('the soft open-files limit is raised to the hard one', async (t) => {
    const dir = t.testdir({});
    // a shell that lowers its soft limit, as a service manager with a low default would
    const wrap = path.join(dir, 'low-limit.sh');
    writeFileSync(wrap, `#!/bin/sh\nulimit -Sn 256\nexec '${launcher}' "$@"\n`, { mode: 0o755 });
    const { limits } = await serveAndInspect(wrap, dir);
    const m = /^Max open files\s+(\d+)\s+(\d+)/m.exec(limits);
    t.ok(m, limits);
    t.equal(m![1], m![2], `soft limit ${m![1]} raised to the hard limit ${m![2]}`);
    t.not(m![1], '256');
  });

  t.test('values set by the operator win, also through a symlink (node_modules/.bin)', async (t) => {
    const dir = t.testdir({});
    const link = path.join(dir, 'ferry');
    symlinkSync(launcher, link);
    const { environ, argv } = await serveAndInspect(link, dir, {
      MALLOC_ARENA_MAX: '4',
      GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1',
      FERRY_NODE_OPTIONS: '--max-semi-space-size=16',
    });
    t.ok(environ.includes('MALLOC_ARENA_MAX=4'));
    t.ok(environ.includes('GLIBC_TUNABLES=glibc.malloc.hugetlb=1'), "the operator's tunables reach node");
    t.ok(environ.includes('MALLOC_MMAP_THRESHOLD_=4194304'));
    t.ok(argv.includes('--max-semi-space-size=16'));
    t.notOk(argv.includes('--max-semi-space-size=8'));
  });
});
