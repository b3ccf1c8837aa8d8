import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import type dns from 'node:dns';
import { captureLogger } from '@ferry/core/testing';
import { actionConformance, plainSecret, runAction, saveActionOptions } from '@ferry/testkit';
import { checkHost, httpActionDef, isBlockedAddress, type FileSource } from '../src/index.js';
import { startRecorder } from './recorder.js';

const srv = await startRecorder();
t.teardown(() => srv.close());
const noFiles: FileSource = { open: () => Promise.reject(new Error('no file storage in this test')) };
const def = httpActionDef({ allowLinkLocal: false, files: () => noFiles });
const B = srv.base;

/** Waits until the server holds no connection of ours. */
const noSockets = async (tt: Test) => {
  for (let i = 0; i < 40 && srv.openSockets() > 0; i++) await sleep(50);
  tt.equal(srv.openSockets(), 0, 'no connection left open');
};

await actionConformance(t, {
  name: 'action-http',
  def,
  valid: { endpoint: `${B}/ok`, method: 'POST', body: 'x' },
  invalid: [
    { options: { method: 'POST' }, field: 'endpoint' },
    { options: { endpoint: 'ftp://127.0.0.1/x', method: 'POST' }, field: 'endpoint' },
    { options: { endpoint: 'file:///etc/passwd', method: 'GET' }, field: 'endpoint' },
    { options: { endpoint: 'http://u:p@127.0.0.1/x', method: 'GET' }, field: 'endpoint' },
    { options: { endpoint: '{{.Name}}/x', method: 'GET' }, field: 'endpoint' },
    { options: { endpoint: `${B}/ok` }, field: 'method' },
    { options: { endpoint: `${B}/ok`, method: 'PATCH' }, field: 'method' },
    { options: { endpoint: `${B}/ok`, method: 'GET', timeout: 0 }, field: 'timeout' },
    { options: { endpoint: `${B}/ok`, method: 'GET', timeout: 181 }, field: 'timeout' },
    { options: { endpoint: `${B}/ok`, method: 'GET', headers: [{ key: 'bad key', value: 'x' }] }, field: 'headers[0].key' },
    { options: { endpoint: `${B}/ok`, method: 'GET', headers: [{ key: 'Content-Length', value: '3' }] }, field: 'headers[0].key' },
    { options: { endpoint: `${B}/ok`, method: 'GET', headers: [{ key: 'X-A', value: 'a\r\nX-Injected: 1' }] }, field: 'headers[0].value' },
    { options: { endpoint: `${B}/ok`, method: 'GET', query_parameters: [{ value: 'x' }] }, field: 'query_parameters[0].key' },
    { options: { endpoint: `${B}/ok`, method: 'GET', body: 'x' }, field: 'method' },
    { options: { endpoint: `${B}/ok`, method: 'POST', body: 'x', parts: [{ name: 'a', body: 'b' }] }, field: 'parts' },
    { options: { endpoint: `${B}/ok`, method: 'POST', parts: [{ name: 'a' }] }, field: 'parts[0]' },
    { options: { endpoint: `${B}/ok`, method: 'POST', parts: [{ name: 'a', body: 'x', filepath: '/f' }] }, field: 'parts[0]' },
    { options: { endpoint: `${B}/ok`, method: 'POST', parts: [{ name: 'a"b', body: 'x' }] }, field: 'parts[0].name' },
    {
      options: { endpoint: `${B}/ok`, method: 'POST', parts: [{ name: 'a', body: 'x', headers: [{ key: 'Content-Disposition', value: 'x' }] }] },
      field: 'parts[0].headers[0].key',
    },
    {
      options: { endpoint: `${B}/ok`, method: 'POST', headers: [{ key: 'Content-Type', value: 'text/plain' }], parts: [{ name: 'a', body: 'x' }] },
      field: 'Content-Type',
    },
    { options: { endpoint: `${B}/ok`, method: 'GET', password: plainSecret('p') }, field: 'username' },
    { options: { endpoint: `${B}/ok`, method: 'GET', skip_tls_verify: 'maybe' }, field: 'skip_tls_verify' },
  ],
  template: {
    options: (tpl) => ({ endpoint: `${B}/tpl`, method: 'POST', body: tpl }),
    observe: async () => srv.last().body.toString('utf8'),
  },
  failing: {
    options: { endpoint: `${B}/status/500`, method: 'POST', body: 'x' },
    reason: /^HTTP POST http:\/\/127\.0\.0\.1:\d+\/status\/500 answered 500 Internal Server Error: failure body 500$/,
  },
  hanging: { options: { endpoint: `${B}/hang`, method: 'POST', body: 'x', timeout: 1 }, within: 4000, message: /timed out after 1 s/ },
  longRunning: { endpoint: `${B}/hang`, method: 'GET', timeout: 180 },
  secret: {
    options: (password) => ({ endpoint: `${B}/ok`, method: 'GET', username: 'alice', password }),
    failingOptions: (password) => ({ endpoint: `${B}/echo-auth/403`, method: 'GET', username: 'alice', password }),
    forbidden: (v) => [Buffer.from(`alice:${v}`).toString('base64'), `alice:${v}`],
  },
  afterStop: noSockets,
});

t.test('method, headers, query parameters, basic auth and body arrive as configured', async (t) => {
  await runAction(
    def,
    {
      endpoint: `${B}/hook/{{.Name}}?fixed=1`,
      method: 'PUT',
      headers: [
        { key: 'Content-Type', value: 'application/json' },
        { key: 'X-Event', value: '{{.Event}}' },
        { key: 'X-Multi', value: 'one' },
        { key: 'X-Multi', value: 'two' },
      ],
      query_parameters: [
        { key: 'path', value: '{{.VirtualPath}}' },
        { key: 'size', value: '{{.FileSize}}' },
      ],
      username: 'hook-user',
      password: plainSecret('pa:ss wörd'),
      body: '{"name":{{toJson .Name}},"path":"{{toJsonUnquoted .VirtualPath}}","size":{{.FileSize}},"event":{{toJson .Event}}}',
    },
    { event: { username: 'bob', virtual_path: '/in/q"uo\\te\n<&>.csv', file_size: 77 } },
  );
  const r = srv.last();
  t.equal(r.method, 'PUT');
  const u = new URL(r.url, 'http://x');
  t.equal(u.pathname, '/hook/bob');
  t.same(
    [...u.searchParams.entries()],
    [
      ['fixed', '1'],
      ['path', '/in/q"uo\\te\n<&>.csv'],
      ['size', '77'],
    ],
    'query parameters appended, encoded',
  );
  t.equal(r.headers['content-type'], 'application/json');
  t.equal(r.headers['x-event'], 'upload');
  t.equal(r.headers['x-multi'], 'one, two', 'a repeated header is sent twice');
  t.equal(r.headers.authorization, `Basic ${Buffer.from('hook-user:pa:ss wörd').toString('base64')}`);
  t.equal(r.headers['content-length'], String(r.body.length));
  t.same(
    JSON.parse(r.body.toString('utf8')),
    { name: 'bob', path: '/in/q"uo\\te\n<&>.csv', size: 77, event: 'upload' },
    'toJson / toJsonUnquoted keep the JSON valid',
  );
});

t.test('failures: status and a bounded excerpt, no redirect followed, no retry', async (t) => {
  const before = srv.requests.length;
  await t.rejects(runAction(def, { endpoint: `${B}/status/503`, method: 'POST', body: 'x' }), {
    message: /answered 503 Service Unavailable: failure body 503$/,
  });
  t.equal(srv.requests.length - before, 1, 'one request: no hidden retry');
  await t.rejects(runAction(def, { endpoint: `${B}/status/302`, method: 'GET' }), { message: /answered 302 Found/ });
  t.equal(srv.last().url, '/status/302', 'the redirect is not followed');
  const long = await runAction(def, { endpoint: `${B}/status/404?size=100000&token=abc`, method: 'GET' }).catch((e: Error) => e);
  t.type(long, Error);
  const msg = (long as Error).message;
  t.match(msg, /^HTTP GET http:\/\/127\.0\.0\.1:\d+\/status\/404 answered 404 Not Found: failure body 404 x+…$/, 'the excerpt is cut');
  t.ok(msg.length < 700, `bounded (${msg.length} characters)`);
  t.notMatch(msg, /token=abc/, 'the query string (tokens) is not in the message');
  const n = srv.requests.length;
  await t.rejects(runAction(def, { endpoint: `${B}/reset`, method: 'GET' }), { message: /^HTTP GET http:\/\/127\.0\.0\.1:\d+\/reset failed: socket hang up/ });
  t.equal(srv.requests.length - n, 1, 'a reset connection is not retried');
  await t.rejects(runAction(def, { endpoint: 'http://127.0.0.1:1/x', method: 'GET' }), {
    message: /^HTTP GET http:\/\/127\.0\.0\.1:1\/x failed: connect ECONNREFUSED/,
  });
  await noSockets(t);
});

t.test('a rendered header value with a line break is refused, nothing is sent', async (t) => {
  const n = srv.requests.length;
  await t.rejects(
    runAction(
      def,
      { endpoint: `${B}/ok`, method: 'GET', headers: [{ key: 'X-Path', value: '{{.VirtualPath}}' }] },
      { event: { virtual_path: '/a\r\nX-Evil: 1' } },
    ),
    {
      message: 'headers[0] (X-Path) contains a line break once rendered',
    },
  );
  t.equal(srv.requests.length, n);
});

t.test('secrets echoed back by the server are redacted from the failure message and logs', async (t) => {
  const { logger, lines } = captureLogger();
  const err = await runAction(
    def,
    { endpoint: `${B}/echo-auth/401`, method: 'GET', username: 'alice', password: plainSecret('hunter2-very-secret') },
    { logger },
  ).catch((e: Error) => e);
  t.match((err as Error).message, /answered 401 Unauthorized: you sent Basic \[redacted\] which is alice:\[redacted\]$/);
  t.notOk(lines.join('\n').includes('hunter2'), 'not in the log');
});

t.test('link-local and cloud metadata destinations are refused', async (t) => {
  for (const ip of ['169.254.169.254', '169.254.0.1', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', 'fe80::1', 'fd00:ec2::254', '100.100.100.200']) {
    t.ok(isBlockedAddress(ip), `${ip} is blocked`);
  }
  for (const ip of ['127.0.0.1', '10.0.0.1', '::1', '192.168.1.1', '2001:db8::1']) t.notOk(isBlockedAddress(ip), `${ip} is allowed`);
  for (const url of [
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/x',
    'http://[::ffff:169.254.169.254]/x',
    'http://[fd00:ec2::254]/x',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://METADATA.google.internal./x',
  ]) {
    await t.rejects(
      runAction(def, { endpoint: url, method: 'GET', timeout: 2 }),
      { message: /refused to connect to .*: link-local and cloud metadata addresses are blocked \(plugin config allow_link_local\)/ },
      url,
    );
  }
  t.throws(() => checkHost('169.254.1.1'));
  t.doesNotThrow(() => checkHost('127.0.0.1'));

  // names are checked on the addresses they resolve to, and the socket connects to the address checked
  let calls = 0;
  const lookup = ((host: string, _o: dns.LookupAllOptions, cb: (e: NodeJS.ErrnoException | null, a: dns.LookupAddress[]) => void) => {
    calls++;
    if (host === 'meta.test') return cb(null, [{ address: '169.254.169.254', family: 4 }]);
    if (host === 'mixed.test')
      return cb(null, [
        { address: '169.254.10.10', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
    // a rebinding name: the first answer is harmless, every later one points at the metadata service
    if (host === 'rebind.test') return cb(null, [{ address: calls === 1 ? '127.0.0.1' : '169.254.169.254', family: 4 }]);
    cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);
  }) as never;
  const guarded = httpActionDef({ allowLinkLocal: false, files: () => noFiles, lookup });
  await t.rejects(runAction(guarded, { endpoint: `http://meta.test:${srv.port}/x`, method: 'GET', timeout: 2 }), {
    message: /refused to connect to meta\.test \(169\.254\.169\.254\)/,
  });
  await runAction(guarded, { endpoint: `http://mixed.test:${srv.port}/mixed`, method: 'GET', timeout: 2 });
  t.equal(srv.last().headers.host, `mixed.test:${srv.port}`, 'a name with one blocked and one allowed address reaches the allowed one');
  calls = 0;
  await runAction(guarded, { endpoint: `http://rebind.test:${srv.port}/rebind`, method: 'GET', timeout: 2 });
  t.equal(calls, 1, 'one resolution: the connection uses the address that was checked');
  t.equal(srv.last().url, '/rebind');
  await t.rejects(
    runAction(guarded, { endpoint: `http://rebind.test:${srv.port}/rebind`, method: 'GET', timeout: 2 }),
    { message: /refused to connect to rebind\.test \(169\.254\.169\.254\)/ },
    'the next resolution is checked again',
  );

  const open = httpActionDef({ allowLinkLocal: true, files: () => noFiles });
  const err = await runAction(open, { endpoint: 'http://169.254.169.254:9/x', method: 'GET', timeout: 1 }).catch((e: Error) => e);
  t.type(err, Error, 'with allow_link_local the request is attempted (and fails here: no metadata service)');
  t.notMatch((err as Error).message, /refused to connect to/, (err as Error).message);
});

t.test('save-time messages are those of the API', async (t) => {
  await t.rejects(saveActionOptions(def, { endpoint: `${B}/ok`, method: 'GET', timeout: 500 }), {
    message: 'options.http_config: "timeout" must be between 1 and 180 seconds',
  });
  await t.rejects(saveActionOptions(def, { endpoint: `${B}/ok`, method: 'POST', body: '{{.Name' }), {
    message: /^options\.http_config\.body: invalid template/,
  });
  await t.rejects(
    saveActionOptions(def, { endpoint: `${B}/ok`, method: 'POST', parts: [{ name: 'a', body: 'x', headers: [{ key: 'X', value: '{{if}}' }] }] }),
    { message: /^options\.http_config\.parts\[0\]\.headers\[0\]\.value: invalid template/ },
  );
  const stored = await saveActionOptions(def, { endpoint: `${B}/ok`, method: 'GET', username: 'u', password: plainSecret('pw') });
  t.match(
    stored,
    { http_config: { timeout: 20, skip_tls_verify: false, headers: [], query_parameters: [], parts: [], password: { status: 'AES-256-GCM' } } },
    'defaults; the password encrypted',
  );
});
