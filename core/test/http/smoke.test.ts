import t from 'tap';
import { createTestApp } from '../../src/testing.js';

t.test('boots, serves healthz and issues a token', async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const h = await ta.inject('GET', '/healthz');
  t.equal(h.statusCode, 200);
  t.equal(h.payload, 'ok');
  const token = await ta.adminToken();
  const v = await ta.inject('GET', '/api/v2/version', { token });
  t.equal(v.statusCode, 200, v.payload);
  t.same((v.result as { features: string[] }).features, []);
});
