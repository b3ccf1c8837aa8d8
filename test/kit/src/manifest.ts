import { createRequire } from 'node:module';
import type { Test } from 'tap';

/** What a plugin's default export declares about itself. */
interface Manifest {
  name: string;
  version: string;
  apiVersion: number;
}

/**
 * The manifest checks every plugin package needs: the plugin's name, version
 * and API version match its package.json, from the sources and, with
 * FERRY_TEST_USE_DIST=1 after a build, from dist/src/index.js (one directory
 * deeper than the sources: its manifest must still find the package's own
 * package.json). `testUrl` is the calling test's import.meta.url (a file in
 * the package's test/ folder).
 */
export function manifestTests(t: Test, plugin: Manifest, expectedName: string, testUrl: string): void {
  const pkg = createRequire(testUrl)('../package.json') as { name: string; version: string };
  t.test('manifest', async (t) => {
    t.equal(plugin.name, expectedName);
    t.equal(plugin.name, pkg.name);
    t.equal(plugin.version, pkg.version);
    t.equal(plugin.apiVersion, 1);
  });
  t.test(
    'the compiled manifest',
    { skip: process.env.FERRY_TEST_USE_DIST === '1' ? false : 'checks the build: FERRY_TEST_USE_DIST=1 after npm run build' },
    async (t) => {
      const built = (await import(new URL('../dist/src/index.js', testUrl).href)) as { default: Manifest };
      t.equal(built.default.name, pkg.name);
      t.equal(built.default.version, pkg.version);
    },
  );
}
