import t from 'tap';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ssh2, { type OpenMode } from 'ssh2';
import type { Test } from 'tap';
import { connectSsh, openSftp, startSftp } from './helpers.js';

// WRITEs are acknowledged once taken and gathered into large writes of the
// file session (src/write-handle.ts): a failure of the backend still reaches
// the client, on the next WRITE or on the CLOSE, and nothing partial is left;
// WRITEs out of order within the window are put in their place.
const { STATUS_CODE } = ssh2.utils.sftp;
const KIB = 1024;

type Outcome = { ok: true } | { ok: false; code?: number; message: string };

/** An SFTP client of a user on the harness; every call resolves to its outcome (never rejects). */
async function client(t: Test, port: number, username: string) {
  const c = await connectSsh({ port, username, password: `${username}-pass-1` });
  t.teardown(() => c.end());
  const sftp = await openSftp(c);
  const outcome = (run: (cb: (err?: Error | null) => void) => void) =>
    new Promise<Outcome>((resolve) =>
      run((err) => resolve(err ? { ok: false, code: (err as Error & { code?: number }).code, message: err.message } : { ok: true })),
    );
  return {
    open: (p: string, flags: OpenMode) => new Promise<Buffer>((resolve, reject) => sftp.open(p, flags, (e, h) => (e ? reject(e) : resolve(h)))),
    write: (h: Buffer, pos: number, data: Buffer) => outcome((cb) => sftp.write(h, data, 0, data.length, pos, cb)),
    close: (h: Buffer) => outcome((cb) => sftp.close(h, cb)),
  };
}

const visible = (home: string) => (existsSync(home) ? readdirSync(home).filter((n) => !n.startsWith('.')) : []);

t.test('gathered writes', async (t) => {
  const h = await startSftp(t);

  await t.test(
    'a quota exceeded after the WRITE that crossed it was acknowledged: a later WRITE (and every one after it) or at the latest the CLOSE fails; nothing is left',
    async (t) => {
      const home = await h.addUser('gina', { quota_size: 100 * KIB });
      const c = await client(t, h.port, 'gina');
      const w = await c.open('/q.bin', 'w');
      const chunk = randomBytes(16 * KIB);
      const results: Outcome[] = [];
      // one after the other: each WRITE is answered before the next is sent
      for (let i = 0; i < 40; i++) results.push(await c.write(w, i * chunk.length, chunk));
      const crossing = Math.ceil((100 * KIB + 1) / chunk.length) - 1; // the 7th WRITE (index 6) goes past 100 KiB
      t.ok(
        results.slice(0, crossing + 1).every((r) => r.ok),
        'the WRITEs up to the one crossing the quota are acknowledged (gathered, not yet written)',
      );
      // the upload settles its refusal (temporary file, counters) before the failure is known here: on a
      // loaded machine that can take longer than the WRITEs left, and then CLOSE is the first to answer it
      const first = results.findIndex((r) => !r.ok);
      if (first !== -1) {
        t.ok(first > crossing, `a later WRITE reports the failure (WRITE ${first + 1})`);
        t.match((results[first] as Extract<Outcome, { ok: false }>).message, /quota/i, 'with the quota message');
        t.ok(
          results.slice(first).every((r) => !r.ok),
          'every WRITE after it fails too',
        );
      }
      const closed = await c.close(w);
      t.equal(closed.ok, false, 'CLOSE reports it');
      t.match((closed as Extract<Outcome, { ok: false }>).message, /quota/i);
      t.same(visible(home), [], 'nothing partial is visible');
    },
  );

  await t.test('a failure found only when the gathered bytes are written reaches the client on CLOSE', async (t) => {
    const home = await h.addUser('cleo', { quota_size: 64 * KIB });
    const c = await client(t, h.port, 'cleo');
    const w = await c.open('/c.bin', 'w');
    const chunk = randomBytes(16 * KIB);
    // sent together: gathered (less than a gathered write's size), so written only at CLOSE
    const writes = await Promise.all(Array.from({ length: 5 }, (_, i) => c.write(w, i * chunk.length, chunk)));
    t.ok(
      writes.every((r) => r.ok || /quota/i.test(r.message)),
      'the WRITEs are acknowledged or answer the quota',
    );
    const closed = await c.close(w);
    t.equal(closed.ok, false, 'CLOSE fails');
    t.match((closed as Extract<Outcome, { ok: false }>).message, /quota/i, 'with the quota message');
    t.same(visible(home), [], 'nothing partial is visible');
  });

  await t.test('WRITEs out of order within the window land byte for byte', async (t) => {
    const home = await h.addUser('olga');
    const c = await client(t, h.port, 'olga');
    const data = randomBytes(3 * 1024 * KIB + 777);
    const size = 40 * KIB + 3;
    const pieces: [number, Buffer][] = [];
    for (let p = 0; p < data.length; p += size) pieces.push([p, data.subarray(p, p + size)]);
    // pairs swapped, then every third piece moved two places back: offsets interleaved
    for (let i = 0; i + 1 < pieces.length; i += 2) [pieces[i], pieces[i + 1]] = [pieces[i + 1]!, pieces[i]!];
    for (let i = 2; i < pieces.length; i += 3) [pieces[i - 2], pieces[i]] = [pieces[i]!, pieces[i - 2]!];
    t.not(pieces[0]![0], 0, 'the first WRITE is not at offset 0');
    const w = await c.open('/o.bin', 'w');
    const writes = await Promise.all(pieces.map(([p, b]) => c.write(w, p, b)));
    t.ok(
      writes.every((r) => r.ok),
      'every WRITE is acknowledged',
    );
    t.same(await c.close(w), { ok: true }, 'CLOSE succeeds');
    t.ok(readFileSync(path.join(home, 'o.bin')).equals(data), 'the file is the bytes written, in their places');
  });

  await t.test('a gap never filled: CLOSE fails and nothing is left; a WRITE beyond the window is refused at once', async (t) => {
    const home = await h.addUser('gus');
    const c = await client(t, h.port, 'gus');
    const w = await c.open('/g.bin', 'w');
    t.same(await c.write(w, 0, Buffer.from('abc')), { ok: true });
    t.same(await c.write(w, 1000, Buffer.from('def')), { ok: true }, 'a WRITE after a gap is held until the gap is filled');
    const closed = await c.close(w);
    t.equal(closed.ok, false);
    t.equal((closed as Extract<Outcome, { ok: false }>).code, STATUS_CODE.OP_UNSUPPORTED);
    t.match((closed as Extract<Outcome, { ok: false }>).message, /only sequential writes/);
    t.same(visible(home), []);

    const far = await c.open('/far.bin', 'w');
    t.same(await c.write(far, 0, Buffer.from('abc')), { ok: true });
    const refused = await c.write(far, 64 * 1024 * KIB, Buffer.from('def'));
    t.equal(refused.ok, false, 'a WRITE 64 MiB ahead');
    t.equal((refused as Extract<Outcome, { ok: false }>).code, STATUS_CODE.OP_UNSUPPORTED);
    t.equal((await c.close(far)).ok, false, 'CLOSE reports it too');
    t.same(visible(home), [], 'nothing partial');
  });

  await t.test('an existing file written at offsets (no TRUNC): a WRITE before the bytes written goes on there', async (t) => {
    const home = await h.addUser('otto');
    mkdirSync(home, { recursive: true });
    const original = randomBytes(600 * KIB);
    writeFileSync(path.join(home, 'e.bin'), original);
    const c = await client(t, h.port, 'otto');
    const w = await c.open('/e.bin', 'r+');
    const a = randomBytes(300 * KIB);
    const b = randomBytes(1000);
    const tail = randomBytes(100 * KIB);
    t.same(await c.write(w, 200 * KIB, a), { ok: true });
    t.same(await c.write(w, 100, b), { ok: true }, 'back before the bytes written');
    t.same(await c.write(w, 600 * KIB, tail), { ok: true }, 'then on at the end of the file');
    t.same(await c.close(w), { ok: true });
    const expected = Buffer.concat([original, tail]);
    a.copy(expected, 200 * KIB);
    b.copy(expected, 100);
    t.ok(readFileSync(path.join(home, 'e.bin')).equals(expected), 'every WRITE in its place, the rest kept');
  });

  await t.test('a new upload (CREAT|TRUNC) onto a directory is refused; the directory stays', async (t) => {
    const home = await h.addUser('dora');
    mkdirSync(path.join(home, 'sub'), { recursive: true });
    writeFileSync(path.join(home, 'sub', 'keep.txt'), 'kept');
    const c = await client(t, h.port, 'dora');
    const refused = await c.open('/sub', 'w').then(
      () => null,
      (err: Error) => err,
    );
    t.match(refused?.message, /is a directory/);
    t.equal(readFileSync(path.join(home, 'sub', 'keep.txt'), 'utf8'), 'kept');
  });

  await t.test('64 WRITEs of 255 KiB sent at once (the client held by the SSH window meanwhile) land byte for byte', async (t) => {
    const home = await h.addUser('fred');
    const c = await client(t, h.port, 'fred');
    const piece = 255 * KIB;
    const data = randomBytes(64 * piece);
    const w = await c.open('/many.bin', 'w');
    const writes = await Promise.all(Array.from({ length: 64 }, (_, i) => c.write(w, i * piece, data.subarray(i * piece, (i + 1) * piece))));
    t.ok(
      writes.every((r) => r.ok),
      'every WRITE is acknowledged',
    );
    t.same(await c.close(w), { ok: true });
    t.ok(readFileSync(path.join(home, 'many.bin')).equals(data), 'the file is the bytes written');
  });

  // src/upload-dirs.ts: a new file in a directory the session uploaded to already is answered at OPEN
  // before the storage is asked (SessionWriteOptions.early)
  await t.test('the first new file of a directory waits for its open: a missing directory is refused at OPEN', async (t) => {
    await h.addUser('ivan');
    const c = await client(t, h.port, 'ivan');
    const refused = await c.open('/nodir/a.bin', 'w').then(
      () => null,
      (err: Error & { code?: number }) => err,
    );
    t.equal(refused?.code, STATUS_CODE.NO_SUCH_FILE);
  });

  await t.test(
    'the next new files of that directory are answered at once: a refusal of the storage answers the CLOSE, leaves nothing, and the directory is forgotten',
    async (t) => {
      const home = await h.addUser('jade');
      mkdirSync(path.join(home, 'd'), { recursive: true });
      const c = await client(t, h.port, 'jade');
      const first = await c.open('/d/a.bin', 'w');
      t.same(await c.write(first, 0, Buffer.from('first')), { ok: true });
      t.same(await c.close(first), { ok: true });
      // the storage changes behind the session's back
      rmSync(path.join(home, 'd'), { recursive: true });
      const second = await c.open('/d/b.bin', 'w');
      t.ok(second, 'OPEN answered before the storage was asked');
      await c.write(second, 0, Buffer.from('second'));
      const closed = await c.close(second);
      t.equal(closed.ok, false, 'CLOSE reports the refusal');
      t.equal((closed as Extract<Outcome, { ok: false }>).code, STATUS_CODE.NO_SUCH_FILE);
      t.same(visible(home), [], 'nothing is left');
      const third = await c.open('/d/c.bin', 'w').then(
        () => null,
        (err: Error & { code?: number }) => err,
      );
      t.equal(third?.code, STATUS_CODE.NO_SUCH_FILE, 'the next OPEN there waits for its open again, and is refused');
    },
  );

  await t.test('without the overwrite permission every OPEN waits: overwriting is refused at OPEN', async (t) => {
    const home = await h.addUser('kurt', { permissions: { '/': ['list', 'download', 'upload'] } });
    const c = await client(t, h.port, 'kurt');
    const w = await c.open('/k.bin', 'w');
    t.same(await c.write(w, 0, Buffer.from('kept')), { ok: true });
    t.same(await c.close(w), { ok: true });
    const refused = await c.open('/k.bin', 'w').then(
      () => null,
      (err: Error & { code?: number }) => err,
    );
    t.equal(refused?.code, STATUS_CODE.PERMISSION_DENIED);
    t.equal(readFileSync(path.join(home, 'k.bin'), 'utf8'), 'kept');
  });
});
