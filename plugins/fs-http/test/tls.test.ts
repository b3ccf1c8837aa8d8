/**
 * skip_tls_verify against the reference server over HTTPS with a self-signed
 * certificate generated at test time by openssl (skipped, saying why, when
 * openssl is not installed: node:crypto cannot build X.509 certificates).
 */
import os from 'node:os';
import t from 'tap';
import { FsErrorCode } from '@ferry/core';
import { opensslMissing, readFile as readFsFile, rejectionOf, selfSignedCert, writeFile } from '@ferry/testkit';
import { basicOptions, startServer, testFs, testProvider } from './fixtures/server.js';

const missing = opensslMissing();
if (missing) {
  t.plan(0, missing);
} else {
  const tls = await selfSignedCert();
  const srv = await startServer(t, { tls });

  t.test('the endpoint is https', async (t) => {
    t.match(srv.url, /^https:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
  });

  t.test('a self-signed certificate is refused by default', async (t) => {
    const fs = await testFs(t, basicOptions(srv.url));
    const err = await rejectionOf(fs.stat('/'));
    t.match(err, { code: FsErrorCode.Unavailable, message: /TLS verification failed/ });
  });

  t.test('skip_tls_verify accepts it', async (t) => {
    const fs = await testFs(t, basicOptions(srv.url, { skip_tls_verify: true }));
    await writeFile(fs, '/over-tls.txt', 'encrypted in transit');
    t.equal((await readFsFile(fs, '/over-tls.txt')).toString(), 'encrypted in transit');
    t.equal((await readFsFile(fs, '/over-tls.txt', { start: 10, end: 11 })).toString(), 'in');
  });

  t.test('verifying and non-verifying instances never share connections', async (t) => {
    const provider = testProvider(t);
    const scope = { username: 'u', dataDir: os.tmpdir() };
    const insecure = await provider.create(basicOptions(srv.url, { skip_tls_verify: true }), scope);
    const strict = await provider.create(basicOptions(srv.url), scope);
    t.equal((await insecure.stat('/')).isDir, true);
    t.match(await rejectionOf(strict.stat('/')), { code: FsErrorCode.Unavailable }, 'still verified after an insecure call');
    t.equal(provider.agents.size, 2);
    await insecure.close();
    await strict.close();
  });
}
