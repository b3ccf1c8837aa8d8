import t from 'tap';
import { createHash } from 'node:crypto';
import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { captureLogger } from '@ferry/core/testing';
import { connectSsh, openSftp, run, startSftp } from './helpers.js';

// Host keys follow their files on SIGHUP, like the TLS certificates: new connections get the new
// key, open ones keep theirs, /status shows the new fingerprints; a key that cannot be read leaves
// the current ones in service.

/** Resolves once `ok()` holds, checking after each event loop turn (bounded: fails the test after 20 s). */
async function until(what: string, ok: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

t.test('SIGHUP reloads the host keys', async (t) => {
  const dir = t.testdir({});
  const keygen = async (name: string, type: string) => {
    const file = path.join(dir, name);
    await run('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', file]);
    const printed = await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', file]);
    return { file, fingerprint: printed.stdout.split(' ')[1]! };
  };
  const one = await keygen('one', 'ed25519');
  const two = await keygen('two', 'ed25519');
  const ecdsa = await keygen('ec', 'ecdsa');
  const hostKey = path.join(dir, 'host_key');
  copyFileSync(one.file, hostKey);
  const { logger, lines } = captureLogger();
  const h = await startSftp(t, { sftp: { host_keys: [hostKey] }, logger });
  await h.addUser('hugo');
  const fingerprints = async () => (await h.status()).host_keys?.map((k) => k.fingerprint);
  /** Logs in and resolves with the fingerprint of the host key the server presented. */
  const presented = async () => {
    let seen = '';
    const c = await connectSsh({
      port: h.port,
      username: 'hugo',
      password: 'hugo-pass-1',
      hostVerifier: (key: Buffer) => ((seen = 'SHA256:' + createHash('sha256').update(key).digest('base64').replace(/=+$/, '')), true),
    });
    return { c, seen };
  };

  t.same(await fingerprints(), [one.fingerprint]);
  const before = await presented();
  t.teardown(() => before.c.end());
  t.equal(before.seen, one.fingerprint, 'the configured key');

  copyFileSync(two.file, hostKey);
  process.kill(process.pid, 'SIGHUP');
  await until('the new fingerprint in /status', async () => (await fingerprints())?.[0] === two.fingerprint);
  t.pass('/status shows the new fingerprint');
  const after = await presented();
  after.c.end();
  t.equal(after.seen, two.fingerprint, 'a new connection gets the new key');
  const names = await new Promise<string[]>(
    (resolve, reject) => void openSftp(before.c).then((s) => s.readdir('/', (err, l) => (err ? reject(err) : resolve(l.map((e) => e.filename)))), reject),
  );
  t.same(names, [], 'the connection made before the reload goes on');

  writeFileSync(hostKey, 'not a key\n');
  process.kill(process.pid, 'SIGHUP');
  await until('the failed reload logged', () => lines.some((l) => l.includes('ssh host keys not reloaded')));
  t.same(await fingerprints(), [two.fingerprint], 'an unreadable key: the current one stays');
  const still = await presented();
  still.c.end();
  t.equal(still.seen, two.fingerprint, 'and is served');
  t.notMatch(lines.join('\n'), /PRIVATE KEY/, 'no key material in the logs');

  // a key of another type: the algorithms follow
  copyFileSync(ecdsa.file, hostKey);
  process.kill(process.pid, 'SIGHUP');
  await until('the ecdsa key in /status', async () => (await fingerprints())?.[0] === ecdsa.fingerprint);
  t.same((await h.status()).host_keys?.[0]?.algorithms, ['ecdsa-sha2-nistp256']);
  const ec = await presented();
  ec.c.end();
  t.equal(ec.seen, ecdsa.fingerprint, 'served with its own algorithm');
});
