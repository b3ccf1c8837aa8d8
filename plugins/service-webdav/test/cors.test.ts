import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { curl, startWebdav } from './helpers.js';

// CORS for browser clients, checked with curl: preflights of listed origins answered without
// credentials, the CORS headers on real answers, none for an origin not listed nor without config.

const dir = mkdtempSync(path.join(os.tmpdir(), 'webdav-cors-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const APP = 'https://app.example.com';
const preflight = (origin: string, method = 'PROPFIND') => [
  '-X',
  'OPTIONS',
  '-H',
  `Origin: ${origin}`,
  '-H',
  `Access-Control-Request-Method: ${method}`,
  '-H',
  'Access-Control-Request-Headers: depth, authorization, content-type',
];

t.test('listed origins', async (t) => {
  const h = await startWebdav(t, { webdav: { cors: { allowed_origins: [APP, 'http://localhost:3000'], allow_credentials: true, max_age: 600 } } });
  await h.addUser('u1');

  const pre = await curl(h, dir, '/f.txt', preflight(APP), null);
  t.equal(pre.status, 204, 'preflight answered without credentials');
  t.equal(pre.headers['access-control-allow-origin'], APP);
  t.equal(pre.headers['access-control-allow-credentials'], 'true');
  t.equal(pre.headers['access-control-max-age'], '600');
  for (const m of ['PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'PUT', 'DELETE']) {
    t.match(pre.headers['access-control-allow-methods'], m, `allows ${m}`);
  }
  for (const hd of ['Depth', 'Destination', 'Overwrite', 'If', 'Lock-Token', 'Timeout', 'Content-Type', 'Authorization']) {
    t.ok(pre.headers['access-control-allow-headers']?.split(/,\s*/).includes(hd), `allows the ${hd} header`);
  }
  t.match(pre.headers.vary, /Origin/);

  const put = await curl(h, dir, '/f.txt', ['-X', 'PUT', '--data-binary', 'x', '-H', `Origin: ${APP}`]);
  t.equal(put.status, 201);
  t.equal(put.headers['access-control-allow-origin'], APP, 'a real request of a listed origin carries the header');
  t.match(put.headers['access-control-expose-headers'], /ETag/);
  const refused = await curl(h, dir, '/f.txt', ['-H', `Origin: ${APP}`], null);
  t.equal(refused.status, 401, 'a request without credentials still needs them');
  t.equal(refused.headers['access-control-allow-origin'], APP, 'and the page may read the 401');

  const other = await curl(h, dir, '/f.txt', preflight('https://evil.example.com'), null);
  t.not(other.status, 204, 'a preflight of an origin not listed is not answered as one');
  t.notOk(other.headers['access-control-allow-origin'], 'no CORS header for an origin not listed');
  t.notOk(other.headers['access-control-allow-methods']);
  const otherGet = await curl(h, dir, '/f.txt', ['-H', 'Origin: https://evil.example.com']);
  t.equal(otherGet.status, 200, 'its requests are served (curl is no browser)');
  t.notOk(otherGet.headers['access-control-allow-origin'], 'without CORS headers');
  const plain = await curl(h, dir, '/f.txt', preflight(`${APP}.evil.com`), null);
  t.notOk(plain.headers['access-control-allow-origin'], 'origins match exactly, not by prefix');
});

t.test('allow_credentials and max_age off by default; no CORS without allowed_origins', async (t) => {
  const h = await startWebdav(t, { webdav: { cors: { allowed_origins: [APP] } } });
  await h.addUser('u1');
  const pre = await curl(h, dir, '/', preflight(APP), null);
  t.equal(pre.status, 204);
  t.notOk(pre.headers['access-control-allow-credentials'], 'no Allow-Credentials unless allow_credentials');
  t.notOk(pre.headers['access-control-max-age'], 'no Max-Age unless max_age');
  const h2 = await startWebdav(t);
  await h2.addUser('u1');
  const none = await curl(h2, dir, '/', preflight(APP), null);
  t.not(none.status, 204);
  t.notOk(none.headers['access-control-allow-origin'], 'no CORS without allowed_origins');
});

t.test('an origin with a path is refused by the configuration', async (t) => {
  await t.rejects(startWebdav(t, { webdav: { cors: { allowed_origins: ['https://app.example.com/path'] } } }), /origin/);
});
