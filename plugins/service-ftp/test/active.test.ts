/**
 * Active mode (PORT/EPRT): off by default; when on, curl, lftp and ftplib
 * transfer with the server connecting to them, and a PORT to another host
 * (FXP, bounce) or to a privileged port is refused.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { PASSWORD, RawFtp, run, startFtp, testCertificates } from './helpers.js';

const plain = [{ address: '127.0.0.1', port: 0, tls_mode: 'plain' }];

/** A logged-in raw control connection. */
async function login(port: number, user: string): Promise<RawFtp> {
  const c = await RawFtp.connect(port);
  await c.reply();
  await c.cmd(`USER ${user}`);
  const r = await c.cmd(`PASS ${PASSWORD(user)}`);
  if (!r.startsWith('230')) throw new Error(r);
  return c;
}

/** A listener on 127.0.0.1 that collects what the server sends to it, as PORT's target. */
async function collector(): Promise<{ port: number; received: Promise<{ data: string; from: string }>; close(): void }> {
  let resolveReceived!: (v: { data: string; from: string }) => void;
  const received = new Promise<{ data: string; from: string }>((r) => (resolveReceived = r));
  const server = net.createServer((s) => {
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('end', () => resolveReceived({ data: Buffer.concat(chunks).toString(), from: s.remoteAddress ?? '' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, received, close: () => server.close() };
}

t.test('active mode off (the default): PORT and EPRT are refused with 502, FEAT does not offer EPRT', async (t) => {
  const h = await startFtp(t, { ftp: { bindings: plain } });
  await h.addUser('olga');
  const c = await login(h.port, 'olga');
  t.match(await c.cmd('PORT 127,0,0,1,200,10'), /^502 Active mode is off/);
  t.match(await c.cmd('EPRT |1|127.0.0.1|51210|'), /^502 /);
  t.notMatch(await c.cmd('FEAT'), /EPRT/);
  c.close();
});

t.test('active mode on', async (t) => {
  const h = await startFtp(t, { ftp: { bindings: plain, active_mode: true } });
  const home = await h.addUser('alan');
  mkdirSync(home, { recursive: true });

  t.test('a raw PORT: the server connects to the client and sends the listing', async (t) => {
    writeFileSync(path.join(home, 'listed.txt'), 'x');
    const c = await login(h.port, 'alan');
    t.match(await c.cmd('FEAT'), /EPRT/, 'FEAT offers EPRT');
    const target = await collector();
    t.teardown(() => target.close());
    t.match(await c.cmd(`PORT 127,0,0,1,${target.port >> 8},${target.port & 255}`), /^200 /);
    t.match(await c.cmd('NLST'), /^150 /);
    t.match(await c.reply(), /^226 /);
    const got = await target.received;
    t.match(got.data, /listed\.txt/, 'the listing came over the active connection');
    t.match(got.from, /127\.0\.0\.1$/);
    c.close();
  });

  t.test('curl in active mode (-P): upload and download', async (t) => {
    const big = randomBytes(2 * 1024 * 1024 + 3);
    const dir = t.testdir({ 'up.txt': 'sent actively', 'big.bin': big });
    /** curl -P: the server connects to curl for the data of the upload. */
    const putActively = (name: string) =>
      run('curl', ['-sS', '-P', '127.0.0.1', '--user', `alan:${PASSWORD('alan')}`, '-T', path.join(dir, name), `ftp://127.0.0.1:${h.port}/${name}`]);
    const upBig = await putActively('big.bin');
    t.equal(upBig.code, 0, upBig.stderr);
    t.same(readFileSync(path.join(home, 'big.bin')), big, 'an upload over an active connection (read in large chunks) is byte for byte');
    const up = await putActively('up.txt');
    t.equal(up.code, 0, up.stderr);
    t.equal(readFileSync(path.join(home, 'up.txt'), 'utf8'), 'sent actively');
    const down = await run('curl', [
      '-sS',
      '--ftp-port',
      '127.0.0.1',
      '--disable-eprt',
      '--user',
      `alan:${PASSWORD('alan')}`,
      `ftp://127.0.0.1:${h.port}/up.txt`,
    ]);
    t.equal(down.code, 0, down.stderr);
    t.equal(down.stdout, 'sent actively', 'downloaded over PORT (EPRT disabled in curl)');
  });

  t.test('lftp with passive mode off: put, mirror, get', async (t) => {
    const dir = t.testdir({ 'a.txt': 'first', tree: { 'b.txt': 'second', deep: { 'c.txt': 'third' } } });
    const script = [
      'set net:max-retries 1',
      'set ftp:passive-mode off',
      `put ${path.join(dir, 'a.txt')} -o /lftp-a.txt`,
      `mirror -R ${path.join(dir, 'tree')} /lftp-tree`,
      `get /lftp-a.txt -o ${path.join(dir, 'a-back.txt')}`,
      'bye',
    ].join('; ');
    const r = await run('lftp', ['-u', `alan,${PASSWORD('alan')}`, '-e', script, `ftp://127.0.0.1:${h.port}`]);
    t.equal(r.code, 0, r.stderr);
    t.equal(readFileSync(path.join(home, 'lftp-tree', 'deep', 'c.txt'), 'utf8'), 'third');
    t.equal(readFileSync(path.join(dir, 'a-back.txt'), 'utf8'), 'first');
  });

  t.test("Python's ftplib in active mode", async (t) => {
    const script = [
      'import ftplib, io, sys',
      'f = ftplib.FTP()',
      'f.connect("127.0.0.1", int(sys.argv[1]))',
      'f.login("alan", sys.argv[2])',
      'f.set_pasv(False)',
      'f.storbinary("STOR py.txt", io.BytesIO(b"from ftplib"))',
      'out = io.BytesIO()',
      'f.retrbinary("RETR py.txt", out.write)',
      'print(out.getvalue().decode())',
      'f.quit()',
    ].join('\n');
    const r = await run('python3', ['-c', script, String(h.port), PASSWORD('alan')]);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout.trim(), 'from ftplib');
    t.equal(readFileSync(path.join(home, 'py.txt'), 'utf8'), 'from ftplib');
  });

  t.test('refusals: another host (FXP, bounce), a privileged port, malformed arguments, after EPSV ALL', async (t) => {
    const c = await login(h.port, 'alan');
    t.match(await c.cmd('PORT 127,0,0,2,200,10'), /^501 Active mode connects only to the client's own address/, 'PORT to a third host');
    t.match(await c.cmd('EPRT |1|10.1.2.3|51210|'), /^501 /, 'EPRT to a third host');
    t.match(await c.cmd('PORT 127,0,0,1,0,25'), /^501 .*below 1024/, 'a privileged port (SMTP)');
    t.match(await c.cmd('PORT 127,0,0,1,300,1'), /^501 /, 'a number over 255');
    t.match(await c.cmd('PORT 127,0,0,1'), /^501 /, 'too few numbers');
    t.match(await c.cmd('EPRT |3|127.0.0.1|51210|'), /^522 /, 'an unknown network protocol');
    t.match(await c.cmd('EPRT |1|::1|51210|'), /^501 /, 'an IPv6 address as IPv4');
    t.match(await c.cmd('EPRT 127.0.0.1 51210'), /^501 /, 'no delimiters');
    t.match(await c.cmd('NLST'), /^425 /, 'no data connection was set by the refused commands');
    t.match(await c.cmd('EPSV ALL'), /^200 /);
    t.match(await c.cmd('PORT 127,0,0,1,200,10'), /^501 .*EPSV ALL/, 'PORT after EPSV ALL');
    t.match(await c.cmd('PASV'), /^501 .*EPSV ALL/, 'PASV after EPSV ALL');
    c.close();
  });

  t.test('the client does not accept the connection: 425, and the session goes on', async (t) => {
    const c = await login(h.port, 'alan');
    // a port nobody listens on
    const closed = await collector();
    closed.close();
    t.match(await c.cmd(`EPRT |1|127.0.0.1|${closed.port}|`), /^200 /);
    t.match(await c.cmd('NLST'), /^425 /);
    t.match(await c.cmd('NOOP'), /^200 /);
    c.close();
  });
});

t.test('active mode under explicit FTPS (PROT P): ftplib with TLS session reuse, refusing a client without it', async (t) => {
  const dir = t.testdir();
  const certs = await testCertificates(dir);
  const h = await startFtp(t, {
    ftp: {
      bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'explicit-required' }],
      certificate_file: certs.cert,
      certificate_key_file: certs.key,
      active_mode: true,
    },
  });
  const home = await h.addUser('tess');
  const client = path.join(path.dirname(fileURLToPath(import.meta.url)), 'ftps-client.py');
  const r = await run('python3', [client, String(h.port), 'tess', PASSWORD('tess'), certs.ca, 'reuse-active', 'act.bin']);
  t.equal(r.code, 0, r.stdout + r.stderr);
  t.match(r.stdout, /equal True/, 'uploaded and downloaded the same bytes over protected active connections');
  t.match(r.stdout, /rest True/, 'a resumed download');
  t.equal(readFileSync(path.join(home, 'act.bin')).length, 1_000_000);
  // curl 7.88 sends active-mode data in clear after PROT P: the server refuses it rather than take it
  const data = path.join(dir, 'clear.bin');
  writeFileSync(data, 'not protected');
  const auth = ['-sS', '--ssl-reqd', '--cacert', certs.ca, '-P', '127.0.0.1', '--user', `tess:${PASSWORD('tess')}`];
  const up = await run('curl', [...auth, '-T', data, `ftp://127.0.0.1:${h.port}/clear.bin`]);
  t.not(up.code, 0, 'a data connection without TLS after PROT P is refused');
  t.notOk(existsSync(path.join(home, 'clear.bin')), 'nothing of it is kept');
});
