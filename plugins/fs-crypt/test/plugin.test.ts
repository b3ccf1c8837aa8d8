import t from 'tap';
import { readFileSync } from 'node:fs';
import { createTestApp } from '@ferry/core/testing';

/** `name@version` as the version route lists a workspace plugin (its package.json version). */
const feature = (dir: string) => {
  const pkg = JSON.parse(readFileSync(new URL(`../../${dir}/package.json`, import.meta.url), 'utf8')) as { name: string; version: string };
  return `${pkg.name}@${pkg.version}`;
};

// Both local-root providers through the real plugin loader: manifests, config
// schemas and provider definitions pass the core's checks, and they coexist
// (providers 0 and 4, the same uploads-tmp area).
const app = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-crypt' }] });
t.teardown(() => app.close());

t.test('the core loads and lists both plugins', async (t) => {
  const res = await app.inject('GET', '/api/v2/version', { token: await app.adminToken() });
  t.equal(res.statusCode, 200);
  const features = (JSON.parse(res.payload) as { features: string[] }).features;
  t.ok(features.includes(feature('fs-local')), `fs-local registered: ${features.join(', ')}`);
  t.ok(features.includes(feature('fs-crypt')), `fs-crypt registered: ${features.join(', ')}`);
});
