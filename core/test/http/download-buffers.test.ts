import t from 'tap';
import { writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { readBufferPool } from '../../src/vfs/read-buffers.js';
import { addUser, fileApp, listen, PASSWORD, updateUser } from '../helpers/user-files.js';

// Downloads read into buffers of the process's pool and reuse them once the socket took their bytes (vfs/read-buffers.ts).
const ta = await fileApp();
t.teardown(() => ta.close());
const home = await addUser(ta, { username: 'alice' });
const token = await ta.userToken('alice', PASSWORD);
const data = randomBytes(5 * 1024 * 1024 + 77);
writeFileSync(path.join(home, 'big.bin'), data);
const base = await listen(ta);

async function download(headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer }> {
  const r = await fetch(`${base}/api/v2/user/files?path=/big.bin`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
}

t.test('over a socket: the exact bytes, read into reused pool buffers, every buffer back in the pool', async (t) => {
  const before = { ...readBufferPool.stats };
  const r = await download();
  t.equal(r.status, 200);
  t.ok(r.body.equals(data), 'the bytes of the file');
  t.ok(readBufferPool.stats.reused > before.reused, `buffers were reused (${readBufferPool.stats.reused - before.reused})`);
  t.equal(readBufferPool.stats.unpooled, before.unpooled, 'no buffer outside the pool');
  const ranged = await download({ range: 'bytes=1000-3000000' });
  t.equal(ranged.status, 206);
  t.ok(ranged.body.equals(data.subarray(1000, 3000001)), 'a range');
  const snap = readBufferPool.snapshot();
  t.equal(snap.freeBytes, snap.bytes, 'no buffer still lent once the downloads are over');
  t.ok(snap.bytes <= readBufferPool.maxBytes);
});

t.test('concurrent downloads: each gets its bytes; the pool never passes its bound', async (t) => {
  const rs = await Promise.all(Array.from({ length: 8 }, () => download()));
  for (const r of rs) t.ok(r.status === 200 && r.body.equals(data));
  t.ok(readBufferPool.snapshot().bytes <= readBufferPool.maxBytes);
});

t.test('a client going away midway: the connection ends, the buffers come back', async (t) => {
  const ac = new AbortController();
  const r = await fetch(`${base}/api/v2/user/files?path=/big.bin`, { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
  const reader = r.body!.getReader();
  await reader.read();
  ac.abort();
  await reader.closed.catch(() => undefined);
  const after = await download();
  t.ok(after.body.equals(data), 'the next download is intact');
  const snap = readBufferPool.snapshot();
  t.equal(snap.freeBytes, snap.bytes, 'nothing lent any more');
});

t.test('injected requests (no socket) and throttled downloads are intact', async (t) => {
  const injected = await ta.inject('GET', '/api/v2/user/files?path=/big.bin', { token });
  t.equal(injected.statusCode, 200);
  t.ok(injected.rawPayload.equals(data), 'injected');
  await updateUser(ta, 'alice', { download_bandwidth: 100_000 });
  const before = readBufferPool.stats.reused;
  const throttled = await download();
  t.ok(throttled.body.equals(data), 'throttled (sliced chunks: no pool)');
  t.equal(readBufferPool.stats.reused, before, 'a throttled download reads its own buffers');
});
