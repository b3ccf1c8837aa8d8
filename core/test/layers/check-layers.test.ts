import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// scripts/check-layers.mjs (run by `npm run lint`) on small trees laid out like the repository.

function scriptPath(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const p = path.join(dir, 'scripts/check-layers.mjs');
    if (existsSync(p)) return p;
  }
  throw new Error('scripts/check-layers.mjs not found above the test');
}
const script = scriptPath();

/** A tree with `files` (path -> text) beside an empty core/src/sdk, checked by the script. */
function check(t: Test, files: Record<string, string>): { code: number | null; out: string } {
  const root = t.testdir({});
  mkdirSync(path.join(root, 'core/src/sdk'), { recursive: true });
  writeFileSync(path.join(root, 'core/src/sdk/index.ts'), "export * from './streams.js';\n");
  writeFileSync(path.join(root, 'core/src/sdk/streams.ts'), 'export const a = 1;\n');
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    writeFileSync(path.join(root, p), text);
  }
  const r = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const v${i} = ${i};`).join('\n');

t.test('a clean tree passes', async (t) => {
  const r = check(t, {
    'core/src/vfs/a.ts': "import { a } from '../sdk/index.js';\nexport const b = a;\n",
    'plugins/fs-x/src/x.ts': "import type { Y } from './y.js';\nexport type X = Y;\n",
    'plugins/fs-x/src/y.ts': 'export type Y = number;\n',
  });
  t.equal(r.code, 0, r.out);
  t.match(r.out, /no file circle \(type-only included\)/);
});

t.test('a circle of type-only imports fails, in a plugin as in core', async (t) => {
  const r = check(t, {
    'plugins/fs-x/src/x.ts': "import type { Y } from './y.js';\nexport interface X { y?: Y }\n",
    'plugins/fs-x/src/y.ts': "export type { X as Y } from './x.js';\n",
    'core/src/vfs/a.ts': "import type { B } from '../accounts/b.js';\nexport interface A { b?: B }\n",
    'core/src/accounts/b.ts': "import { type A } from '../vfs/a.js';\nexport interface B { a?: A }\n",
  });
  t.equal(r.code, 1);
  t.match(r.out, 'plugins/fs-x/src/x.ts -> ./y.js (type only)');
  t.match(r.out, 'plugins/fs-x/src/y.ts -> ./x.js (type only)');
  t.match(r.out, 'core/src/accounts/b.ts -> ../vfs/a.js (type only)');
  t.notMatch(r.out, /import cycle between core\/src folders/, 'type-only imports make no folder cycle');
});

t.test('a value import cycle between core folders fails', async (t) => {
  const r = check(t, {
    'core/src/vfs/a.ts': "import { b } from '../accounts/b.js';\nexport const a = b;\n",
    'core/src/accounts/b.ts': "export const b = 1;\nexport async function c() { return import('../vfs/a.js'); }\n",
  });
  t.equal(r.code, 1);
  t.match(r.out, /import cycle between core\/src folders accounts, vfs/);
});

t.test('core/src/sdk may not reach a domain folder, even for a type', async (t) => {
  const r = check(t, {
    'core/src/sdk/host.ts': "import type { Files } from '../vfs/files.js';\nexport interface Host { files: Files }\n",
    'core/src/vfs/files.ts': 'export interface Files { n: number }\n',
    'core/src/sdk/ok.ts': "import type { Fs } from '../fs/fs.contract.js';\nexport type F = Fs;\n",
    'core/src/fs/fs.contract.ts': 'export interface Fs { n: number }\n',
  });
  t.equal(r.code, 1);
  t.match(r.out, 'core/src/sdk is a leaf, but core/src/sdk/host.ts imports ../vfs/files.js');
  t.notMatch(r.out, 'sdk/ok.ts', 'fs/ is part of the contract layer');
});

t.test('files over 500 lines need a comment saying why, in plugins and libs too', async (t) => {
  const r = check(t, {
    'libs/big/src/big.ts': lines(501),
    'plugins/fs-x/src/long.ts': `// Longer than 500 lines: one generated table.\n${lines(600)}`,
    'plugins/fs-x/test/long.test.ts': lines(600),
  });
  t.equal(r.code, 1);
  t.match(r.out, 'libs/big/src/big.ts: 501 lines and no comment saying why');
  t.notMatch(r.out, 'long.ts', 'explained, or not a source');
});
