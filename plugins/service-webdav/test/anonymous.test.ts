import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startWebdav } from './helpers.js';

// filters.is_anonymous over WebDAV: the account logs in and reads (PROPFIND, GET); every write
// (PUT, MKCOL, DELETE, MOVE, COPY) is refused with 403, whatever its permissions say.
t.test('an anonymous account reads over WebDAV, writes are refused with 403', async (t) => {
  const h = await startWebdav(t);
  const home = await h.addUser('guest', { filters: { is_anonymous: true } });
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'pub.txt'), 'public');
  const auth = { authorization: 'Basic ' + Buffer.from('guest:guest-pass-1').toString('base64') };
  const dav = (method: string, p: string, o: { body?: string; headers?: Record<string, string> } = {}) =>
    fetch(`${h.base}${p}`, { method, headers: { ...auth, ...o.headers }, ...(o.body !== undefined ? { body: o.body } : {}) });

  const get = await dav('GET', '/pub.txt');
  t.equal(get.status, 200);
  t.equal(await get.text(), 'public');
  const list = await dav('PROPFIND', '/', { headers: { depth: '1' } });
  t.equal(list.status, 207);
  t.match(await list.text(), /pub\.txt/);

  const put = await dav('PUT', '/new.txt', { body: 'x' });
  t.equal(put.status, 403, 'PUT');
  await put.body?.cancel();
  const over = await dav('PUT', '/pub.txt', { body: 'x' });
  t.equal(over.status, 403, 'PUT over an existing file');
  await over.body?.cancel();
  for (const [method, p, headers] of [
    ['MKCOL', '/dir', {}],
    ['DELETE', '/pub.txt', {}],
    ['MOVE', '/pub.txt', { destination: `${h.base}/moved.txt` }],
    ['COPY', '/pub.txt', { destination: `${h.base}/copied.txt` }],
  ] as const) {
    const r = await dav(method, p, { headers });
    t.equal(r.status, 403, method);
    await r.body?.cancel();
  }
  t.notOk(existsSync(path.join(home, 'new.txt')));
  t.notOk(existsSync(path.join(home, 'dir')));
  t.ok(existsSync(path.join(home, 'pub.txt')), 'nothing removed or moved');
  t.notOk(existsSync(path.join(home, 'copied.txt')));
});
