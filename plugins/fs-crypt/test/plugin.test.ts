import t from 'tap';
import { createTestApp } from '@ferry/core/testing';

// Both local-root providers through the real plugin loader: manifests, config
// schemas and provider definitions pass the core's checks, and they coexist
// (providers 0 and 4, the same uploads-tmp area).
const app = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-crypt' }] });
t.teardown(() => app.close());

t.test('the core loads and lists both plugins', async (t) => {
  const res = await app.inject('GET', '/api/v2/version', { token: await app.adminToken() });
  t.equal(res.statusCode, 200);
  const features = (JSON.parse(res.payload) as { features: string[] }).features;
  t.ok(features.includes('@ferry/fs-local@0.1.0'), 'fs-local registered');
  t.ok(features.includes('@ferry/fs-crypt@0.1.0'), 'fs-crypt registered');
});
