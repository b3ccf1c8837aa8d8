import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { PASSWORD, RawFtp, run, startFtp } from './helpers.js';

/** Parses a 227 reply's port. */
const pasvPort = (reply: string) => {
  const m = /\((\d+),(\d+),(\d+),(\d+),(\d+),(\d+)\)/.exec(reply);
  if (!m) throw new Error(`not a PASV reply: ${reply}`);
  return Number(m[5]) * 256 + Number(m[6]);
};

t.test('refusals on plain FTP', async (t) => {
  const h = await startFtp(t, { ftp: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'plain' }], data_timeout: 2 } });
  const login = async (user: string) => {
    const c = await RawFtp.connect(h.port);
    await c.reply();
    await c.cmd(`USER ${user}`);
    const r = await c.cmd(`PASS ${PASSWORD(user)}`);
    if (!r.startsWith('230')) throw new Error(r);
    return c;
  };

  t.test('a data connection from another address is refused', async (t) => {
    const home = await h.addUser('carol');
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, 'secret.txt'), 'secret');
    const c = await login('carol');
    const port = pasvPort(await c.cmd('PASV'));
    // the thief: 127.0.0.2 (another address of the loopback network)
    const got: Buffer[] = [];
    const thief = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
    thief.on('data', (d: Buffer) => got.push(d));
    const thiefClosed = new Promise<void>((resolve) => thief.on('close', () => resolve()));
    thief.on('error', () => undefined);
    await thiefClosed;
    t.equal(Buffer.concat(got).length, 0, 'the thief got nothing');
    t.match(await c.cmd('RETR secret.txt'), /^425 /, 'no data connection from the client itself: 425');
    c.close();
  });

  t.test('quota exceeded mid-upload: 552 and nothing left', async (t) => {
    const home = await h.addUser('dave', { quota_size: 256 * 1024 });
    const dir = t.testdir();
    writeFileSync(path.join(dir, 'big.bin'), randomBytes(1024 * 1024));
    const r = await run('curl', ['-sS', '--user', `dave:${PASSWORD('dave')}`, '-T', path.join(dir, 'big.bin'), `ftp://127.0.0.1:${h.port}/big.bin`]);
    t.equal(r.code, 70, 'curl reports 552 (its "remote disk full", exit code 70)');
    t.notOk(existsSync(path.join(home, 'big.bin')), 'no partial file');
  });

  t.test('an account denied FTP, and one over max_sessions, cannot log in', async (t) => {
    await h.addUser('gina', { filters: { denied_protocols: ['FTP'] } });
    const denied = await run('curl', ['-sS', '--user', `gina:${PASSWORD('gina')}`, `ftp://127.0.0.1:${h.port}/`]);
    t.equal(denied.code, 67, 'denied_protocols FTP: 530');
    await h.addUser('hank', { max_sessions: 1 });
    const first = await login('hank');
    const second = await RawFtp.connect(h.port);
    await second.reply();
    await second.cmd('USER hank');
    t.match(await second.cmd(`PASS ${PASSWORD('hank')}`), /^530 /, 'a second session over max_sessions 1: 530');
    second.close();
    first.close();
  });

  t.test('a denied path is refused', async (t) => {
    const home = await h.addUser('erin', { permissions: { '/': ['*'], '/ro': ['list', 'download'] } });
    const c = await login('erin');
    t.match(await c.cmd('MKD ro'), /^257 /);
    t.match(await c.cmd('MKD ro/inner'), /^550 /, 'no create_dirs under /ro');
    t.match(await c.cmd('DELE ro'), /^550 /);
    t.notOk(existsSync(path.join(home, 'ro', 'inner')));
    c.close();
  });

  t.test('malformed command lines: no crash, nothing changed', async (t) => {
    const home = await h.addUser('fuzz');
    const c = await login('fuzz');
    const verbs = [
      'CWD',
      'SIZE',
      'MDTM',
      'LIST',
      'RETR',
      'REST',
      'TYPE',
      'OPTS',
      'FEAT',
      'PROT',
      'PBSZ',
      'MODE',
      'STRU',
      'RNFR',
      'EPSV',
      'XYZZY',
      'USER',
      'PASS',
    ];
    let sent = 0;
    for (let round = 0; round < 20; round++) {
      const lines: Buffer[] = [];
      for (let i = 0; i < 100; i++) {
        const kind = Math.floor(Math.random() * 3);
        if (kind === 0) lines.push(Buffer.from(randomBytes(1 + Math.floor(Math.random() * 200)).map((b) => (b === 0x0a ? 0x20 : b))));
        else if (kind === 1)
          lines.push(
            Buffer.concat([
              Buffer.from(`${verbs[i % verbs.length]} `),
              Buffer.from(randomBytes(Math.floor(Math.random() * 64)).map((b) => (b === 0x0a ? 0x41 : b))),
            ]),
          );
        else lines.push(Buffer.alloc(4096 + Math.floor(Math.random() * 9000), 0x41 + (i % 26)));
      }
      c.send(Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\r\n')])));
      sent += lines.length;
      // one NOOP after each batch: its 200 arrives once every line before it was answered
      c.send('NOOP\r\n');
      for (;;) {
        const r = await c.reply();
        if (r === '') throw new Error('the server closed the connection');
        if (r.startsWith('200 OK')) break;
      }
    }
    t.ok(sent >= 2000, `${sent} malformed lines sent`);
    t.match(await c.cmd('NOOP'), /^200 /, 'the connection still answers');
    t.same(readdirSync(home), [], 'nothing changed in the home directory');
    c.close();
    const again = await login('fuzz');
    t.match(await again.cmd('PWD'), /^257 /, 'the server still serves new connections');
    again.close();
  });
});
