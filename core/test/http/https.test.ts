import t from 'tap';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { createTestApp, type TestApp } from '../../src/testing.js';
import { loadConfig } from '../../src/config/load.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { CertificateEvent } from '../../src/events/event-types.js';
import { EventManager } from '../../src/event-manager/event-manager.js';
import { certificateReloaderOf } from '../../src/http/server.js';
import { loadTlsMaterial, tlsBindingFiles } from '../../src/http/tls.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const FIXTURE = { name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app: 'https' } };

try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch {
  throw new Error('the openssl command line tool is missing: scripts/servers/start-openssl.sh installs it');
}

// ---- certificates generated for this run ----------------------------------------------------

const dir = t.testdir({});
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Self-signed certificate for `name` (and 127.0.0.1) in <prefix>.crt / <prefix>.key. */
function selfSigned(prefix: string, name: string) {
  openssl(
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    `${prefix}.key`,
    '-out',
    `${prefix}.crt`,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    `subjectAltName=DNS:${name},IP:127.0.0.1`,
  );
  const cert = readFileSync(path.join(dir, `${prefix}.crt`));
  return { cert, key: readFileSync(path.join(dir, `${prefix}.key`)), fingerprint: new X509Certificate(cert).fingerprint256 };
}
const A = selfSigned('a', 'a.ferry.test');
const B = selfSigned('b', 'b.ferry.test');
// a CA and a client certificate it signs (client_auth_type 1)
const CA = selfSigned('ca', 'ca.example.org');
openssl('req', ...ecKey, '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=client');
openssl('x509', '-req', '-in', 'client.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'client.crt', '-days', '2');
const CLIENT = { cert: readFileSync(path.join(dir, 'client.crt')), key: readFileSync(path.join(dir, 'client.key')) };

// the served files: the binding's paths are relative to the config base dir (the repository here)
const certFile = path.join(dir, 'server.crt');
const keyFile = path.join(dir, 'server.key');
writeFileSync(certFile, A.cert);
writeFileSync(keyFile, A.key);
const binding = (o: Record<string, unknown> = {}) => ({
  address: '127.0.0.1',
  port: 0,
  enable_https: true,
  certificate_file: path.relative(root, certFile),
  certificate_key_file: path.relative(root, keyFile),
  ...o,
});

/** Replaces a file the way editors and certbot do: write a temporary file, rename it over. */
function atomicWrite(file: string, data: Buffer | string) {
  writeFileSync(`${file}.tmp`, data);
  renameSync(`${file}.tmp`, file);
}

interface Presented {
  status?: number;
  body?: string;
  fingerprint?: string;
  protocol?: string | null;
  error?: string;
}

/** GET over a new TLS connection; resolves with what the server presented (or the client's error). */
function get(port: number, urlPath: string, o: https.RequestOptions = {}): Promise<Presented> {
  return new Promise((resolve) => {
    const req = https.get({ host: '127.0.0.1', port, path: urlPath, agent: false, ...o }, (res) => {
      const socket = res.socket as tls.TLSSocket;
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      const protocol = socket.getProtocol();
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body, fingerprint, protocol }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

/** The fingerprint the server presents to a client that does not verify it. */
function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(s.getPeerCertificate().fingerprint256);
      s.end();
    });
    s.on('error', reject);
  });
}

// ---- the app under test, on an HTTPS binding -----------------------------------------------

const ta: TestApp = await createTestApp({
  plugins: [FIXTURE],
  config: { httpd: { bindings: [binding()] }, event_manager: { rules_cache_ttl: 0 } },
});
t.teardown(() => ta.close());
await ta.app.start();
const port = ta.server.info.port as number;
const bus = ta.app.container.resolve<EventBus>(TOKENS.EventBus);
const mgr = ta.app.container.resolve(EventManager);
const reloader = certificateReloaderOf(ta.server)!;
const token = await ta.adminToken();

/** The next certificate event published on the bus. */
const nextCertificateEvent = () =>
  new Promise<CertificateEvent>((resolve) => {
    const off = bus.on('certificate', (e) => {
      off();
      resolve(e);
    });
  });

type Entry = { app: string; rule: string; trigger: number; options: Record<string, any>; params: Record<string, any> };
const LOG = ((globalThis as any).__ferryActionLog ??= []) as Entry[];
const takeActions = async () => {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setImmediate(r));
    await mgr.idle();
  }
  const out = LOG.filter((e) => e.app === 'https');
  for (const e of out) LOG.splice(LOG.indexOf(e), 1);
  return out;
};

// an event rule on trigger 5 whose action records what it was given
{
  const a = await ta.inject('POST', '/api/v2/eventactions', {
    token,
    payload: { name: 'cert-rec', type: 101, options: { test_config: { message: '{{.Event}} {{.Name}} {{.Status}} {{.StatusString}} {{.ErrorString}}' } } },
  });
  if (a.statusCode !== 201) throw new Error(a.payload);
  const r = await ta.inject('POST', '/api/v2/eventrules', {
    token,
    payload: { name: 'cert-rule', trigger: 5, conditions: { options: { names: [{ pattern: '*.ferry.test' }] } }, actions: [{ name: 'cert-rec' }] },
  });
  if (r.statusCode !== 201) throw new Error(r.payload);
}

t.test('serves the configured certificate over TLS (relative paths resolved against the config base dir)', async (t) => {
  t.equal(ta.server.info.protocol, 'https');
  const r = await get(port, '/healthz', { ca: A.cert });
  t.same(r, { status: 200, body: 'ok', fingerprint: A.fingerprint, protocol: 'TLSv1.3' });
  t.same((await get(port, '/healthz', { ca: B.cert })).error, 'DEPTH_ZERO_SELF_SIGNED_CERT', 'a client trusting another certificate refuses it');
  t.same(reloader.certificate.names, ['a.ferry.test', '127.0.0.1']);
  const api = await get(port, '/api/v2/version', { ca: A.cert, headers: { authorization: `Bearer ${token}` } });
  t.equal(api.status, 200, 'the REST API answers over HTTPS');
  // the path resolution itself
  const f = tlsBindingFiles(loadConfig({ env: {}, overrides: { httpd: { bindings: [binding()] } } }).config.httpd.bindings[0]!, 0, ['ca.pem'], '/etc/ferry');
  t.equal(f.certificateFile, path.join('/etc/ferry', path.relative(root, certFile)));
  t.same(f.caFiles, [], 'CA files only with client_auth_type 1');
});

t.test('a broken replacement keeps the current certificate and publishes a failure event', async (t) => {
  // B's key next to A's certificate: they do not match
  let ev = nextCertificateEvent();
  atomicWrite(keyFile, B.key);
  let e = await ev;
  t.equal(e.status, 'failed');
  t.same(e.names, ['a.ferry.test', '127.0.0.1'], 'names of the certificate still served');
  t.match(e.error, /^httpd\.bindings\.0\.certificate_key_file: the private key in ".*server\.key" does not match the certificate/);
  t.notMatch(e.error, /PRIVATE KEY|BEGIN/, 'no key material in the error');
  t.equal(typeof e.instance_id, 'string');
  t.equal((await get(port, '/healthz', { ca: A.cert })).fingerprint, A.fingerprint, 'new connections still get A');
  let actions = await takeActions();
  t.same(
    actions.map((x) => x.options.message.split(' ').slice(0, 5).join(' ')),
    ['Certificate failed a.ferry.test,127.0.0.1 2 KO'],
  );
  t.match(actions[0]!.options.message, /does not match the certificate/, '.ErrorString');

  // a certificate file that holds no certificate
  ev = nextCertificateEvent();
  writeFileSync(certFile, 'not a certificate\n');
  e = await ev;
  t.equal(e.status, 'failed');
  t.match(e.error, /^httpd\.bindings\.0\.certificate_file: ".*server\.crt" holds no valid PEM certificate/);
  t.equal(await presented(port), A.fingerprint);
  // the same broken content is reported once; an explicit reload reports it again
  t.equal((await reloader.reload('test', true)).status, 'unchanged');
  ev = nextCertificateEvent();
  const res = await reloader.reload();
  t.equal(res.status, 'failed');
  t.equal(res.fingerprint256, A.fingerprint);
  t.equal((await ev).status, 'failed');
  actions = await takeActions();
  t.equal(actions.length, 2);
  t.ok(actions.every((x) => x.trigger === 5 && x.params.Status === 2));
});

t.test('replacing the files reloads the certificate: the next TLS connection presents the new one', async (t) => {
  const ev = nextCertificateEvent();
  atomicWrite(certFile, B.cert);
  writeFileSync(keyFile, B.key);
  const e = await ev;
  t.equal(e.status, 'reloaded', e.error ?? '');
  t.same(e.names, ['b.ferry.test', '127.0.0.1']);
  t.equal(e.error, undefined);
  const r = await get(port, '/healthz', { ca: B.cert });
  t.same(r, { status: 200, body: 'ok', fingerprint: B.fingerprint, protocol: 'TLSv1.3' });
  t.equal((await get(port, '/healthz', { ca: A.cert })).error, 'DEPTH_ZERO_SELF_SIGNED_CERT', 'A is no longer served');
  const actions = await takeActions();
  t.same(
    actions.map((x) => x.options.message.trim()),
    ['Certificate reloaded b.ferry.test,127.0.0.1 1 OK'],
  );
  t.same(reloader.certificate.fingerprint256, B.fingerprint);
});

t.test('SIGHUP and reload() reload the files; unchanged content is skipped when watching', async (t) => {
  t.equal((await reloader.reload('test', true)).status, 'unchanged', 'a touch without new content does nothing');
  let ev = nextCertificateEvent();
  process.kill(process.pid, 'SIGHUP');
  t.equal((await ev).status, 'reloaded');
  // back to A through reload()
  writeFileSync(certFile, A.cert);
  writeFileSync(keyFile, A.key);
  ev = nextCertificateEvent();
  const res = await reloader.reload();
  t.same(res, { status: 'reloaded', names: ['a.ferry.test', '127.0.0.1'], fingerprint256: A.fingerprint });
  await ev;
  t.equal(await presented(port), A.fingerprint);
  // the rule's names do not match another domain
  atomicWrite(certFile, CA.cert);
  atomicWrite(keyFile, CA.key);
  ev = nextCertificateEvent();
  t.same((await ev).names, ['ca.example.org', '127.0.0.1']);
  const actions = await takeActions();
  t.same(
    actions.map((x) => x.options.message.split(' ')[1]),
    ['reloaded', 'reloaded'],
    'SIGHUP and reload(); not the ca.example.org one',
  );
});

t.test('min_tls_version 13 and client_auth_type 1 with httpd.ca_certificates', async (t) => {
  writeFileSync(path.join(dir, 'c2.crt'), A.cert);
  writeFileSync(path.join(dir, 'c2.key'), A.key);
  const app2 = await createTestApp({
    config: {
      httpd: {
        bindings: [
          binding({ certificate_file: path.join(dir, 'c2.crt'), certificate_key_file: path.join(dir, 'c2.key'), min_tls_version: 13, client_auth_type: 1 }),
        ],
        ca_certificates: [path.join(dir, 'ca.crt')],
      },
    },
  });
  t.teardown(() => app2.close());
  await app2.app.start();
  const p2 = app2.server.info.port as number;
  const ok = await get(p2, '/healthz', { ca: A.cert, cert: CLIENT.cert, key: CLIENT.key });
  t.same(ok, { status: 200, body: 'ok', fingerprint: A.fingerprint, protocol: 'TLSv1.3' });
  const noClientCert = await get(p2, '/healthz', { ca: A.cert });
  t.ok(noClientCert.error, `refused without a client certificate (${noClientCert.error})`);
  const foreign = await get(p2, '/healthz', { ca: A.cert, cert: B.cert, key: B.key });
  t.ok(foreign.error, `refused with a certificate of another CA (${foreign.error})`);
  const tls12 = await get(p2, '/healthz', { ca: A.cert, cert: CLIENT.cert, key: CLIENT.key, maxVersion: 'TLSv1.2' });
  t.match(tls12.error, /ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION|EPROTO/, 'TLS 1.2 refused');
  t.equal((await get(port, '/healthz', { rejectUnauthorized: false, maxVersion: 'TLSv1.2' })).status, 200, 'the first binding (min 1.2) accepts TLS 1.2');
});

t.test('startup fails naming the key when a certificate file cannot be used', async (t) => {
  const start = (o: Record<string, unknown>) => createTestApp({ config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0 }, binding(o)] } } });
  await t.rejects(start({ certificate_file: path.join(dir, 'missing.crt') }), {
    message: /^httpd\.bindings\.1\.certificate_file: cannot read ".*missing\.crt": ENOENT: no such file or directory$/,
  });
  await t.rejects(start({ certificate_file: path.join(dir, 'a.crt'), certificate_key_file: path.join(dir, 'b.key') }), {
    message: /^httpd\.bindings\.1\.certificate_key_file: the private key in ".*b\.key" does not match the certificate in ".*a\.crt"$/,
  });
  // the same checks, without a whole app start each
  const check = (o: Record<string, unknown>) => {
    const cfg = loadConfig({ env: {}, overrides: { httpd: { bindings: [binding(o)] } } }).config;
    return loadTlsMaterial(tlsBindingFiles(cfg.httpd.bindings[0]!, 3, [], root));
  };
  await t.rejects(check({ certificate_file: path.join(dir, 'a.crt'), certificate_key_file: path.join(dir, 'a.crt') }), {
    name: 'TlsFileError',
    message: /^httpd\.bindings\.3\.certificate_key_file: ".*a\.crt" holds no usable unencrypted PEM private key/,
  });
  await t.rejects(check({ certificate_file: path.join(dir, 'a.key'), certificate_key_file: path.join(dir, 'a.key') }), {
    message: /^httpd\.bindings\.3\.certificate_file: ".*a\.key" holds no valid PEM certificate/,
  });
  await t.rejects(check({ certificate_key_file: path.join(dir, 'nope', 'k.key') }), {
    message: /^httpd\.bindings\.3\.certificate_key_file: cannot read ".*k\.key": ENOENT/,
  });
  t.same((await check({})).names, ['ca.example.org', '127.0.0.1'], 'the files currently served');
});

t.test('configuration validation names the key', async (t) => {
  const load = (httpd: Record<string, unknown>) => () => loadConfig({ env: {}, overrides: { httpd } });
  const files = { certificate_file: 'a.crt', certificate_key_file: 'a.key' };
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { bindings: [{ enable_https: true }] },
      /at "httpd\.bindings\.0\.certificate_file": "httpd\.bindings\[0\]\.certificate_file" is required when enable_https is true/,
    ],
    [
      { bindings: [{ enable_https: true, certificate_file: 'a.crt', certificate_key_file: '' }] },
      /at "httpd\.bindings\.0\.certificate_key_file": .* is required when enable_https is true/,
    ],
    [{ bindings: [{ enable_https: true, ...files, min_tls_version: 11 }] }, /at "httpd\.bindings\.0\.min_tls_version": .* must be one of \[12, 13\]/],
    [
      { bindings: [{ enable_https: true, ...files, tls_cipher_suites: ['NOT-A-CIPHER'] }] },
      /at "httpd\.bindings\.0\.tls_cipher_suites\.0": .* is not a cipher suite this server supports/,
    ],
    [{ bindings: [{ enable_https: 'maybe', ...files }] }, /at "httpd\.bindings\.0\.enable_https": .* must be a boolean/],
    [{ bindings: [{ client_auth_type: 1 }] }, /at "httpd\.bindings\.0": .*client_auth_type 1 needs enable_https/],
    [
      { bindings: [{}, { enable_https: true, ...files, client_auth_type: 1 }] },
      /"httpd\.ca_certificates" must list a CA file: httpd\.bindings\.1 has client_auth_type 1/,
    ],
    [{ bindings: [{ client_auth_type: 2 }] }, /at "httpd\.bindings\.0\.client_auth_type"/],
  ];
  for (const [httpd, re] of cases) t.throws(load(httpd), { name: 'ConfigError', message: re }, re.source);
  // accepted: files may stay empty while HTTPS is off; cipher names of both kinds
  const ok = loadConfig({
    env: {},
    overrides: {
      httpd: {
        bindings: [{ certificate_file: '' }, { enable_https: true, ...files, tls_cipher_suites: ['ECDHE-ECDSA-AES128-GCM-SHA256', 'TLS_AES_128_GCM_SHA256'] }],
      },
    },
  }).config.httpd;
  t.same(
    ok.bindings.map((b) => [b.enable_https, b.min_tls_version, b.client_auth_type, b.tls_cipher_suites.length]),
    [
      [false, 12, 0, 0],
      [true, 12, 0, 2],
    ],
  );
  t.same(ok.ca_certificates, []);
  // environment variables reach the binding keys
  const env = loadConfig({
    env: {
      SERVICE_HTTPD__BINDINGS__0__ENABLE_HTTPS: 'true',
      SERVICE_HTTPD__BINDINGS__0__CERTIFICATE_FILE: 'x.crt',
      SERVICE_HTTPD__BINDINGS__0__CERTIFICATE_KEY_FILE: 'x.key',
      SERVICE_HTTPD__BINDINGS__0__MIN_TLS_VERSION: '13',
    },
  });
  t.same(
    (({ enable_https, certificate_file, certificate_key_file, min_tls_version }) => ({
      enable_https,
      certificate_file,
      certificate_key_file,
      min_tls_version,
    }))(env.config.httpd.bindings[0]!),
    { enable_https: true, certificate_file: 'x.crt', certificate_key_file: 'x.key', min_tls_version: 13 },
  );
});
