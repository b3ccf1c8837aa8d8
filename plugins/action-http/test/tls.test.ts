/**
 * skip_tls_verify against an HTTPS recorder with a self-signed certificate
 * made at test time by openssl (skipped, saying why, when openssl is missing).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { runAction } from '@ferry/testkit';
import { httpActionDef } from '../src/index.js';
import { startRecorder } from './recorder.js';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (!hasOpenssl()) {
  t.plan(0, 'openssl is not installed: cannot create a self-signed certificate for the HTTPS tests');
} else {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-action-http-tls-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  const srv = await startRecorder({ key: await readFile(key), cert: await readFile(cert) });
  t.teardown(() => srv.close());
  const def = httpActionDef({ allowLinkLocal: false, files: () => ({ open: () => Promise.reject(new Error('unused')) }) });

  t.test('a self-signed certificate is refused unless skip_tls_verify', async (t) => {
    t.match(srv.base, /^https:/);
    const n = srv.requests.length;
    await t.rejects(runAction(def, { endpoint: `${srv.base}/secure`, method: 'POST', body: 'tls body' }), {
      message: /^HTTP POST https:\/\/127\.0\.0\.1:\d+\/secure failed: self[- ]signed certificate/,
    });
    t.equal(srv.requests.length, n, 'nothing was sent');
    await runAction(def, { endpoint: `${srv.base}/secure`, method: 'POST', body: 'tls body', skip_tls_verify: true });
    t.equal(srv.last().body.toString(), 'tls body', 'received over TLS with skip_tls_verify');
  });
}
