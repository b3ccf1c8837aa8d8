import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { readBufferPool } from '@ferry/core/testing';
import t from 'tap';
import { PASSWORD, RawFtp, run, startFtp } from './helpers.js';

t.test('plain FTP with curl and a raw client', async (t) => {
  const h = await startFtp(t, { ftp: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'plain' }] } });
  const home = await h.addUser('alice');
  const dir = t.testdir();
  const url = `ftp://127.0.0.1:${h.port}`;
  const auth = ['-sS', '--user', `alice:${PASSWORD('alice')}`];
  // random bytes: a chunk of the upload out of place or written twice cannot go unseen (its data connection reads in large chunks)
  const data = randomBytes(3 * 1024 * 1024 + 17);
  writeFileSync(path.join(dir, 'up.bin'), data);

  t.test('status reports the binding', async (t) => {
    const s = await h.status();
    t.equal(s.is_active, true);
    t.equal(s.bindings![0]!.tls_mode, 0);
  });

  t.test('upload, download, resume, list', async (t) => {
    const up = await run('curl', [...auth, '-T', path.join(dir, 'up.bin'), `${url}/sub/up.bin`, '--ftp-create-dirs']);
    t.equal(up.code, 0, up.stderr);
    t.same(readFileSync(path.join(home, 'sub', 'up.bin')), data, 'the upload is byte for byte');
    const pool = { ...readBufferPool.stats };
    const down = await run('curl', [...auth, '-o', path.join(dir, 'down.bin'), `${url}/sub/up.bin`]);
    t.equal(down.code, 0, down.stderr);
    t.same(readFileSync(path.join(dir, 'down.bin')), data);
    t.ok(readBufferPool.stats.reused > pool.reused, 'RETR reads into read buffers given back by the data connection');
    t.equal(readBufferPool.stats.unpooled, pool.unpooled, 'no buffer outside the pool');
    writeFileSync(path.join(dir, 'part.bin'), data.subarray(0, 1000));
    const resumed = await run('curl', [...auth, '-C', '-', '-o', path.join(dir, 'part.bin'), `${url}/sub/up.bin`]);
    t.equal(resumed.code, 0, resumed.stderr);
    t.same(readFileSync(path.join(dir, 'part.bin')), data, 'a resumed download completes the file');
    const list = await run('curl', [...auth, `${url}/sub/`]);
    t.match(list.stdout, /^-rw.* 3145745 .* up\.bin\r?$/m);
    const nlst = await run('curl', [...auth, '-l', `${url}/sub/`]);
    t.equal(nlst.stdout.trim(), 'up.bin');
    t.ok(
      h.fsEvents.some((e) => e.action === 'upload' && e.protocol === 'FTP'),
      'an upload event with protocol FTP',
    );
  });

  t.test('empty uploads: curl, and a data connection closed before its STOR', async (t) => {
    writeFileSync(path.join(dir, 'empty.bin'), '');
    const up = await run('curl', [...auth, '-T', path.join(dir, 'empty.bin'), `${url}/empty.bin`]);
    t.equal(up.code, 0, up.stderr);
    t.equal(readFileSync(path.join(home, 'empty.bin')).length, 0, 'an empty file');
    // the client connects and ends the data connection first (the server reads nothing of it until the
    // STOR, as vsftpd, so only the client's half is closed then): the paused connection still tells its end
    const c = await RawFtp.connect(h.port);
    await c.reply();
    await c.cmd('USER alice');
    t.match(await c.cmd(`PASS ${PASSWORD('alice')}`), /^230 /);
    const pasv = await c.cmd('EPSV');
    const port = Number(/\(\|\|\|(\d+)\|\)/.exec(pasv)![1]);
    const data = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => data.once('connect', resolve));
    data.on('error', () => undefined);
    await new Promise<void>((resolve) => data.end(() => resolve()));
    t.match(await c.cmd('STOR early-close.bin'), /^150 /);
    t.match(await c.reply(), /^226 /, 'complete: zero bytes');
    t.equal(readFileSync(path.join(home, 'early-close.bin')).length, 0);
    c.close();
  });

  t.test('rename and delete through curl -Q', async (t) => {
    const r = await run('curl', [...auth, '-Q', 'RNFR sub/up.bin', '-Q', 'RNTO sub/moved.bin', '-Q', 'DELE sub/moved.bin', '-Q', 'RMD sub', `${url}/`]);
    t.equal(r.code, 0, r.stderr);
    t.notOk(existsSync(path.join(home, 'sub')), 'renamed, deleted and removed');
  });

  t.test('refusals', async (t) => {
    const bad = await run('curl', ['-sS', '--user', 'alice:wrong', `${url}/`]);
    t.equal(bad.code, 67, 'a bad password is refused (530)');
    const c = await RawFtp.connect(h.port);
    t.match(await c.reply(), /^220 /);
    t.match(await c.cmd('LIST'), /^530 /, 'nothing before the login');
    t.match(await c.cmd('USER alice'), /^331 /);
    t.match(await c.cmd(`PASS ${PASSWORD('alice')}`), /^230 /);
    t.match(await c.cmd('CWD ../../..'), /^250 Directory changed to \/\./, 'CWD stays inside the root');
    t.match(await c.cmd('RETR ../../etc/passwd'), /^550 /);
    t.match(await c.cmd('SITE CHMOD 777 x'), /^502 /);
    t.match(await c.cmd('PORT 127,0,0,1,1,1'), /^502 /, 'active mode is off');
    t.match(await c.cmd('PWD'), /^257 "\/"/);
    // pipelined commands answered in order
    c.send('NOOP\r\nSYST\r\nTYPE I\r\n');
    t.match(await c.reply(), /^200 OK/);
    t.match(await c.reply(), /^215 /);
    t.match(await c.reply(), /^200 Type set to I/);
    c.send(Buffer.concat([Buffer.from('MKD a\u0000b\r\nMKD '), Buffer.from([0xc3, 0x28]), Buffer.from('\r\n'), Buffer.from('X'.repeat(5000) + '\r\n')]));
    t.match(await c.reply(), /^501 NUL/);
    t.match(await c.reply(), /^501 .*UTF-8/);
    t.match(await c.reply(), /^500 .*too long/);
    t.match(await c.cmd('QUIT'), /^221 /);
    c.close();
  });

  t.test('the connection is listed with protocol FTP and closed by DELETE', async (t) => {
    const c = await RawFtp.connect(h.port);
    await c.reply();
    await c.cmd('USER alice');
    t.match(await c.cmd(`PASS ${PASSWORD('alice')}`), /^230 /);
    const list = await h.ta.inject('GET', '/api/v2/connections', { token: h.token });
    const conns = list.result as { connection_id: string; protocol: string; username: string }[];
    const mine = conns.find((x) => x.protocol === 'FTP' && x.username === 'alice');
    t.ok(mine, 'listed');
    const del = await h.ta.inject('DELETE', `/api/v2/connections/${mine!.connection_id}`, { token: h.token });
    t.equal(del.statusCode, 200);
    t.match(await c.reply(), /^421 /);
    t.equal(await c.reply(), '', 'closed');
  });
});
