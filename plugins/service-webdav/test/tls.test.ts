import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { opensslMissing, selfSignedCert, servedFingerprint } from '@ferry/testkit';
import t from 'tap';
import { run, startWebdav } from './helpers.js';

// TLS bindings (the SDK's services.tls: core's certificate loading and reload) and the refusal of
// Basic credentials over plain HTTP from a non-loopback address.

const missing = opensslMissing();
if (missing) {
  t.plan(0, missing);
  process.exit(0);
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'webdav-tls-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const certFile = path.join(dir, 'cert.pem');
const keyFile = path.join(dir, 'key.pem');
const first = await selfSignedCert();
writeFileSync(certFile, first.cert);
writeFileSync(keyFile, first.key);

/** A PROPFIND over HTTPS with curl, trusting only `caFile`: the status (000 when the TLS handshake failed). */
async function propfindHttps(port: number, auth: string, caFile: string): Promise<{ status: string; body: string }> {
  const r = await run('curl', ['-s', '--cacert', caFile, '-u', auth, '-X', 'PROPFIND', '-H', 'Depth: 0', '-w', '\n%{http_code}', `https://127.0.0.1:${port}/`]);
  const lines = r.stdout.split('\n');
  return { status: lines.pop()!, body: lines.join('\n') };
}

t.test('a tls binding serves HTTPS with the configured certificate and reloads it', async (t) => {
  const h = await startWebdav(t, {
    webdav: { bindings: [{ address: '127.0.0.1', port: 0, tls: true, certificate_file: certFile, certificate_key_file: keyFile }] },
  });
  await h.addUser('u1');
  const st = await h.status();
  t.equal((st.bindings![0] as { enable_https?: boolean }).enable_https, true, '/status shows the binding as HTTPS');

  const ok = await propfindHttps(h.port, 'u1:u1-pass-1', certFile);
  t.equal(ok.status, '207', 'PROPFIND over HTTPS, certificate verified by curl');
  t.match(ok.body, /multistatus/);
  t.equal((await propfindHttps(h.port, 'u1:wrong', certFile)).status, '401', 'wrong password refused');
  const plain = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-u', 'u1:u1-pass-1', `http://127.0.0.1:${h.port}/`]);
  t.not(plain.stdout, '207', 'no plain HTTP on the TLS binding');

  // a new certificate written over the files is served to new connections without a restart
  const second = await selfSignedCert();
  const secondFp = new X509Certificate(second.cert).fingerprint256;
  t.equal(await servedFingerprint(h.port), new X509Certificate(first.cert).fingerprint256);
  writeFileSync(keyFile, second.key);
  writeFileSync(certFile, second.cert);
  let served = '';
  // a bounded wait for the file watch (not a measure of speed)
  for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    served = await servedFingerprint(h.port);
    if (served === secondFp) break;
  }
  t.equal(served, secondFp, 'the new certificate is served');
  t.equal((await propfindHttps(h.port, 'u1:u1-pass-1', certFile)).status, '207', 'and verifies against the new file');
});

t.test('a tls binding without its files is refused by the configuration', async (t) => {
  await t.rejects(startWebdav(t, { webdav: { bindings: [{ address: '127.0.0.1', port: 0, tls: true }] } }), /certificate_file/);
});

/** A non-loopback IPv4 address of this machine, or undefined. */
const outside = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

t.test('Basic over plain HTTP from a non-loopback address', { skip: outside ? false : 'no non-loopback IPv4 address on this machine' }, async (t) => {
  const status = async (allow: boolean) => {
    const h = await startWebdav(t, { webdav: { bindings: [{ address: outside, port: 0 }], allow_insecure_basic: allow } });
    await h.addUser('u1');
    const r = await run('curl', ['-s', '-u', 'u1:u1-pass-1', '-X', 'PROPFIND', '-H', 'Depth: 0', '-w', '\n%{http_code}', `http://${outside}:${h.port}/`]);
    const lines = r.stdout.split('\n');
    return { status: lines.pop()!, body: lines.join('\n') };
  };
  const refused = await status(false);
  t.equal(refused.status, '403', 'refused by default');
  t.match(refused.body, /plain HTTP/, 'with a message saying why');
  t.equal((await status(true)).status, '207', 'accepted with allow_insecure_basic');
});
