/**
 * GET /metrics: Prometheus text on bindings with enable_metrics (404 on the
 * others), basic auth when configured, and the named series after real
 * traffic: HTTP requests by route template and status with durations,
 * transfers and bytes by direction, protocol and provider, active
 * connections and transfers, event action executions and failures by type,
 * defender bans, the database pool and Node's process metrics. Two apps in
 * one process keep their own registries.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { addUser, fileApp, PASSWORD } from '../helpers/user-files.js';

const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('ok'));
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
t.teardown(() => receiver.close());
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const ta = await fileApp({
  plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/action-http' }],
  config: {
    httpd: { bindings: [{ address: '127.0.0.1', port: 0, enable_metrics: true, metrics_username: 'prom', metrics_password: 'scrape-secret' }] },
    defender: { enabled: true, threshold: 3, score_invalid: 2 },
    event_manager: { rules_cache_ttl: 0 },
  },
});
t.teardown(() => ta.close());
const admin = await ta.adminToken();
const prom = { username: 'prom', password: 'scrape-secret' };

/** The value of one series (labels in any order), or undefined. */
function value(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    const m = /^([^{\s]+)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

async function scrape(): Promise<string> {
  const r = await ta.inject('GET', '/metrics', { basic: prom });
  if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${r.payload}`);
  return r.payload;
}

t.test('/metrics needs the configured credentials', async (t) => {
  const none = await ta.inject('GET', '/metrics');
  t.equal(none.statusCode, 401);
  t.match(none.headers['www-authenticate'], /^Basic/);
  t.match(JSON.parse(none.payload), { message: /metrics_username/, error: 'Unauthorized' });
  const wrong = await ta.inject('GET', '/metrics', { basic: { username: 'prom', password: 'nope' } });
  t.equal(wrong.statusCode, 401);
  const ok = await ta.inject('GET', '/metrics', { basic: prom });
  t.equal(ok.statusCode, 200);
  t.match(ok.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  t.match(ok.payload, /# TYPE ferry_http_requests_total counter/);
});

t.test('the named series after real traffic', async (t) => {
  // event rules: an HTTP action that succeeds and one that fails, on every upload
  for (const [name, endpoint] of [
    ['hook-ok', hook],
    ['hook-down', 'http://127.0.0.1:1/none'],
  ]) {
    const a = await ta.inject('POST', '/api/v2/eventactions', {
      token: admin,
      payload: { name, type: 1, options: { http_config: { endpoint, method: 'POST', timeout: 5, body: '{{toJson .Name}}' } } },
    });
    t.equal(a.statusCode, 201, a.payload);
  }
  const rule = await ta.inject('POST', '/api/v2/eventrules', {
    token: admin,
    payload: {
      name: 'on-upload',
      status: 1,
      trigger: 1,
      conditions: { fs_events: ['upload'] },
      actions: [
        { name: 'hook-ok', order: 1 },
        { name: 'hook-down', order: 2 },
      ],
    },
  });
  t.equal(rule.statusCode, 201, rule.payload);

  await addUser(ta, { username: 'mu' });
  const token = await ta.userToken('mu', PASSWORD);
  for (let i = 0; i < 3; i++) {
    const up = await ta.inject('POST', `/api/v2/user/files/upload?path=/f${i}.bin`, {
      token,
      payload: Buffer.alloc(1000, 1),
      headers: { 'content-type': 'application/octet-stream' },
    });
    t.equal(up.statusCode, 201);
  }
  const dl = await ta.inject('GET', '/api/v2/user/files?path=/f0.bin', { token });
  t.equal(dl.statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/users/nobody', { token: admin })).statusCode, 404);
  // a host that keeps failing is banned by the defender
  for (let i = 0; i < 3; i++) {
    await ta.server.inject({
      method: 'GET',
      url: '/api/v2/token',
      headers: { authorization: 'Basic ' + Buffer.from('ghost:wrong-password').toString('base64') },
      remoteAddress: '10.9.9.9',
    });
  }

  // the actions run after the upload answered: wait for them to be counted
  let text = '';
  for (let i = 0; i < 100; i++) {
    text = await scrape();
    // (and the download's event, published once its answer's stream has ended)
    const done =
      (value(text, 'ferry_event_action_failures_total', { type: 'http' }) ?? 0) >= 3 &&
      (value(text, 'ferry_event_action_executions_total', { type: 'http', result: 'ok' }) ?? 0) >= 3 &&
      (value(text, 'ferry_transfers_total', { direction: 'download', protocol: 'HTTP', provider: 'local', status: 'ok' }) ?? 0) >= 1;
    if (done) break;
    await new Promise((r) => setTimeout(r, 100));
  }

  t.equal(
    value(text, 'ferry_http_requests_total', { method: 'POST', route: '/api/v2/user/files/upload', status: '201' }),
    3,
    'requests by route template and status',
  );
  t.equal(value(text, 'ferry_http_requests_total', { method: 'GET', route: '/api/v2/users/{username}', status: '404' }), 1, 'the template, not the path');
  t.ok((value(text, 'ferry_http_request_duration_seconds_count', { method: 'POST', route: '/api/v2/user/files/upload' }) ?? 0) === 3, 'durations');
  t.ok(value(text, 'ferry_http_request_duration_seconds_bucket', { method: 'POST', route: '/api/v2/user/files/upload', le: '+Inf' }) === 3);
  t.equal(
    value(text, 'ferry_transfers_total', { direction: 'upload', protocol: 'HTTP', provider: 'local', status: 'ok' }),
    3,
    'transfers by direction, protocol, provider',
  );
  t.equal(value(text, 'ferry_transfers_total', { direction: 'download', protocol: 'HTTP', provider: 'local', status: 'ok' }), 1);
  t.equal(value(text, 'ferry_transfer_bytes_total', { direction: 'upload', protocol: 'HTTP', provider: 'local' }), 3000, 'bytes');
  t.equal(value(text, 'ferry_transfer_bytes_total', { direction: 'download', protocol: 'HTTP', provider: 'local' }), 1000);
  t.equal(value(text, 'ferry_event_action_executions_total', { trigger: '1', type: 'http', result: 'ok' }), 3, 'action executions by type');
  t.equal(value(text, 'ferry_event_action_executions_total', { trigger: '1', type: 'http', result: 'failed' }), 3);
  t.equal(value(text, 'ferry_event_action_failures_total', { type: 'http' }), 3, 'failures by type');
  t.equal(value(text, 'ferry_defender_bans_total', { protocol: 'HTTP' }), 1, 'a defender ban');
  t.equal(value(text, 'ferry_active_connections'), 0, 'no connection left open');
  t.equal(value(text, 'ferry_active_transfers', { direction: 'upload' }), 0);
  t.equal(value(text, 'ferry_active_transfers', { direction: 'download' }), 0);
  t.ok((value(text, 'ferry_db_pool_max_connections') ?? 0) >= 1, 'the database pool');
  t.type(value(text, 'ferry_db_pool_connections', { state: 'used' }), 'number');
  t.type(value(text, 'ferry_db_pool_connections', { state: 'free' }), 'number');
  t.ok((value(text, 'process_cpu_user_seconds_total') ?? 0) > 0, "Node's process metrics");
  t.type(value(text, 'nodejs_heap_size_used_bytes'), 'number');
});

t.test('a transfer in progress is counted as active', async (t) => {
  const token = await ta.userToken('mu', PASSWORD);
  // a real socket: the upload stays open while the test scrapes
  if (!ta.server.info.started) await ta.server.start();
  const req = http.request(`${ta.server.info.uri}/api/v2/user/files/upload?path=/slow.bin`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': '2000' },
  });
  const answered = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
  req.write(Buffer.alloc(1000));
  let text = '';
  for (let i = 0; i < 100; i++) {
    text = await scrape();
    if (value(text, 'ferry_active_transfers', { direction: 'upload' }) === 1) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(value(text, 'ferry_active_transfers', { direction: 'upload' }), 1, 'one upload in progress');
  t.equal(value(text, 'ferry_active_connections'), 1, 'on one connection');
  req.end(Buffer.alloc(1000));
  t.equal(await answered, 201);
  text = await scrape();
  t.equal(value(text, 'ferry_active_transfers', { direction: 'upload' }), 0, 'done');
});

t.test('a binding without enable_metrics answers 404; apps keep their own registries', async (t) => {
  const other = await fileApp();
  t.teardown(() => other.close());
  const r = await other.inject('GET', '/metrics');
  t.equal(r.statusCode, 404);
  t.match(JSON.parse(r.payload), { message: /enable_metrics/, error: 'Not Found' });

  const open = await fileApp({ config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, enable_metrics: true }] } } });
  t.teardown(() => open.close());
  const first = await open.inject('GET', '/metrics');
  t.equal(first.statusCode, 200, 'no credentials configured: none needed');
  const text = (await open.inject('GET', '/metrics')).payload;
  t.equal(
    value(text, 'ferry_transfers_total', { direction: 'upload', protocol: 'HTTP', provider: 'local', status: 'ok' }),
    undefined,
    "the other app's transfers are not here",
  );
  t.equal(value(text, 'ferry_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }), 1, 'only its own requests');
});
