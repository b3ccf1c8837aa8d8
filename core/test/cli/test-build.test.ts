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
