import t from 'tap';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import ssh2 from 'ssh2';
import { connectSsh, openSftp, packetReader, run, sftpBatch, sshKey, startSftp } from './helpers.js';

// Rules of the account over SFTP (permissions, quotas), the connection list and its DELETE,
// /status, and requests a well-behaved client never sends.
const { STATUS_CODE } = ssh2.utils.sftp;

const sftpError = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: Error & { code?: number }) => err,
  );

t.test('operations', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);

  await t.test('/status: the ssh section with its binding and host key fingerprints', async (t) => {
    const ssh = await h.status();
    t.equal(ssh.is_active, true);
    t.same(ssh.bindings, [{ address: '127.0.0.1', port: h.port, apply_proxy_config: false }], 'the port bound (port 0 configured)');
    t.equal(ssh.host_keys?.length, 2, 'an ed25519 and an ecdsa key were generated');
    for (const k of ssh.host_keys ?? []) {
      t.equal(k.path, path.join(h.ta.dataDir, 'sftp', path.basename(k.path)), 'in <dataDir>/sftp');
      const listed = await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', k.path]);
      t.equal(listed.stdout.split(' ')[1], k.fingerprint, `${path.basename(k.path)}: the fingerprint ssh-keygen -l prints`);
    }
    t.same(ssh.host_keys?.map((k) => k.algorithms[0]).sort(), ['ecdsa-sha2-nistp256', 'ssh-ed25519']);
  });

  await t.test('a denied path answers PERMISSION_DENIED', async (t) => {
    await h.addUser('rita', { password: 'rita-pass-1', permissions: { '/': ['*'], '/ro': ['list', 'download'] } });
    const c = await connectSsh({ port: h.port, username: 'rita', password: 'rita-pass-1' });
    t.teardown(() => c.end());
    const sftp = await openSftp(c);
    await new Promise<void>((resolve, reject) => sftp.mkdir('/ro', (err) => (err ? reject(err) : resolve())));
    const err = await sftpError(new Promise((resolve, reject) => sftp.open('/ro/x.txt', 'w', (e, hnd) => (e ? reject(e) : resolve(hnd)))));
    t.equal(err?.code, STATUS_CODE.PERMISSION_DENIED);
    const rm = await sftpError(new Promise<void>((resolve, reject) => sftp.rmdir('/ro', (e) => (e ? reject(e) : resolve()))));
    t.equal(rm, null, 'the parent allows removing it');
  });

  await t.test('a quota exceeded mid-upload: an error, and nothing partial is visible', async (t) => {
    const home = await h.addUser('quinn', { public_keys: [key.pub], quota_size: 1024 * 1024 });
    writeFileSync(path.join(dir, 'three.bin'), randomBytes(3 * 1024 * 1024));
    const r = await sftpBatch({ port: h.port, user: 'quinn', key: key.file, dir, lines: ['put three.bin /three.bin'] });
    t.not(r.code, 0, 'the client sees the failure');
    t.match(r.stderr, /quota|Failure/i);
    t.notOk(existsSync(path.join(home, 'three.bin')), 'no partial file');
    t.same(
      readdirSync(home).filter((n) => !n.startsWith('.')),
      [],
      'nothing else either',
    );
  });

  await t.test("answers leave at once: the client's socket gets TCP_NODELAY (Nagle would hold a small answer for the delayed ACK)", async (t) => {
    const calls: { remotePort: number | undefined; on: boolean }[] = [];
    const setNoDelay = net.Socket.prototype.setNoDelay;
    net.Socket.prototype.setNoDelay = function (this: net.Socket, on?: boolean) {
      calls.push({ remotePort: this.remotePort, on: on !== false });
      return setNoDelay.call(this, on);
    };
    t.teardown(() => {
      net.Socket.prototype.setNoDelay = setNoDelay;
    });
    await h.addUser('nagle', { password: 'nagle-pass-1' });
    const c = await connectSsh({ port: h.port, username: 'nagle', password: 'nagle-pass-1' });
    t.teardown(() => c.end());
    const localPort = (c as unknown as { _sock: net.Socket })._sock.localPort;
    t.ok(
      calls.some((x) => x.remotePort === localPort && x.on),
      'set on the server side of this connection',
    );
  });

  await t.test('connections: listed with protocol SFTP, closed by DELETE', async (t) => {
    await h.addUser('cora', { password: 'cora-pass-1' });
    const c = await connectSsh({ port: h.port, username: 'cora', password: 'cora-pass-1' });
    const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
    await openSftp(c);
    const list = await h.ta.inject('GET', '/api/v2/connections', { token: h.token });
    const conns = JSON.parse(list.payload) as { username: string; connection_id: string; protocol: string; remote_address: string; client_version: string }[];
    const mine = conns.filter((x) => x.username === 'cora');
    t.equal(mine.length, 1);
    t.equal(mine[0]!.protocol, 'SFTP');
    t.match(mine[0]!.client_version, /^SSH-2\.0-/);
    const del = await h.ta.inject('DELETE', `/api/v2/connections/${mine[0]!.connection_id}`, { token: h.token });
    t.equal(del.statusCode, 200, del.payload);
    await closed;
    t.pass('the client connection was closed');
    const after = JSON.parse((await h.ta.inject('GET', '/api/v2/connections', { token: h.token })).payload) as { username: string }[];
    t.notOk(
      after.some((x) => x.username === 'cora'),
      'no longer listed',
    );
  });

  await t.test('random-access reads; a new file with a gap never filled is refused', async (t) => {
    const home = await h.addUser('rand', { password: 'rand-pass-1' });
    const data = randomBytes(300_000);
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, 'r.bin'), data);
    const c = await connectSsh({ port: h.port, username: 'rand', password: 'rand-pass-1' });
    t.teardown(() => c.end());
    const sftp = await openSftp(c);
    const open = (p: string, flags: 'r' | 'w') => new Promise<Buffer>((resolve, reject) => sftp.open(p, flags, (e, hnd) => (e ? reject(e) : resolve(hnd))));
    const read = (hnd: Buffer, pos: number, len: number) =>
      new Promise<Buffer>((resolve, reject) => {
        const buf = Buffer.alloc(len);
        sftp.read(hnd, buf, 0, len, pos, (e, n) => (e ? reject(e) : resolve(buf.subarray(0, n))));
      });
    const r = await open('/r.bin', 'r');
    for (const [pos, len] of [
      [200_000, 1000],
      [10, 50],
      [299_990, 10],
      [0, 100],
      [100, 100],
    ] as const) {
      t.same(await read(r, pos, len), data.subarray(pos, pos + len), `${len} bytes at ${pos}`);
    }
    t.same(await read(r, 300_000, 10), Buffer.alloc(0), 'EOF past the end (ssh2 reads it as 0 bytes)');
    const w = await open('/new.bin', 'w');
    const write = (pos: number, buf: Buffer) =>
      new Promise<void>((resolve, reject) => sftp.write(w, buf, 0, buf.length, pos, (e) => (e ? reject(e) : resolve())));
    await write(0, Buffer.from('abc'));
    const gap = await sftpError(write(1000, Buffer.from('def')));
    t.equal(gap, null, 'a write leaving a gap is held (the bytes before it may still come)');
    const close = await sftpError(new Promise<void>((resolve, reject) => sftp.close(w, (e) => (e ? reject(e) : resolve()))));
    t.equal(close?.code, STATUS_CODE.OP_UNSUPPORTED, 'CLOSE reports the gap never filled');
    t.match(close?.message ?? '', /only sequential writes/);
    t.notOk(existsSync(path.join(home, 'new.bin')), 'nothing partial');
  });

  await t.test('malformed requests: an error status, and the server keeps answering', async (t) => {
    await h.addUser('mal', { password: 'mal-pass-1' });
    const c = await connectSsh({ port: h.port, username: 'mal', password: 'mal-pass-1' });
    t.teardown(() => c.end());
    const raw = await new Promise<ssh2.ClientChannel>((resolve, reject) => c.subsys('sftp', (err, ch) => (err ? reject(err) : resolve(ch))));
    const packets = packetReader(raw);
    const send = (type: number, body: Buffer) => {
      const head = Buffer.alloc(5);
      head.writeUInt32BE(body.length + 1);
      head[4] = type;
      raw.write(Buffer.concat([head, body]));
    };
    const u32 = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(n);
      return b;
    };
    const str = (s: string | Buffer) => Buffer.concat([u32(Buffer.byteLength(s)), Buffer.from(s)]);
    send(1, u32(3)); // INIT v3
    send(16, Buffer.concat([u32(3), str('a/../b')])); // REALPATH at once, before the VERSION came
    const version = await packets.next();
    t.equal(version[0], 2, 'VERSION');
    t.equal(version.readUInt32BE(1), 3, 'version 3');
    t.match(version.toString('latin1'), /posix-rename@openssh\.com.*limits@openssh\.com/, 'naming its extensions');
    const real = await packets.next();
    t.equal(real[0], 104, 'a REALPATH sent with the INIT is answered (NAME)');
    t.equal(real.toString('utf8', 13, 13 + real.readUInt32BE(9)), '/b', 'normalised against the root');
    // READ on a handle never given out
    send(5, Buffer.concat([u32(7), str('nohandle'), Buffer.alloc(8), u32(100)]));
    const status = await packets.next();
    t.equal(status[0], 101, 'a STATUS');
    t.equal(status.readUInt32BE(1), 7, 'for the request');
    t.equal(status.readUInt32BE(5), STATUS_CODE.FAILURE);
    t.match(status.toString('utf8', 13, 13 + status.readUInt32BE(9)), /invalid handle/);
    // limits@openssh.com: packet, read, write lengths and open handles
    send(200, Buffer.concat([u32(21), str('limits@openssh.com')]));
    const limits = await packets.next();
    t.equal(limits[0], 201, 'an EXTENDED_REPLY');
    t.equal(limits.readUInt32BE(1), 21);
    t.same(
      [0, 1, 2, 3].map((i) => Number(limits.readBigUInt64BE(5 + 8 * i))),
      [256 * 1024, 255 * 1024, 255 * 1024, 1024],
    );
    // an unknown extended request
    send(200, Buffer.concat([u32(8), str('nonsense@example.com')]));
    const ext = await packets.next();
    t.equal(ext.readUInt32BE(5), STATUS_CODE.OP_UNSUPPORTED);
    // a CLOSE of an unknown handle, a REMOVE escaping the root
    send(4, Buffer.concat([u32(9), str('zz')]));
    t.equal((await packets.next()).readUInt32BE(5), STATUS_CODE.FAILURE);
    // an unknown packet type: ssh2 ends this SFTP channel (the connection and the server go on)
    const ended = new Promise<void>((resolve) => raw.once('close', () => resolve()));
    send(99, u32(10));
    await ended;
    t.pass('the SFTP channel of the unknown request type was closed');
    const sftp = await openSftp(c);
    const names = await new Promise<string[]>((resolve, reject) => sftp.readdir('/', (err, l) => (err ? reject(err) : resolve(l.map((e) => e.filename)))));
    t.same(names, [], 'a new SFTP channel on the same connection is answered');
    // posix-rename@openssh.com (ssh2's client uses it only when the server names it) replaces the target
    const put = (p: string, text: string) =>
      new Promise<void>((resolve, reject) => sftp.writeFile(p, text, (err: Error | null | undefined) => (err ? reject(err) : resolve())));
    await put('/a.txt', 'A');
    await put('/b.txt', 'B');
    const plain = await sftpError(new Promise<void>((resolve, reject) => sftp.rename('/a.txt', '/b.txt', (err) => (err ? reject(err) : resolve()))));
    t.equal(plain?.code, STATUS_CODE.FAILURE, 'RENAME onto an existing file is refused (SFTP v3)');
    await new Promise<void>((resolve, reject) => sftp.ext_openssh_rename('/a.txt', '/b.txt', (err) => (err ? reject(err) : resolve())));
    const text = await new Promise<string>((resolve, reject) => sftp.readFile('/b.txt', (err, b) => (err ? reject(err) : resolve(b.toString()))));
    t.equal(text, 'A', 'posix-rename replaced it');
  });

  await t.test('requests ssh2 leaves half-parsed: BAD_MESSAGE, or their channel ends, never the connection', async (t) => {
    await h.addUser('half', { password: 'half-pass-1' });
    const c = await connectSsh({ port: h.port, username: 'half', password: 'half-pass-1' });
    t.teardown(() => c.end());
    let connectionClosed = false;
    c.once('close', () => (connectionClosed = true));
    const raw = await new Promise<ssh2.ClientChannel>((resolve, reject) => c.subsys('sftp', (err, ch) => (err ? reject(err) : resolve(ch))));
    const packets = packetReader(raw);
    const u32 = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(n);
      return b;
    };
    const send = (type: number, body: Buffer) => raw.write(Buffer.concat([u32(body.length + 1), Buffer.from([type]), body]));
    send(1, u32(3));
    t.equal((await packets.next())[0], 2, 'VERSION');
    // posix-rename@openssh.com without its two paths: ssh2 hands over no payload
    const name = Buffer.from('posix-rename@openssh.com');
    send(200, Buffer.concat([u32(4), u32(name.length), name]));
    const status = await packets.next();
    t.equal(status.readUInt32BE(1), 4);
    t.equal(status.readUInt32BE(5), STATUS_CODE.BAD_MESSAGE, 'BAD_MESSAGE');
    // a READ whose handle runs past the packet while its offset and length still parse (from the bytes
    // the handle should have held): ssh2 1.17's parser throws, which used to end the whole connection
    const ended = new Promise<void>((resolve) => raw.once('close', () => resolve()));
    send(5, Buffer.concat([u32(5), u32(0xffff), Buffer.alloc(12)]));
    await ended;
    t.notOk(connectionClosed, 'the SFTP channel ended, the connection did not');
    const sftp = await openSftp(c);
    const names = await new Promise<string[]>((resolve, reject) => sftp.readdir('/', (err, l) => (err ? reject(err) : resolve(l.map((e) => e.filename)))));
    t.same(names, [], 'a new SFTP channel on the same connection is answered');
  });
});

t.test('stopping the node ends the SSH connections', async (t) => {
  const h = await startSftp(t);
  await h.addUser('sue', { password: 'sue-pass-1' });
  const c = await connectSsh({ port: h.port, username: 'sue', password: 'sue-pass-1' });
  await openSftp(c);
  const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
  await h.ta.app.stop();
  await closed;
  t.pass('the client was disconnected');
  const refused = await new Promise<string>((resolve) => {
    const s = net.connect(h.port, '127.0.0.1', () => (s.destroy(), resolve('open')));
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  t.equal(refused, 'ECONNREFUSED', 'the port is closed');
});
