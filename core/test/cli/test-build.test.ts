// FERRY_TEST_USE_DIST=1 (CI, after npm run build): the test processes load the
// packages' modules from their build (scripts/test-dist-hooks.mjs); without it,
// from the sources through tap's TypeScript loader. Either way one process
// never mixes the two.
import 'reflect-metadata';
import crypto from 'node:crypto';
import t from 'tap';

const useDist = process.env.FERRY_TEST_USE_DIST === '1';

t.test('a package module resolves to its build under FERRY_TEST_USE_DIST=1, to its source otherwise', async (t) => {
  const relative = import.meta.resolve('../../src/app.js');
  const byName = import.meta.resolve('@ferry/core');
  const plugin = import.meta.resolve('@ferry/fs-local');
  if (useDist) {
    t.match(relative, /\/core\/dist\/src\/app\.js$/);
    t.match(byName, /\/core\/dist\/src\/index\.js$/);
    t.match(plugin, /\/plugins\/fs-local\/dist\/src\/index\.js$/);
  } else {
    t.match(relative, /\/core\/src\/app\.ts$/);
    t.match(byName, /\/core\/src\/index\.ts$/);
    t.match(plugin, /\/plugins\/fs-local\/src\/index\.ts$/);
  }
});

t.test('test helpers stay TypeScript next to their fixtures', async (t) => {
  t.match(import.meta.resolve('../helpers/serve.js'), /\/core\/test\/helpers\/serve\.ts$/);
});

t.test("a mocked module's imports are the mocks (tap marks its URL with a query the build's URL keeps)", async (t) => {
  let calls = 0;
  const randomBytes = (n: number) => {
    calls++;
    return Buffer.alloc(n, 7);
  };
  const mod = await t.mockImport<typeof import('../../src/accounts/password-cache.js')>('../../src/accounts/password-cache.js', {
    'node:crypto': { ...crypto, default: { ...crypto, randomBytes }, randomBytes },
  });
  new mod.PasswordCache({ auth_cache: { ttl: 60, max_entries: 10 } } as never);
  t.equal(calls, 1, 'the cache took its key from the mocked randomBytes');
});

t.test('a build older than its sources is refused, a current one accepted', async (t) => {
  const { mkdtempSync, mkdirSync, writeFileSync, utimesSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  // @ts-expect-error: a JavaScript module of the repository's scripts, without types
  const { checkBuildCurrent } = (await import('../../../scripts/test-dist-hooks.mjs')) as { checkBuildCurrent: (dir: string) => void };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-stale-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'src', 'deep'), { recursive: true });
  mkdirSync(path.join(dir, 'dist'));
  mkdirSync(path.join(dir, 'test'));
  writeFileSync(path.join(dir, 'src', 'deep', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(path.join(dir, 'test', 'a.test.ts'), '');
  writeFileSync(path.join(dir, 'dist', 'tsconfig.tsbuildinfo'), '{}');
  const at = (s: number) => new Date(Date.now() + s * 1000);
  utimesSync(path.join(dir, 'dist', 'tsconfig.tsbuildinfo'), at(-100), at(-100));
  utimesSync(path.join(dir, 'src', 'deep', 'a.ts'), at(-50), at(-50));
  utimesSync(path.join(dir, 'test', 'a.test.ts'), at(0), at(0));
  t.throws(() => checkBuildCurrent(dir), /is older than its sources: run npm run build/, 'a source changed after the build');
  utimesSync(path.join(dir, 'dist', 'tsconfig.tsbuildinfo'), at(-10), at(-10));
  t.doesNotThrow(() => checkBuildCurrent(dir), 'built after the last change of a source (a test file changed later does not count)');
});
