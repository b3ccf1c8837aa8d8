/**
 * skip_tls_verify against the reference server over HTTPS with a self-signed
 * certificate generated at test time by openssl (skipped, saying why, when
 * openssl is not installed: node:crypto cannot build X.509 certificates).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { FsErrorCode } from '@ferry/core';
import { readFile as readFsFile, rejectionOf, writeFile } from '@ferry/testkit';
import { basicOptions, startServer, testFs, testProvider } from './fixtures/server.js';

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
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-httpfs-tls-'));
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
  const srv = await startServer(t, { tls: { key: await readFile(key), cert: await readFile(cert) } });

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
