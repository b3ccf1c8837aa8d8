import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createTestApp } from '@ferry/core/testing';
import { processTag } from '@ferry/core';

// A multipart upload cut by the client at many points of its body (inside a
// part header, at the start of a part's data, mid-part, on a boundary,
// between two parts, in the last bytes), on an fs-local and an fs-crypt user:
// once the server says the session is over (no connection listed), the temp
// area is empty and nothing of the request was published (a multipart
// request is all or nothing). Then the window of the leftover seen on
// fs-crypt: part data arriving in pieces that complete no 64 KiB record
// while the upload's writer is idle, then more, then the cut.

const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-crypt' }] });
t.teardown(() => ta.close());
await ta.server.start();
const base = ta.server.info.uri;
const admin = await ta.adminToken();
const PASSWORD = 'cut-user-password-1';
const tmpArea = path.join(ta.dataDir, 'uploads-tmp', processTag());
/** The entries of this process's temp folder (created by its first upload). */
const tmpEntries = (): string[] => (existsSync(tmpArea) ? readdirSync(tmpArea) : []);

async function user(username: string, filesystem?: unknown): Promise<{ home: string; token: string }> {
  const home = path.join(ta.dataDir, 'homes', username);
  mkdirSync(home, { recursive: true });
  const r = await ta.inject('POST', '/api/v2/users', {
    token: admin,
    payload: { username, password: PASSWORD, home_dir: home, permissions: { '/': ['*'] }, ...(filesystem ? { filesystem } : {}) },
  });
  if (r.statusCode !== 201) throw new Error(`user ${username}: ${r.payload}`);
  return { home, token: await ta.userToken(username, PASSWORD) };
}

const users = {
  'fs-local': await user('cut-local'),
  'fs-crypt': await user('cut-crypt', { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'cut-passphrase-1' } } }),
};

async function connections(): Promise<unknown[]> {
  const r = await ta.inject('GET', '/api/v2/connections', { token: admin });
  if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${r.payload}`);
  return JSON.parse(r.payload) as unknown[];
}

/** Waits (polling, no time limit of its own: tap's timeout ends a hang) until the server lists no connection. */
async function sessionsOver(): Promise<void> {
  while ((await connections()).length > 0) await sleep(10);
}

const BOUNDARY = '----ferry-cut-points';
/** Three parts: small, one of several 64 KiB records (fs-crypt), small. */
const PARTS = [
  { name: 'a.bin', size: 1000 },
  { name: 'b.bin', size: 300 * 1024 },
  { name: 'c.bin', size: 10 },
];

/** The body, and for each part the offset where its data ends (the part is complete once the next boundary arrived). */
function body() {
  const chunks: Buffer[] = [];
  const ends: number[] = [];
  let at = 0;
  const push = (b: Buffer) => {
    chunks.push(b);
    at += b.length;
  };
  PARTS.forEach((p, i) => {
    push(
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="filenames"; filename="${p.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    );
    push(Buffer.alloc(p.size, 0x41 + i));
    ends.push(at);
    push(Buffer.from('\r\n'));
  });
  push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return { body: Buffer.concat(chunks), ends };
}
const { body: full, ends } = body();

/** Offsets to cut at: around every part's header and data, and spread over the body. */
function cutPoints(): number[] {
  const pts = new Set<number>([1, 20, 60]);
  let at = 0;
  for (let i = 0; i < PARTS.length; i++) {
    const dataStart = full.indexOf('\r\n\r\n', at) + 4;
    for (const d of [-30, -1, 0, 1, 100]) pts.add(dataStart + d);
    for (const d of [-1, 0, 1, 2, 10, 40]) pts.add(ends[i]! + d);
    at = ends[i]!;
  }
  for (let k = 1; k < 16; k++) pts.add(Math.floor((full.length * k) / 16));
  pts.add(full.length - 1);
  return [...pts].filter((p) => p > 0 && p < full.length).sort((a, b) => a - b);
}

/** Sends the first `n` bytes of the body (in chunks, waiting for each to be written), then destroys the socket. */
async function cutAt(token: string, dir: string, n: number, settle: boolean): Promise<{ answered?: number }> {
  const req = http.request(`${base}/api/v2/user/files?path=${encodeURIComponent(dir)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': full.length },
  });
  const out: { answered?: number } = {};
  req.on('error', () => undefined);
  req.on('response', (res) => {
    out.answered = res.statusCode;
    res.resume();
  });
  for (let at = 0; at < n; at += 64 * 1024) {
    const piece = full.subarray(at, Math.min(n, at + 64 * 1024));
    await new Promise<void>((resolve) => req.write(piece, () => resolve()));
  }
  // either cut at once, or once the server handles the request (its session is listed)
  if (settle) while ((await connections()).length === 0) await sleep(5);
  req.destroy();
  return out;
}

for (const [backend, u] of Object.entries(users)) {
  t.test(`${backend}: a multipart upload cut at any point leaves no temporary data and no partial file`, async (t) => {
    let round = 0;
    for (const n of cutPoints()) {
      for (const settle of [false, true]) {
        const dir = `/cut-${round++}`;
        mkdirSync(path.join(u.home, dir), { recursive: true });
        const r = await cutAt(u.token, dir, n, settle);
        await sessionsOver();
        t.same(tmpEntries(), [], `cut at byte ${n}${settle ? ' (after a pause)' : ''}: nothing in the temp area once the session is over`);
        // a multipart request is all or nothing: parts complete before the cut are not published either
        t.same(readdirSync(path.join(u.home, dir)), [], `cut at byte ${n}: nothing published`);
        t.not(r.answered, 201, `cut at byte ${n}: no success answer`);
      }
    }
    t.notOk(existsSync(path.join(u.home, 'c.bin')));
  });
}

/** The file transfer of the one connection listed, once it has received `bytes` (polls; tap's timeout ends a hang). */
async function received(bytes: number): Promise<void> {
  for (;;) {
    const list = (await connections()) as { active_transfers: { size: number }[] }[];
    const size = list[0]?.active_transfers[0]?.size ?? 0;
    if (size >= bytes) return;
    await sleep(5);
  }
}

/** The first piece of data: more than a small upload holds back before its temporary file exists (fs-local's SMALL_UPLOAD_MAX). */
const FIRST = 64 * 1024 + 100;

for (const [backend, u] of Object.entries(users)) {
  t.test(`${backend}: part data in small pieces while the writer is idle, then a cut`, async (t) => {
    for (const complete of [false, true]) {
      const name = `pieces-${complete ? 'whole' : 'cut'}.bin`;
      const head = Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="filenames"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
      const rest = Buffer.alloc(3 * 1024 * 1024, 0x5a);
      const req = http.request(`${base}/api/v2/user/files?path=/`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${u.token}`,
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          'content-length': head.length + FIRST + 100 + rest.length + tail.length,
        },
      });
      req.on('error', () => undefined);
      const answer = new Promise<number | undefined>((resolve) => {
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode);
        });
        req.on('close', () => resolve(undefined));
      });
      const send = (b: Buffer) => new Promise<void>((resolve) => req.write(b, () => resolve()));
      await send(head);
      // a first piece, past what a small upload holds back: the temporary file starts (fs-crypt writes its header), the writer goes idle
      await send(Buffer.alloc(FIRST, 0x31));
      await received(FIRST);
      while (tmpEntries().length === 0) await sleep(5);
      await sleep(20);
      // a piece that completes no record, while the writer is idle
      await send(Buffer.alloc(100, 0x32));
      await received(FIRST + 100);
      // then more than fs-crypt's 1 MiB write buffer: it must all be taken
      req.write(rest);
      await received(FIRST + 100 + rest.length);
      if (complete) {
        req.end(tail);
        t.equal(await answer, 201, 'the upload completes');
        const back = await fetch(`${base}/api/v2/user/files?path=${encodeURIComponent('/' + name)}`, { headers: { authorization: `Bearer ${u.token}` } });
        const body = Buffer.from(await back.arrayBuffer());
        t.equal(body.length, FIRST + 100 + rest.length, 'with every byte');
        t.ok(body.subarray(FIRST + 100).equals(rest) && body.subarray(0, FIRST).equals(Buffer.alloc(FIRST, 0x31)), 'the bytes sent');
      } else {
        req.destroy();
        await sessionsOver();
        t.same(tmpEntries(), [], 'cut: nothing in the temp area once the session is over');
        t.notOk(existsSync(path.join(u.home, name)), 'cut: nothing published');
        t.equal(await answer, undefined, 'cut: no answer');
      }
      await sessionsOver();
    }
  });
}
