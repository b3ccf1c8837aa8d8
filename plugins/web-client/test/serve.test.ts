import { readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import t from 'tap';
import { CONTENT_SECURITY_POLICY, SITE_DIR } from '../src/index.js';
import { startFerry } from './helpers.js';

t.test('the built site under /web/client/: index, hashed assets, encodings, CSP, client routes', async (t) => {
  const f = await startFerry(t);
  const html = readFileSync(path.join(SITE_DIR, 'index.html'), 'utf8');

  const bare = await fetch(`${f.origin}/web/client`, { redirect: 'manual' });
  t.equal(bare.status, 301);
  t.equal(bare.headers.get('location'), '/web/client/');

  const index = await fetch(f.url);
  t.equal(index.status, 200);
  t.equal(await index.text(), html);
  t.equal(index.headers.get('cache-control'), 'no-cache');
  t.equal(index.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
  t.match(CONTENT_SECURITY_POLICY, /default-src 'self'/);
  t.notMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/, 'no inline script or style, no eval');
  const directives = CONTENT_SECURITY_POLICY.split('; ');
  t.ok(directives.includes("frame-src 'self'"), 'frames of its own origin only (the PDF preview)');
  t.ok(directives.includes("object-src 'none'"), 'no plugin');
  t.ok(directives.includes("frame-ancestors 'none'"), 'not framed by any page');
  t.equal(index.headers.get('x-frame-options'), 'DENY');
  t.notMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'index.html has no inline script');
  t.notMatch(html, /<style|style="/, 'nor inline style');

  const assets = [...html.matchAll(/(?:src|href)="(\/web\/client\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  t.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), 'a script and a stylesheet');
  for (const a of assets) {
    const plain = readFileSync(path.join(SITE_DIR, a.slice('/web/client/'.length)));
    const r = await fetch(`${f.origin}${a}`, { headers: { 'accept-encoding': 'br' } });
    t.equal(r.status, 200, a);
    t.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable', `${a} cached for a year`);
    t.equal(r.headers.get('content-encoding'), 'br', `${a} precompressed`);
    // fetch decodes it: the bytes are the file's
    t.same(Buffer.from(await r.arrayBuffer()), plain);
    const raw = readFileSync(path.join(SITE_DIR, `${a.slice('/web/client/'.length)}.br`));
    t.same(brotliDecompressSync(raw), plain, 'the .br variant is the file');
  }

  const route = await fetch(`${f.url}files/some/folder`);
  t.equal(route.status, 200, 'a client route answers index.html');
  t.equal(await route.text(), html);
  const missing = await fetch(`${f.url}assets/nothing-here.js`);
  t.equal(missing.status, 404, 'a missing asset is a 404, not the page');
  const api = await fetch(`${f.origin}/api/v2/user/dirs`);
  t.equal(api.status, 401, 'the API is untouched');
  t.equal(api.headers.get('content-security-policy'), null, "the site's headers stay on the site");
});
