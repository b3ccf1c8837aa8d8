import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { acceptedEncodings, siteRelativePath } from '../../src/http/static-site.js';
import { createTestApp, type TestApp } from '../../src/testing.js';

const INDEX = '<!doctype html><title>site</title><script type="module" src="/site/assets/app-1a2b.js"></script>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});`;

function siteDir(): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'ferry-site-'));
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  writeFileSync(path.join(base, 'secret.txt'), 'outside the site');
  const root = path.join(base, 'www');
  mkdirSync(path.join(root, 'assets'), { recursive: true });
  writeFileSync(path.join(root, 'index.html'), INDEX);
  writeFileSync(path.join(root, 'robots.txt'), 'User-agent: *');
  writeFileSync(path.join(root, 'assets', 'app-1a2b.js'), SCRIPT);
  writeFileSync(path.join(root, 'assets', 'app-1a2b.js.br'), brotliCompressSync(SCRIPT));
  writeFileSync(path.join(root, 'assets', 'app-1a2b.js.gz'), gzipSync(SCRIPT));
  return root;
}

const plugin = (sites: Record<string, unknown>[]) => ({ name: 'fixture-static-site', path: 'core/test/fixtures/plugins/static-site', config: { sites } });

async function start(sites: Record<string, unknown>[], config?: Record<string, unknown>): Promise<TestApp> {
  const ta = await createTestApp({ plugins: [plugin(sites)], ...(config ? { config } : {}) });
  t.teardown(() => ta.close());
  return ta;
}

t.test('path and header helpers', async (t) => {
  t.same([...acceptedEncodings('gzip, deflate, br;q=0.5')], ['gzip', 'deflate', 'br']);
  t.same([...acceptedEncodings('br;q=0, gzip;q=0.000')], [], 'q=0 refuses an encoding');
  t.same([...acceptedEncodings(undefined)], []);
  t.equal(siteRelativePath('assets/a.js'), 'assets/a.js');
  t.equal(siteRelativePath(''), '');
  for (const bad of ['../x', 'a/../../x', './x', 'a//b', 'a\\..\\x', 'a\0b', 'a/']) t.equal(siteRelativePath(bad), null, bad);
});

t.test('a site: redirect, index, assets with their cache and encodings, client routes, 404s', async (t) => {
  const root = siteDir();
  const csp = "default-src 'self'";
  const ta = await start([{ prefix: '/site', root, fallback: 'index.html', immutable: ['assets/'], headers: { 'content-security-policy': csp } }]);

  const bare = await ta.inject('GET', '/site?x=1');
  t.equal(bare.statusCode, 301);
  t.equal(bare.headers.location, '/site/?x=1', 'the prefix without its slash redirects, query kept');

  const index = await ta.inject('GET', '/site/');
  t.equal(index.statusCode, 200);
  t.equal(index.payload, INDEX);
  t.match(index.headers['content-type'], /^text\/html/);
  t.equal(index.headers['cache-control'], 'no-cache', 'the index is revalidated');
  t.equal(index.headers['content-security-policy'], csp, "the site's headers");
  t.equal(index.headers['x-content-type-options'], 'nosniff');
  const etag = index.headers.etag as string;
  t.ok(etag);
  const again = await ta.inject('GET', '/site/', { headers: { 'if-none-match': etag } });
  t.equal(again.statusCode, 304);
  t.equal(again.payload, '');

  const br = await ta.inject('GET', '/site/assets/app-1a2b.js', { headers: { 'accept-encoding': 'gzip, br' } });
  t.equal(br.statusCode, 200);
  t.equal(br.headers['content-encoding'], 'br');
  t.equal(br.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.match(br.headers.vary, /accept-encoding/i);
  t.match(br.headers['content-type'], /^text\/javascript/);
  t.equal(brotliDecompressSync(br.rawPayload).toString(), SCRIPT, 'the precompressed brotli variant');
  const gz = await ta.inject('GET', '/site/assets/app-1a2b.js', { headers: { 'accept-encoding': 'gzip' } });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.equal(gunzipSync(gz.rawPayload).toString(), SCRIPT, 'the gzip variant');
  const plain = await ta.inject('GET', '/site/assets/app-1a2b.js', { headers: { 'accept-encoding': 'identity' } });
  t.equal(plain.headers['content-encoding'], undefined);
  t.equal(plain.payload, SCRIPT);
  const head = await ta.inject('HEAD', '/site/assets/app-1a2b.js');
  t.equal(head.statusCode, 200);
  t.equal(head.payload, '');
  t.equal(head.headers['content-length'], String(SCRIPT.length));

  const route = await ta.inject('GET', '/site/files/a/b');
  t.equal(route.statusCode, 200, 'a client route answers the fallback page');
  t.equal(route.payload, INDEX);
  t.equal(route.headers['cache-control'], 'no-cache');

  const robots = await ta.inject('GET', '/site/robots.txt');
  t.equal(robots.headers['cache-control'], 'no-cache', 'a file outside the immutable prefixes');

  for (const url of ['/site/assets/missing.js', '/site/missing.txt', '/site/..%2fsecret.txt', '/site/%2e%2e/secret.txt', '/site/assets/..%5c..%5csecret.txt']) {
    const r = await ta.inject('GET', url);
    t.equal(r.statusCode, 404, url);
    t.notMatch(r.payload, /outside the site/);
    t.match(JSON.parse(r.payload), { message: String, error: 'Not Found' });
  }
  const post = await ta.inject('POST', '/site/');
  t.equal(post.statusCode, 404, 'GET and HEAD only');
});

t.test('no fallback: a client route is a 404; a binding without the REST API serves no site', async (t) => {
  const root = siteDir();
  const ta = await start([{ prefix: '/a/b', root }], {
    httpd: {
      bindings: [
        { address: '127.0.0.1', port: 0 },
        { address: '127.0.0.1', port: 0, enable_rest_api: false },
      ],
    },
  });
  t.equal((await ta.inject('GET', '/a/b/')).statusCode, 200);
  t.equal((await ta.inject('GET', '/a/b/files')).statusCode, 404);
  const other = ta.app.servers[1]!;
  const r = await other.inject({ method: 'GET', url: '/a/b/', remoteAddress: '127.0.0.1' });
  t.equal(r.statusCode, 404);
});

t.test('a site without an index file answers 404 at its root', async (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'ferry-site-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const ta = await start([{ prefix: '/empty', root }]);
  const r = await ta.inject('GET', '/empty/');
  t.equal(r.statusCode, 404);
  t.match(r.payload, /no index file/);
});

t.test('definitions the core refuses stop the start, naming the plugin', async (t) => {
  const root = siteDir();
  await t.rejects(
    createTestApp({ plugins: [plugin([{ prefix: '/api/v2/x', root }])] }),
    /plugin fixture-static-site: invalid static site definition: "prefix"/,
  );
  await t.rejects(createTestApp({ plugins: [plugin([{ prefix: '/ok', root: 'relative/dir' }])] }), /invalid static site definition: "root"/);
  await t.rejects(createTestApp({ plugins: [plugin([{ prefix: 'no-slash', root }])] }), /invalid static site definition/);
  await t.rejects(createTestApp({ plugins: [plugin([{ prefix: '/x/', root }])] }), /invalid static site definition/);
  await t.rejects(
    createTestApp({
      plugins: [
        plugin([
          { prefix: '/x', root },
          { prefix: '/x', root },
        ]),
      ],
    }),
    /static site \/x is already served by fixture-static-site/,
  );
});

t.test("a host the defender bans: a browser's page request gets the site's refusal page, anything else the JSON 403", async (t) => {
  const root = siteDir();
  const PAGE = '<!doctype html><title>blocked</title><p>Your address is blocked</p>';
  writeFileSync(path.join(root, 'blocked.html'), PAGE);
  const ta = await start(
    [
      {
        prefix: '/site',
        root,
        fallback: 'index.html',
        headers: { 'content-security-policy': "default-src 'self'" },
        refusalPage: { file: 'blocked.html', headers: { 'content-security-policy': "default-src 'none'" } },
      },
      { prefix: '/other', root },
    ],
    { defender: { enabled: true, threshold: 2, score_invalid: 2, ban_time: 30 } },
  );
  const BANNED = '198.51.100.7';
  const from = (ip: string, url: string, accept: string) => ta.server.inject({ method: 'GET', url, headers: { accept }, remoteAddress: ip });
  const refused = await ta.server.inject({
    method: 'GET',
    url: '/api/v2/token',
    headers: { authorization: `Basic ${Buffer.from('nobody:wrong').toString('base64')}` },
    remoteAddress: BANNED,
  });
  t.equal(refused.statusCode, 401, 'an unknown account: banned by its score');

  const html = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
  for (const url of ['/site/', '/site/files/deep/er', '/site']) {
    const page = await from(BANNED, url, html);
    t.equal(page.statusCode, 403, url);
    t.match(page.headers['content-type'], /^text\/html/, `${url}: a page`);
    t.equal(page.payload, PAGE, `${url}: the refusal page`);
    t.equal(page.headers['content-security-policy'], "default-src 'none'", "its own headers, not the site's");
    t.equal(page.headers['cache-control'], 'no-store', 'never cached');
  }
  const head = await ta.server.inject({ method: 'HEAD', url: '/site/', headers: { accept: html }, remoteAddress: BANNED });
  t.equal(head.statusCode, 403);
  t.equal(head.payload, '', 'HEAD: no body');

  for (const [url, accept] of [
    ['/site/assets/app-1a2b.js', '*/*'],
    ['/api/v2/user/dirs', html],
    ['/other/', html],
  ] as const) {
    const r = await from(BANNED, url, accept);
    t.equal(r.statusCode, 403, url);
    t.match(JSON.parse(r.payload), { message: /banned/ }, `${url}: the JSON refusal`);
  }
  const post = await ta.server.inject({ method: 'POST', url: '/site/', headers: { accept: html }, remoteAddress: BANNED });
  t.equal(post.statusCode, 403);
  t.match(post.headers['content-type'], /json/, 'a POST: JSON');

  const other = await from('198.51.100.8', '/site/', html);
  t.equal(other.statusCode, 200, 'another host gets the site');
  t.equal(other.payload, INDEX);
});
