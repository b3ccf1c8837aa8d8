import t from 'tap';
import { getEventListeners } from 'node:events';
import { addUser, fileApp, multipart, PASSWORD } from '../helpers/user-files.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ConnectionManager } from '../../src/vfs/connection-manager.js';
import { FileSessions } from '../../src/vfs/file-sessions.service.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

// A file session's signal follows the request and the connection (closed by an admin) without
// leaving anything on them once the request is over. It was AbortSignal.any of the two: with the
// listeners operations left on it, Node held each finished request (request, response, streams)
// until the connection closed, a leak found by a soak (bench/load.bench.mjs BENCH_SOAK_MINUTES).
const ta = await fileApp();
t.teardown(() => ta.close());
await addUser(ta, { username: 'soak' });
const token = await ta.userToken('soak', PASSWORD);

const seen: { controller: AbortController }[] = [];
const manager = ta.app.container.resolve(ConnectionManager);
const acquire = manager.acquire.bind(manager);
manager.acquire = ((...args: Parameters<ConnectionManager['acquire']>) => {
  const c = acquire(...args);
  seen.push(c);
  return c;
}) as ConnectionManager['acquire'];

const signals: WeakRef<AbortSignal>[] = [];
const open = FileSessions.prototype.open;
FileSessions.prototype.open = async function (this: FileSessions, ...args: Parameters<FileSessions['open']>) {
  const s = await open.apply(this, args);
  signals.push(new WeakRef(s.signal));
  return s;
};
t.teardown(() => void (FileSessions.prototype.open = open));

t.test('uploads, downloads, listings, multipart, zips and refusals leave no listener on the connection', async (t) => {
  const q = encodeURIComponent;
  for (let i = 0; i < 5; i++) {
    const up = await ta.inject('POST', `/api/v2/user/files/upload?path=${q(`/d/f${i}.bin`)}&mkdir_parents=true`, {
      token,
      payload: Buffer.alloc(200_000, i),
      headers: { 'content-type': 'application/octet-stream' },
    });
    t.equal(up.statusCode, 201, up.payload);
    t.equal((await ta.inject('GET', `/api/v2/user/files?path=${q(`/d/f${i}.bin`)}`, { token })).statusCode, 200);
    t.equal((await ta.inject('GET', `/api/v2/user/dirs?path=%2Fd`, { token })).statusCode, 200);
  }
  const m = multipart([
    { name: 'a.txt', data: 'a' },
    { name: 'b.txt', data: 'b' },
  ]);
  const mp = await ta.inject('POST', '/api/v2/user/files?path=%2Fd', { token, ...m });
  t.equal(mp.statusCode, 201, mp.payload);
  t.equal((await ta.inject('POST', '/api/v2/user/streamzip', { token, payload: ['/d'] })).statusCode, 200);
  t.equal((await ta.inject('GET', `/api/v2/user/files?path=${q('/missing')}`, { token })).statusCode, 404);
  t.ok(seen.length >= 17, `connections seen: ${seen.length}`);
  // a session closes once its answer is sent, which a loaded machine may run just after inject()
  // resolved: wait for that (bounded); a leaked listener stays until the connection closes
  const listening = () => seen.filter((c) => getEventListeners(c.controller.signal, 'abort').length > 0);
  for (let i = 0; i < 100 && listening().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(listening().length, 0, 'no abort listener left on any connection signal');
  t.ok(signals.length >= 17, `sessions seen: ${signals.length}`);
  // the sessions of the last requests may still be reachable from the test's last answers
  const finished = signals.slice(0, -3);
  for (let i = 0; i < 5 && finished.some((w) => w.deref()); i++) {
    await new Promise((r) => setTimeout(r, 50));
    gc();
  }
  const alive = finished.filter((w) => w.deref()).length;
  // before the fix 10 of these 15 stayed reachable; one or two may still be held for a moment by
  // hapi's or the test's last references, so the bound is small and constant, not zero
  t.ok(alive <= 2, `finished session signals (and what their listeners reach) are collected: ${alive} of ${finished.length} alive`);
});
