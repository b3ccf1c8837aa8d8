/**
 * skip_tls_verify against an HTTPS recorder with a self-signed certificate
 * made at test time by openssl (skipped, saying why, when openssl is missing).
 */
import t from 'tap';
import { opensslMissing, runAction, selfSignedCert } from '@ferry/testkit';
import { httpActionDef } from '../src/index.js';
import { startRecorder } from './recorder.js';

const missing = opensslMissing();
if (missing) {
  t.plan(0, missing);
} else {
  const tls = await selfSignedCert();
  const srv = await startRecorder(tls);
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
