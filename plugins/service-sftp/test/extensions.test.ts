import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ssh2 from 'ssh2';
import { connectSsh, openSftp, rawSftp, sftpBatch, sftpStr, sshKey, startSftp, statusOf, u32, u64 } from './helpers.js';

// The extended requests: statvfs from the quotas, fsync, copy-data, check-file, expand-path,
// home-directory, hardlink refused; with ssh2's client, raw packets and OpenSSH's sftp.
const { STATUS_CODE } = ssh2.utils.sftp;
const SSH_FXP_EXTENDED = 200;
const SSH_FXP_EXTENDED_REPLY = 201;

type Sftp = ssh2.SFTPWrapper;
const call = <T>(fn: (cb: (err: Error | null | undefined, v: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: Error & { code?: number }) => err,
  );
const open = (s: Sftp, p: string, flags: ssh2.OpenMode) => call<Buffer>((cb) => s.open(p, flags, cb));
const write = (s: Sftp, h: Buffer, data: Buffer, pos: number) => call<void>((cb) => s.write(h, data, 0, data.length, pos, (err) => cb(err, undefined)));
const close = (s: Sftp, h: Buffer) => call<void>((cb) => s.close(h, (err) => cb(err, undefined)));
const read = (s: Sftp, h: Buffer, len: number, pos: number) =>
  call<Buffer>((cb) => {
    const buf = Buffer.alloc(len);
    s.read(h, buf, 0, len, pos, (err, n) => cb(err, buf.subarray(0, n)));
  });

interface Transfer {
  operation_type: string;
  path: string;
  size: number;
}

t.test('extensions', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const connect = async (username: string) => {
    const c = await connectSsh({ port: h.port, username, password: `${username}-pass-1` });
    t.teardown(() => c.end());
    return c;
  };
  const transfers = async (username: string): Promise<Transfer[]> => {
    const r = await h.ta.inject('GET', '/api/v2/connections', { token: h.token });
    const conns = JSON.parse(r.payload) as { username: string; active_transfers: Transfer[] }[];
    return conns.filter((x) => x.username === username).flatMap((x) => x.active_transfers);
  };

  await t.test('the VERSION names them; hardlink@openssh.com is not named and is refused', async (t) => {
    await h.addUser('vera');
    const raw = await rawSftp(await connect('vera'));
    for (const [name, version] of [
      ['posix-rename@openssh.com', '1'],
      ['limits@openssh.com', '1'],
      ['statvfs@openssh.com', '2'],
      ['fstatvfs@openssh.com', '2'],
      ['fsync@openssh.com', '1'],
      ['expand-path@openssh.com', '1'],
      ['home-directory', '1'],
      ['copy-data', '1'],
      ['check-file-name', '1'],
      ['check-file-handle', '1'],
    ]) {
      t.equal(raw.extensions.get(name!), version, `${name} ${version}`);
    }
    t.notOk(raw.extensions.has('hardlink@openssh.com'));
    raw.send(SSH_FXP_EXTENDED, Buffer.concat([u32(5), sftpStr('hardlink@openssh.com'), sftpStr('/a'), sftpStr('/b')]));
    const st = statusOf(await raw.next());
    t.same([st.id, st.code], [5, STATUS_CODE.OP_UNSUPPORTED]);
    t.match(st.message, /hard links are not supported/);
    raw.send(SSH_FXP_EXTENDED, Buffer.concat([u32(6), sftpStr('home-directory'), sftpStr('vera')]));
    const home = await raw.next();
    t.equal(home[0], 104, 'home-directory: a NAME');
    t.equal(home.toString('utf8', 13, 13 + home.readUInt32BE(9)), '/', 'the root of the user');
    raw.send(SSH_FXP_EXTENDED, Buffer.concat([u32(7), sftpStr('home-directory'), sftpStr('root')]));
    t.equal(statusOf(await raw.next()).code, STATUS_CODE.PERMISSION_DENIED, "another user's home is not told");
    raw.send(SSH_FXP_EXTENDED, Buffer.concat([u32(8), sftpStr('statvfs@openssh.com')]));
    t.equal(statusOf(await raw.next()).code, STATUS_CODE.BAD_MESSAGE, 'a request without its path: BAD_MESSAGE');
  });

  await t.test('truncated or bad requests of every extension: a status each, and the channel goes on', async (t) => {
    await h.addUser('trun');
    const raw = await rawSftp(await connect('trun'));
    const names = [...raw.extensions.keys(), 'hardlink@openssh.com'];
    const bodies = [
      Buffer.alloc(0),
      u32(1000),
      Buffer.concat([sftpStr('x'), u32(7)]),
      Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]),
      Buffer.concat([sftpStr('/'), u64(0)]),
    ];
    let id = 1000;
    for (const name of names) {
      for (const body of bodies) {
        raw.send(SSH_FXP_EXTENDED, Buffer.concat([u32(++id), sftpStr(name), body]));
        const p = await raw.next();
        t.equal(p.readUInt32BE(1), id, `${name}, ${body.length} bytes: answered`);
        if (p[0] === 101) t.not(statusOf(p).code, STATUS_CODE.OK, `${name}: not OK`);
      }
    }
    raw.send(16, Buffer.concat([u32(++id), sftpStr('.')]));
    const real = await raw.next();
    t.same([real[0], real.readUInt32BE(1)], [104, id], 'a REALPATH after them is answered');
  });

  await t.test('statvfs and fstatvfs: from the quota, and OpenSSH df', async (t) => {
    const home = await h.addUser('quin', { quota_size: 1024 * 1024, quota_files: 100, public_keys: [key.pub] });
    const c = await connect('quin');
    const sftp = await openSftp(c);
    await call<void>((cb) => sftp.writeFile('/ten.bin', randomBytes(10_000), (err: Error | null | undefined) => cb(err, undefined)));
    t.equal(readFileSync(path.join(home, 'ten.bin')).length, 10_000);
    const st = await call<Record<string, number>>((cb) => sftp.ext_openssh_statvfs('/', cb as never));
    t.match(st, { f_bsize: 4096, f_frsize: 4096, f_blocks: 256, f_bfree: Math.floor((1048576 - 10000) / 4096), f_files: 100, f_ffree: 99, f_favail: 99 });
    t.equal(st.f_bavail, st.f_bfree);
    const hnd = await open(sftp, '/ten.bin', 'r');
    const fst = await call<Record<string, number>>((cb) => sftp.ext_openssh_fstatvfs(hnd, cb as never));
    t.same(fst, st, 'fstatvfs: the same figures');
    await close(sftp, hnd);
    const missing = await failure(call((cb) => sftp.ext_openssh_statvfs('/nowhere', cb as never)));
    t.equal((missing as { code?: number } | null)?.code, STATUS_CODE.NO_SUCH_FILE, 'a missing path');

    await h.addUser('una');
    const free = await call<Record<string, number>>(async (cb) => (await openSftp(await connect('una'))).ext_openssh_statvfs('/', cb as never));
    t.ok(free.f_bavail * 4096 >= 2 ** 50, 'no quota: 1 PiB free');
    t.ok(free.f_ffree >= 2 ** 32 - 1);

    const df = await sftpBatch({ port: h.port, user: 'quin', key: key.file, dir, lines: ['df /'] });
    t.equal(df.code, 0, df.stderr);
    t.match(df.stdout, /Size\s+Used\s+Avail/, "OpenSSH's df");
    t.match(df.stdout, /\n\s*1024\s+12\s+1012\s/, '1024 KiB in all, 12 used (rounded to blocks), 1012 free');
  });

  await t.test('fsync: the bytes written so far are handed to the upload, shown as its progress', async (t) => {
    const home = await h.addUser('fay');
    const sftp = await openSftp(await connect('fay'));
    const data = randomBytes(700_000);
    const hnd = await open(sftp, '/f.bin', 'w');
    for (let p = 0; p < 600_000; p += 30_000) await write(sftp, hnd, data.subarray(p, p + 30_000), p);
    await call<void>((cb) => sftp.ext_openssh_fsync(hnd, (err) => cb(err, undefined)));
    const up = await transfers('fay');
    t.same(
      up.map(({ operation_type, path, size }) => ({ operation_type, path, size })),
      [{ operation_type: 'upload', path: '/f.bin', size: 600_000 }],
      'the upload in progress, with no more, no less than written',
    );
    await write(sftp, hnd, data.subarray(600_000), 600_000);
    await close(sftp, hnd);
    t.same(readFileSync(path.join(home, 'f.bin')), data);
    t.same(await transfers('fay'), [], 'over');

    const r = await open(sftp, '/f.bin', 'r');
    t.same(await read(sftp, r, 65_536, 0), data.subarray(0, 65_536));
    const down = await transfers('fay');
    t.equal(down.length, 1, 'a download in progress');
    t.equal(down[0]?.operation_type, 'download');
    t.ok((down[0]?.size ?? 0) >= 65_536, `its bytes so far (${down[0]?.size})`);
    await call<void>((cb) => sftp.ext_openssh_fsync(r, (err) => cb(err, undefined)));
    t.pass('fsync of a file opened for reading: OK');
    await close(sftp, r);
  });

  await t.test('copy-data: whole files by the storage; anything else OP_UNSUPPORTED', async (t) => {
    const home = await h.addUser('cody', { public_keys: [key.pub] });
    const data = randomBytes(200_000);
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, 'src.bin'), data);
    const sftp = await openSftp(await connect('cody'));
    const src = await open(sftp, '/src.bin', 'r');
    const dst = await open(sftp, '/dst.bin', 'w');
    await call<void>((cb) => sftp.ext_copy_data(src, 0, 0, dst, 0, (err) => cb(err, undefined)));
    const again = await failure(write(sftp, dst, Buffer.from('x'), 0));
    t.equal((again as { code?: number } | null)?.code, STATUS_CODE.OP_UNSUPPORTED, 'no WRITE after the copy');
    await close(sftp, dst);
    t.same(readFileSync(path.join(home, 'dst.bin')), data, 'copied');

    const part = await open(sftp, '/part.bin', 'w');
    const partial = await failure(call<void>((cb) => sftp.ext_copy_data(src, 10, 100, part, 0, (err) => cb(err, undefined))));
    t.equal((partial as { code?: number } | null)?.code, STATUS_CODE.OP_UNSUPPORTED, 'a range');
    t.match((partial as Error).message, /whole files only/);
    await write(sftp, part, Buffer.from('abc'), 0);
    const written = await failure(call<void>((cb) => sftp.ext_copy_data(src, 0, 0, part, 0, (err) => cb(err, undefined))));
    t.equal((written as { code?: number } | null)?.code, STATUS_CODE.OP_UNSUPPORTED, 'into a file already written to');
    await close(sftp, part);
    t.equal(readFileSync(path.join(home, 'part.bin'), 'utf8'), 'abc', 'the refused copies left the upload alone');
    await close(sftp, src);

    const cp = await sftpBatch({ port: h.port, user: 'cody', key: key.file, dir, lines: ['cp /src.bin /by-cp.bin'] });
    t.equal(cp.code, 0, `OpenSSH's cp uses copy-data: ${cp.stderr}`);
    t.same(readFileSync(path.join(home, 'by-cp.bin')), data);
  });

  await t.test('check-file-name and check-file-handle: md5, sha1, sha256, sha512, whole or in blocks', async (t) => {
    const home = await h.addUser('hal');
    const data = randomBytes(1000);
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, 'h.bin'), data);
    const c = await connect('hal');
    const raw = await rawSftp(c);
    let id = 100;
    const ask = async (name: string, target: Buffer | string, algos: string, start: number, length: number, block: number) => {
      const rid = ++id;
      raw.send(SSH_FXP_EXTENDED, Buffer.concat([u32(rid), sftpStr(name), sftpStr(target), sftpStr(algos), u64(start), u64(length), u32(block)]));
      const p = await raw.next();
      t.equal(p.readUInt32BE(1), rid, 'the answer to the request');
      if (p[0] !== SSH_FXP_EXTENDED_REPLY) return statusOf(p);
      let q = 5;
      const strings: string[] = [];
      for (let i = 0; i < 2; i++) {
        const l = p.readUInt32BE(q);
        strings.push(p.toString('utf8', q + 4, q + 4 + l));
        q += 4 + l;
      }
      return { reply: strings[0], algorithm: strings[1], hashes: p.subarray(q) };
    };
    const digest = (algo: string, b: Buffer) => createHash(algo).update(b).digest();
    for (const algo of ['md5', 'sha1', 'sha256', 'sha512']) {
      t.same(await ask('check-file-name', '/h.bin', algo, 0, 0, 0), { reply: 'check-file', algorithm: algo, hashes: digest(algo, data) }, algo);
    }
    t.same(
      await ask('check-file-name', '/h.bin', 'crc32,sha256,md5', 100, 0, 256),
      {
        reply: 'check-file',
        algorithm: 'sha256',
        hashes: Buffer.concat([0, 1, 2, 3].map((i) => digest('sha256', data.subarray(100 + i * 256, Math.min(1000, 100 + (i + 1) * 256))))),
      },
      'the first algorithm known; blocks of 256 from offset 100 (the last one short)',
    );
    t.same(((await ask('check-file-name', '/h.bin', 'md5', 10, 20, 0)) as { hashes: Buffer }).hashes, digest('md5', data.subarray(10, 30)), 'a range');
    // 1024 sha512 hashes: a 64 KiB answer, more than one SSH packet (32 KiB for ssh2's client)
    const big = randomBytes(256 * 1024);
    writeFileSync(path.join(home, 'big.bin'), big);
    const blocks = Buffer.concat(Array.from({ length: 1024 }, (_, i) => digest('sha512', big.subarray(i * 256, (i + 1) * 256))));
    t.same(((await ask('check-file-name', '/big.bin', 'sha512', 0, 0, 256)) as { hashes: Buffer }).hashes, blocks, 'an answer over several packets');
    t.equal(((await ask('check-file-name', '/h.bin', 'crc32,whirlpool', 0, 0, 0)) as { code: number }).code, STATUS_CODE.OP_UNSUPPORTED, 'no known algorithm');
    t.equal(((await ask('check-file-name', '/h.bin', 'md5', 0, 0, 100)) as { code: number }).code, STATUS_CODE.FAILURE, 'a block size under 256');
    t.equal(((await ask('check-file-name', '/none', 'md5', 0, 0, 0)) as { code: number }).code, STATUS_CODE.NO_SUCH_FILE, 'a missing file');

    // a handle of the raw channel: OPEN (3) with READ
    raw.send(3, Buffer.concat([u32(200), sftpStr('/h.bin'), u32(1), u32(0)]));
    const opened = await raw.next();
    t.equal(opened[0], 102, 'a HANDLE');
    const handle = opened.subarray(9, 9 + opened.readUInt32BE(5));
    t.same(((await ask('check-file-handle', handle, 'sha1', 0, 0, 0)) as { hashes: Buffer }).hashes, digest('sha1', data), 'by handle');
    t.equal(((await ask('check-file-handle', Buffer.from('nope'), 'sha1', 0, 0, 0)) as { code: number }).code, STATUS_CODE.FAILURE, 'an unknown handle');
  });

  await t.test('expand-path@openssh.com: ~ is the root of the user', async (t) => {
    await h.addUser('exa');
    // raw: ssh2 1.17's ext_openssh_expandPath writes the path's length 3 bytes too early (a malformed request)
    const raw = await rawSftp(await connect('exa'));
    let id = 0;
    const expand = async (p: string) => {
      raw.send(SSH_FXP_EXTENDED, Buffer.concat([u32(++id), sftpStr('expand-path@openssh.com'), sftpStr(p)]));
      const a = await raw.next();
      if (a[0] !== 104) return statusOf(a);
      t.equal(a.readUInt32BE(5), 1, 'one name');
      return a.toString('utf8', 13, 13 + a.readUInt32BE(9));
    };
    t.equal(await expand('~'), '/');
    t.equal(await expand('~/a/../b'), '/b');
    t.equal(await expand('~exa/c'), '/c');
    t.equal(await expand('d/e'), '/d/e');
    t.match(await expand('~root/x'), { code: STATUS_CODE.NO_SUCH_FILE }, "another user's ~");
  });
});
