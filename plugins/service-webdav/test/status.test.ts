import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { curl, startWebdav } from './helpers.js';

t.test('/status shows the webdav section truthfully', async (t) => {
  const h = await startWebdav(t, { webdav: { prefix: '/dav' } });
  const s = await h.status();
  t.equal(s.is_active, true);
  t.equal(s.bindings?.length, 1);
  t.equal(s.bindings?.[0]?.address, '127.0.0.1');
  t.ok((s.bindings?.[0]?.port ?? 0) > 0, 'the port bound, not 0');
  t.equal(s.bindings?.[0]?.prefix, '/dav');
  t.equal((await fetch(`http://127.0.0.1:${h.port}/dav/`, { method: 'OPTIONS' })).status, 401, 'and it answers there');
});

t.test('PROPFIND depth 1 of a large directory: every member, one response each', async (t) => {
  const h = await startWebdav(t);
  const home = await h.addUser('u1');
  const N = 3000;
  mkdirSync(path.join(home, 'big'), { recursive: true });
  for (let i = 0; i < N; i++) writeFileSync(path.join(home, 'big', `f-${String(i).padStart(5, '0')}.txt`), String(i));
  const dir = t.testdir({});
  const r = await curl(h, dir, '/big/', [
    '-X',
    'PROPFIND',
    '-H',
    'Depth: 1',
    '--data',
    '<D:propfind xmlns:D="DAV:"><D:prop><D:getcontentlength/><D:resourcetype/></D:prop></D:propfind>',
  ]);
  t.equal(r.status, 207);
  t.equal(r.headers['transfer-encoding'], 'chunked', 'streamed (no Content-Length)');
  t.equal(r.body.split('<D:response>').length - 1, N + 1, 'the collection and every member');
  t.match(r.body, '<D:href>/big/f-02999.txt</D:href><D:propstat><D:prop><D:getcontentlength>4</D:getcontentlength>');
  t.ok(r.body.trimEnd().endsWith('</D:multistatus>'));
});
