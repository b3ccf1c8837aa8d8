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

t.test('a binding with enable_rest_api off serves /healthz only', async (t) => {
  const ta = await createTestApp({
    plugins: [],
    config: {
      httpd: {
        bindings: [
          { address: '127.0.0.1', port: 0 },
          { address: '127.0.0.1', port: 0, enable_rest_api: false },
        ],
      },
    },
  });
  t.teardown(() => ta.close());
  t.equal(ta.app.servers.length, 2);
  const off = ta.app.servers[1]!;
  const h = await off.inject({ method: 'GET', url: '/healthz', remoteAddress: '127.0.0.1' });
  t.equal(h.statusCode, 200);
  t.equal(h.payload, 'ok');
  for (const url of ['/api/v2/version', '/api/v2/token', '/api/v2/user/files?path=/', '/api/v2/shares/abc']) {
    const r = await off.inject({ method: 'GET', url, remoteAddress: '127.0.0.1' });
    t.equal(r.statusCode, 404, url);
    t.match(JSON.parse(r.payload), { message: /REST API is disabled on this binding/, error: 'Not Found' }, url);
  }
  const token = await ta.adminToken();
  const on = await ta.inject('GET', '/api/v2/version', { token });
  t.equal(on.statusCode, 200, 'the other binding still serves the API');
});
