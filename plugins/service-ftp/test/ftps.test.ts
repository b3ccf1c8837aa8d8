import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { servedFingerprint } from '@ferry/testkit';
import t from 'tap';
import { PASSWORD, RawFtp, run, startFtp, testCertificates } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const pyClient = path.join(here, 'ftps-client.py');

t.test('explicit FTPS, required on the binding', async (t) => {
  const dir = t.testdir();
  const certs = await testCertificates(dir);
  const h = await startFtp(t, {
    ftp: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'explicit-required' }], certificate_file: certs.cert, certificate_key_file: certs.key },
  });
  const home = await h.addUser('bob');
  const url = `ftp://127.0.0.1:${h.port}`;
  const auth = ['-sS', '--ssl-reqd', '--cacert', certs.ca, '--user', `bob:${PASSWORD('bob')}`];
  const data = Buffer.alloc(2 * 1024 * 1024 + 5, 'xyz');
  writeFileSync(path.join(dir, 'up.bin'), data);

  t.test('status shows tls_mode 1', async (t) => {
    t.equal((await h.status()).bindings![0]!.tls_mode, 1);
  });

  t.test('curl --ssl-reqd: upload, download, list', async (t) => {
    const up = await run('curl', [...auth, '-T', path.join(dir, 'up.bin'), `${url}/up.bin`]);
    t.equal(up.code, 0, up.stderr);
    t.same(readFileSync(path.join(home, 'up.bin')), data);
    const down = await run('curl', [...auth, '-o', path.join(dir, 'down.bin'), `${url}/up.bin`]);
    t.equal(down.code, 0, down.stderr);
    t.same(readFileSync(path.join(dir, 'down.bin')), data);
    const list = await run('curl', [...auth, `${url}/`]);
    t.match(list.stdout, /up\.bin/);
  });

  t.test('lftp with the test CA verified', async (t) => {
    const script = [
      'set ftp:ssl-force true',
      'set ftp:ssl-protect-data true',
      `set ssl:ca-file ${certs.ca}`,
      'set ssl:verify-certificate yes',
      'set net:max-retries 1',
      `put ${path.join(dir, 'up.bin')} -o /lftp.bin`,
      'mkdir -p /tree/a/b',
      'put ' + path.join(dir, 'up.bin') + ' -o /tree/a/b/deep.bin',
      `get /lftp.bin -o ${path.join(dir, 'lftp-down.bin')}`,
      'mv /lftp.bin /renamed.bin',
      'cls -1 /',
      'rm -r /tree',
      'bye',
    ].join('; ');
    const r = await run('lftp', ['-u', `bob,${PASSWORD('bob')}`, '-e', script, `ftp://127.0.0.1:${h.port}`]);
    t.equal(r.code, 0, r.stderr);
    t.same(readFileSync(path.join(dir, 'lftp-down.bin')), data);
    t.match(r.stdout, /renamed\.bin/);
    t.ok(existsSync(path.join(home, 'renamed.bin')));
    t.notOk(existsSync(path.join(home, 'tree')), 'the tree was removed');
  });

  t.test('python ftplib resuming the TLS session', async (t) => {
    const r = await run('python3', [pyClient, String(h.port), 'bob', PASSWORD('bob'), certs.ca, 'reuse', 'py.bin']);
    t.equal(r.code, 0, r.stdout + r.stderr);
    t.match(r.stdout, /^equal True$/m);
    t.match(r.stdout, /^rest True$/m);
    t.match(r.stdout, /^mlsd .*'py\.bin'/m);
    t.match(r.stdout, /^hash True$/m, 'HASH over FTPS: the SHA-256 hashlib computes');
  });

  t.test('python ftplib without session reuse is refused (522)', async (t) => {
    const r = await run('python3', [pyClient, String(h.port), 'bob', PASSWORD('bob'), certs.ca, 'noreuse', 'stolen.bin']);
    t.equal(r.code, 3);
    t.match(r.stdout, /error 522 /);
    t.notOk(existsSync(path.join(home, 'stolen.bin')), 'nothing stored');
  });

  t.test('plain login refused when TLS is required', async (t) => {
    const c = await RawFtp.connect(h.port);
    t.match(await c.reply(), /^220 /);
    t.match(await c.cmd('USER bob'), /^530 .*TLS/);
    t.match(await c.cmd(`PASS ${PASSWORD('bob')}`), /^503 /);
    c.close();
    const r = await run('curl', ['-sS', '--user', `bob:${PASSWORD('bob')}`, `${url}/`]);
    t.not(r.code, 0, 'curl without TLS fails');
  });
});

t.test('implicit FTPS with curl ftps://', async (t) => {
  const dir = t.testdir();
  const certs = await testCertificates(dir);
  const h = await startFtp(t, {
    ftp: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'implicit' }], certificate_file: certs.cert, certificate_key_file: certs.key },
  });
  const home = await h.addUser('ivy');
  t.equal((await h.status()).bindings![0]!.tls_mode, 2);
  writeFileSync(path.join(dir, 'f.txt'), 'implicit');
  const auth = ['-sS', '--cacert', certs.ca, '--user', `ivy:${PASSWORD('ivy')}`];
  const up = await run('curl', [...auth, '-T', path.join(dir, 'f.txt'), `ftps://127.0.0.1:${h.port}/f.txt`]);
  t.equal(up.code, 0, up.stderr);
  t.equal(readFileSync(path.join(home, 'f.txt'), 'utf8'), 'implicit');
  const down = await run('curl', [...auth, `ftps://127.0.0.1:${h.port}/f.txt`]);
  t.equal(down.stdout, 'implicit');
  const clear = await RawFtp.connect(h.port);
  clear.send('USER ivy\r\n');
  t.equal(await clear.reply(), '', 'a clear-text client gets no reply and is dropped');
});

t.test('a certificate written over the files is served without a restart (core reload)', async (t) => {
  const dir = t.testdir({ first: {}, second: {} });
  const first = await testCertificates(path.join(dir, 'first'));
  const second = await testCertificates(path.join(dir, 'second'));
  const h = await startFtp(t, {
    ftp: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'implicit' }], certificate_file: first.cert, certificate_key_file: first.key },
  });
  await h.addUser('kim');
  const fingerprint = (file: string) => new X509Certificate(readFileSync(file)).fingerprint256;
  t.equal(await servedFingerprint(h.port), fingerprint(first.cert), 'the configured certificate is served');
  writeFileSync(first.key, readFileSync(second.key));
  writeFileSync(first.cert, readFileSync(second.cert));
  let served = '';
  // a bounded wait for the file watch (not a measure of speed)
  for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    served = await servedFingerprint(h.port);
    if (served === fingerprint(second.cert)) break;
  }
  t.equal(served, fingerprint(second.cert), 'the new certificate is served to new connections');
  const auth = ['-sS', '--cacert', second.ca, '--user', `kim:${PASSWORD('kim')}`];
  const list = await run('curl', [...auth, '-l', `ftps://127.0.0.1:${h.port}/`]);
  t.equal(list.code, 0, `a client trusting only the new CA logs in and lists: ${list.stderr}`);
  const old = await run('curl', ['-sS', '--cacert', first.ca, '--user', `kim:${PASSWORD('kim')}`, '-l', `ftps://127.0.0.1:${h.port}/`]);
  t.not(old.code, 0, 'a client trusting only the old CA is refused at the handshake');
});

// rclone 1.60 keys its TLS session cache by host and port, and the data port is another port:
// it cannot resume the control session, so this server turns require_tls_session_reuse off
t.test('rclone over explicit FTPS (session reuse not required)', async (t) => {
  const dir = t.testdir();
  const certs = await testCertificates(dir);
  const h = await startFtp(t, {
    ftp: {
      bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'explicit-required' }],
      certificate_file: certs.cert,
      certificate_key_file: certs.key,
      require_tls_session_reuse: false,
    },
  });
  const home = await h.addUser('rex');
  const obscured = (await run('rclone', ['obscure', PASSWORD('rex')])).stdout.trim();
  const remote = `:ftp,host=127.0.0.1,port=${h.port},user=rex,pass=${obscured},explicit_tls=true,no_check_certificate=true:`;
  const env = { RCLONE_CONFIG: path.join(dir, 'none.conf') };
  const src = path.join(dir, 'src');
  for (const [f, body] of [
    ['a.txt', 'alpha'],
    ['sub/b.txt', 'beta'],
    ['sub/deeper/c.txt', 'gamma'],
  ] as const) {
    mkdirSync(path.dirname(path.join(src, f)), { recursive: true });
    writeFileSync(path.join(src, f), body);
  }
  const copy = await run('rclone', ['copy', src, `${remote}/tree`], { env });
  t.equal(copy.code, 0, copy.stderr);
  t.equal(readFileSync(path.join(home, 'tree', 'sub', 'deeper', 'c.txt'), 'utf8'), 'gamma');
  const ls = await run('rclone', ['lsf', '-R', `${remote}/tree`], { env });
  t.same(ls.stdout.trim().split('\n').sort(), ['a.txt', 'sub/', 'sub/b.txt', 'sub/deeper/', 'sub/deeper/c.txt']);
  const back = await run('rclone', ['copy', `${remote}/tree`, path.join(dir, 'back')], { env });
  t.equal(back.code, 0, back.stderr);
  t.equal(readFileSync(path.join(dir, 'back', 'sub', 'b.txt'), 'utf8'), 'beta');
  const purge = await run('rclone', ['purge', `${remote}/tree`], { env });
  t.equal(purge.code, 0, purge.stderr);
  t.notOk(existsSync(path.join(home, 'tree')), 'purged');
});
