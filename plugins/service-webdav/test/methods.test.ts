import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { TOKENS } from '@ferry/core';
import { curl, startWebdav } from './helpers.js';

/** Every method through curl, with the answers and error codes of RFC 4918 and RFC 9110. */
t.test('methods and their error codes (curl)', async (t) => {
  const h = await startWebdav(t);
  const home = await h.addUser('u1');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'webdav-curl-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const local = path.join(dir, 'hello.txt');
  writeFileSync(local, 'hello world');

  t.test('OPTIONS', async (t) => {
    const r = await curl(h, dir, '/', ['-X', 'OPTIONS']);
    t.equal(r.status, 200);
    t.equal(r.headers['dav'], '1, 2');
    t.match(r.headers['allow'], /PROPFIND/);
    t.match(r.headers['allow'], /LOCK/);
  });

  t.test('PUT, GET, HEAD, ranges, conditions', async (t) => {
    t.equal((await curl(h, dir, '/hello.txt', ['-T', local])).status, 201, 'created');
    t.equal(readFileSync(path.join(home, 'hello.txt'), 'utf8'), 'hello world');
    t.equal((await curl(h, dir, '/hello.txt', ['-T', local])).status, 204, 'replaced');
    const g = await curl(h, dir, '/hello.txt');
    t.equal(g.status, 200);
    t.equal(g.body, 'hello world');
    t.equal(g.headers['content-type'], 'text/plain');
    const etag = g.headers['etag']!;
    t.match(etag, /^"[^"]+"$/);
    t.ok(g.headers['last-modified']);
    const head = await curl(h, dir, '/hello.txt', ['-I']);
    t.equal(head.status, 200);
    t.equal(head.headers['content-length'], '11');
    const part = await curl(h, dir, '/hello.txt', ['-r', '6-']);
    t.equal(part.status, 206);
    t.equal(part.body, 'world');
    t.equal(part.headers['content-range'], 'bytes 6-10/11');
    t.equal((await curl(h, dir, '/hello.txt', ['-r', '-5'])).body, 'world', 'suffix range');
    t.equal((await curl(h, dir, '/hello.txt', ['-H', 'Range: bytes=50-'])).status, 416);
    t.equal((await curl(h, dir, '/hello.txt', ['-H', `If-None-Match: ${etag}`])).status, 304);
    t.equal((await curl(h, dir, '/hello.txt', ['-H', 'If-Match: "other"'])).status, 412);
    t.equal((await curl(h, dir, '/hello.txt', ['-H', `If-Modified-Since: ${g.headers['last-modified']}`])).status, 304);
    t.equal((await curl(h, dir, '/hello.txt', ['-H', 'If-Unmodified-Since: Thu, 01 Jan 1970 00:00:00 GMT'])).status, 412);
    t.equal((await curl(h, dir, '/hello.txt', ['-H', 'If-Range: "other"', '-r', '0-1'])).status, 200, 'If-Range mismatch: whole file');
    t.equal((await curl(h, dir, '/nothing.txt')).status, 404);
    t.equal((await curl(h, dir, '/', [])).status, 405, 'GET of a collection');
  });

  t.test('request targets in absolute form (RFC 9112 3.2.2: servers accept them)', async (t) => {
    const abs = await curl(h, dir, '/hello.txt', ['--request-target', `http://127.0.0.1:${h.port}/hello.txt`]);
    t.equal(abs.status, 200, 'GET http://host/path');
    t.equal(abs.body, 'hello world');
    const dotdot = await curl(h, dir, '/hello.txt', ['--request-target', `http://127.0.0.1:${h.port}/../hello.txt`]);
    t.equal(dotdot.status, 400, "'..' in an absolute-form target refused as in a path");
    const ftp = await curl(h, dir, '/hello.txt', ['--request-target', 'ftp://127.0.0.1/hello.txt']);
    t.equal(ftp.status, 400, 'another scheme refused');
  });

  t.test('PUT refusals', async (t) => {
    t.equal((await curl(h, dir, '/hello.txt', ['-T', local, '-H', 'If-Match: "other"'])).status, 412, 'If-Match mismatch');
    t.equal((await curl(h, dir, '/hello.txt', ['-T', local, '-H', 'If-None-Match: *'])).status, 412, 'If-None-Match * on an existing file');
    t.equal((await curl(h, dir, '/new-once.txt', ['-T', local, '-H', 'If-None-Match: *'])).status, 201, 'If-None-Match * on a new file');
    t.equal((await curl(h, dir, '/new-match.txt', ['-T', local, '-H', 'If-Match: *'])).status, 412, 'If-Match * on a missing file');
    t.notOk(existsSync(path.join(home, 'new-match.txt')));
    const partial = await curl(h, dir, '/hello.txt', ['-T', local, '-H', 'Content-Range: bytes 0-10/11']);
    t.equal(partial.status, 501, 'partial PUT refused');
    t.match(partial.body, /Content-Range/);
    t.equal((await curl(h, dir, '/missing/x.txt', ['-T', local])).status, 409, 'missing parent');
    t.equal((await curl(h, dir, '/col-put', ['-X', 'MKCOL'])).status, 201);
    t.equal((await curl(h, dir, '/col-put', ['-X', 'PUT', '--data-binary', 'x'])).status, 405, 'PUT on a collection');
  });

  t.test('MKCOL', async (t) => {
    t.equal((await curl(h, dir, '/col', ['-X', 'MKCOL'])).status, 201);
    t.ok(statSync(path.join(home, 'col')).isDirectory());
    t.equal((await curl(h, dir, '/col', ['-X', 'MKCOL'])).status, 405, 'exists');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'MKCOL'])).status, 405, 'a file exists');
    t.equal((await curl(h, dir, '/nope/deeper', ['-X', 'MKCOL'])).status, 409, 'missing parent');
    t.equal((await curl(h, dir, '/withbody', ['-X', 'MKCOL', '--data', '<x/>'])).status, 415, 'body');
    t.notOk(existsSync(path.join(home, 'withbody')));
  });

  t.test('COPY and MOVE', async (t) => {
    const dest = (p: string) => ['-H', `Destination: ${h.base}${p}`];
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'COPY', ...dest('/col/copy.txt')])).status, 201);
    t.equal(readFileSync(path.join(home, 'col/copy.txt'), 'utf8'), 'hello world');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'COPY', ...dest('/col/copy.txt')])).status, 204, 'overwritten');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'COPY', ...dest('/col/copy.txt'), '-H', 'Overwrite: F'])).status, 412, 'Overwrite F');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'COPY', ...dest('/nope/copy.txt')])).status, 409, 'missing parent');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'COPY'])).status, 400, 'no Destination');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'COPY', ...dest('/hello.txt')])).status, 403, 'same resource');
    t.equal((await curl(h, dir, '/col', ['-X', 'COPY', ...dest('/col/inner')])).status, 403, 'into itself');
    t.equal((await curl(h, dir, '/col', ['-X', 'COPY', ...dest('/col0'), '-H', 'Depth: 0'])).status, 201, 'shallow copy');
    t.same(readdir(path.join(home, 'col0')), [], 'Depth 0: the collection only');
    t.equal((await curl(h, dir, '/col', ['-X', 'COPY', ...dest('/col1'), '-H', 'Depth: 1'])).status, 400, 'Depth 1');
    t.equal((await curl(h, dir, '/col', ['-X', 'MOVE', ...dest('/col2'), '-H', 'Depth: 0'])).status, 400, 'MOVE Depth 0');
    t.equal((await curl(h, dir, '/col', ['-X', 'MOVE', ...dest('/col2')])).status, 201);
    t.ok(existsSync(path.join(home, 'col2/copy.txt')));
    t.notOk(existsSync(path.join(home, 'col')));
    t.equal((await curl(h, dir, '/nothing', ['-X', 'MOVE', ...dest('/col3')])).status, 404);
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'COPY', '-H', 'Destination: http://other.example/x.txt'])).status, 502, 'another host');
  });

  t.test('DELETE', async (t) => {
    t.equal((await curl(h, dir, '/col0', ['-X', 'DELETE'])).status, 204);
    t.notOk(existsSync(path.join(home, 'col0')));
    t.equal((await curl(h, dir, '/col0', ['-X', 'DELETE'])).status, 404);
    t.equal((await curl(h, dir, '/', ['-X', 'DELETE'])).status, 403, 'the root');
  });

  t.test('PROPFIND', async (t) => {
    const body = (props: string) => `<?xml version="1.0"?><D:propfind xmlns:D="DAV:">${props}</D:propfind>`;
    const all = await curl(h, dir, '/hello.txt', ['-X', 'PROPFIND', '-H', 'Depth: 0']);
    t.equal(all.status, 207);
    for (const p of [
      'getetag',
      'getlastmodified',
      'getcontentlength>11<',
      'getcontenttype>text/plain<',
      'resourcetype',
      'displayname>hello.txt<',
      'creationdate',
      'supportedlock',
      'lockdiscovery',
    ]) {
      t.match(all.body, `D:${p}`, `allprop has ${p}`);
    }
    t.notMatch(all.body, 'quota-used-bytes', 'allprop leaves the quota properties out');
    const names = await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0', '--data', body('<D:propname/>')]);
    t.match(names.body, '<D:getetag/>');
    const named = await curl(h, dir, '/', [
      '-X',
      'PROPFIND',
      '-H',
      'Depth: 1',
      '--data',
      body('<D:prop><D:resourcetype/><D:quota-used-bytes/><D:quota-available-bytes/><X:nope xmlns:X="urn:x"/></D:prop>'),
    ]);
    t.equal(named.status, 207);
    t.match(named.body, '<D:href>/hello.txt</D:href>', 'depth 1 lists the members');
    t.match(named.body, '<D:collection/>');
    t.match(named.body, /<D:quota-used-bytes>\d+<\/D:quota-used-bytes>/);
    t.match(named.body, /HTTP\/1.1 404 Not Found/, 'unknown property: 404 propstat');
    const inf = await curl(h, dir, '/', ['-X', 'PROPFIND']);
    t.equal(inf.status, 403, 'depth infinity refused');
    t.match(inf.body, 'propfind-finite-depth');
    t.equal((await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 2'])).status, 400);
    t.equal((await curl(h, dir, '/nothing', ['-X', 'PROPFIND', '-H', 'Depth: 0'])).status, 404);
    t.equal((await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0', '--data', '<D:other xmlns:D="DAV:"/>'])).status, 400, 'not a propfind');
  });

  t.test('PROPPATCH: dead properties and Win32LastModifiedTime', async (t) => {
    const update = `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:" xmlns:E="urn:example"><D:set><D:prop><E:color>blue</E:color><Z:Win32LastModifiedTime>Wed, 01 Jan 2020 10:00:00 GMT</Z:Win32LastModifiedTime></D:prop></D:set></D:propertyupdate>`;
    const r = await curl(h, dir, '/hello.txt', ['-X', 'PROPPATCH', '--data', update]);
    t.equal(r.status, 207);
    t.match(r.body, 'HTTP/1.1 200 OK');
    t.equal(statSync(path.join(home, 'hello.txt')).mtime.toISOString(), '2020-01-01T10:00:00.000Z', 'mtime applied');
    const got = await curl(h, dir, '/hello.txt', [
      '-X',
      'PROPFIND',
      '-H',
      'Depth: 0',
      '--data',
      '<D:propfind xmlns:D="DAV:"><D:prop><E:color xmlns:E="urn:example"/></D:prop></D:propfind>',
    ]);
    t.match(got.body, />blue</, 'the dead property is kept');
    const bad = `<D:propertyupdate xmlns:D="DAV:" xmlns:E="urn:example"><D:set><D:prop><D:getetag>x</D:getetag><E:size>1</E:size></D:prop></D:set></D:propertyupdate>`;
    const refused = await curl(h, dir, '/hello.txt', ['-X', 'PROPPATCH', '--data', bad]);
    t.match(refused.body, 'HTTP/1.1 403 Forbidden', 'a protected property');
    t.match(refused.body, 'HTTP/1.1 424 Failed Dependency', 'the others are not set');
  });

  t.test("PROPFIND depth 1: the members' dead properties, not those deeper or beside", async (t) => {
    mkdirSync(path.join(home, 'pd', 'sub'), { recursive: true });
    mkdirSync(path.join(home, 'pd-other'));
    for (const f of ['pd/a.txt', 'pd/b c.txt', 'pd/sub/deep.txt', 'pd-other/x.txt']) writeFileSync(path.join(home, f), 'x');
    const set = (v: string) =>
      `<D:propertyupdate xmlns:D="DAV:" xmlns:E="urn:example"><D:set><D:prop><E:color>${v}</E:color></D:prop></D:set></D:propertyupdate>`;
    for (const [p, v] of [
      ['/pd', 'self'],
      ['/pd/a.txt', 'red'],
      ['/pd/sub', 'green'],
      ['/pd/sub/deep.txt', 'deep'],
      ['/pd-other/x.txt', 'beside'],
    ]) {
      t.equal((await curl(h, dir, p, ['-X', 'PROPPATCH', '--data', set(v)])).status, 207, `PROPPATCH ${p}`);
    }
    const r = await curl(h, dir, '/pd/', ['-X', 'PROPFIND', '-H', 'Depth: 1']);
    t.equal(r.status, 207);
    const blocks = new Map(
      r.body
        .split('<D:response>')
        .slice(1)
        .map((b) => [/<D:href>([^<]*)<\/D:href>/.exec(b)![1]!, b]),
    );
    t.same([...blocks.keys()].sort(), ['/pd/', '/pd/a.txt', '/pd/b%20c.txt', '/pd/sub/'], 'the collection and its members, hrefs encoded');
    t.match(blocks.get('/pd/'), '>self<', "the collection's own");
    t.match(blocks.get('/pd/a.txt'), '>red<', "a file's");
    t.match(blocks.get('/pd/sub/'), '>green<', "a subcollection's");
    t.notMatch(blocks.get('/pd/b%20c.txt'), 'urn:example', 'none where none was set');
    t.notMatch(r.body, /deep|beside/, 'nothing of a deeper path or of a sibling collection');

    // a collection named with characters outside the BMP (two UTF-16 units each, one character for the database)
    mkdirSync(path.join(home, 'pd-😀🎉'));
    writeFileSync(path.join(home, 'pd-😀🎉', 'e.txt'), 'x');
    t.equal((await curl(h, dir, '/pd-%F0%9F%98%80%F0%9F%8E%89/e.txt', ['-X', 'PROPPATCH', '--data', set('emoji')])).status, 207);
    const e = await curl(h, dir, '/pd-%F0%9F%98%80%F0%9F%8E%89/', ['-X', 'PROPFIND', '-H', 'Depth: 1']);
    t.equal(e.status, 207);
    t.match(e.body, '>emoji<', "the member's dead property, under a collection named with emoji");
  });

  t.test('PROPFIND depth 1 of a collection with more dead properties than one query reads: page by page, all there', async (t) => {
    mkdirSync(path.join(home, 'manyprops'));
    const files = 30;
    const perFile = 170; // 5,100 in all: past the 5,000 read at once
    for (let i = 0; i < files; i++) writeFileSync(path.join(home, 'manyprops', `f-${i}.txt`), 'x');
    const orm = h.ta.app.container.resolve<{ em: { fork(): { getKnex(): (table: string) => { insert(rows: unknown[]): Promise<unknown> } } } }>(TOKENS.Orm);
    const knex = orm.em.fork().getKnex();
    const rows = [];
    for (let i = 0; i < files; i++) {
      for (let j = 0; j < perFile; j++) {
        rows.push({
          username: 'u1',
          path: `/manyprops/f-${i}.txt`,
          ns: 'urn:example',
          name: `p${j}`,
          xml: `<p0:p${j} xmlns:p0="urn:example">v${i}-${j}</p0:p${j}>`,
        });
      }
    }
    for (let i = 0; i < rows.length; i += 200) await knex('webdav_props').insert(rows.slice(i, i + 200));
    const body = '<D:propfind xmlns:D="DAV:" xmlns:E="urn:example"><D:prop><E:p0/><E:p169/></D:prop></D:propfind>';
    const r = await curl(h, dir, '/manyprops', ['-X', 'PROPFIND', '-H', 'Depth: 1', '--data', body]);
    t.equal(r.status, 207);
    for (let i = 0; i < files; i++) {
      t.ok(r.body.includes(`>v${i}-0<`) && r.body.includes(`>v${i}-169<`), `f-${i}.txt: its properties`);
    }
    t.equal(r.body.match(/404 Not Found/g)?.length, 1, "only the collection's own (it has none) are missing");
  });

  t.test('LOCK, If, UNLOCK', async (t) => {
    const lockBody = (scope: string) =>
      `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:${scope}/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>tester</D:owner></D:lockinfo>`;
    const l = await curl(h, dir, '/hello.txt', ['-X', 'LOCK', '-H', 'Timeout: Second-100', '--data', lockBody('exclusive')]);
    t.equal(l.status, 200);
    const token = /<(opaquelocktoken:[^>]+)>/.exec(l.headers['lock-token'] ?? '')?.[1];
    t.ok(token, 'a lock token');
    t.match(l.body, 'Second-100');
    t.equal((await curl(h, dir, '/hello.txt', ['-T', local])).status, 423, 'locked: PUT without the token');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'DELETE'])).status, 423, 'locked: DELETE without the token');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'LOCK', '--data', lockBody('shared')])).status, 423, 'a conflicting lock');
    t.equal((await curl(h, dir, '/hello.txt', ['-T', local, '-H', `If: (<${token}> ["nope"])`])).status, 412, 'If header false');
    t.equal((await curl(h, dir, '/hello.txt', ['-T', local, '-H', 'If: (<opaquelocktoken:zzz>'])).status, 400, 'malformed If header');
    t.equal((await curl(h, dir, '/hello.txt', ['-T', local, '-H', `If: (<${token}>)`])).status, 204, 'with the token');
    const refresh = await curl(h, dir, '/hello.txt', ['-X', 'LOCK', '-H', `If: (<${token}>)`, '-H', 'Timeout: Second-200']);
    t.equal(refresh.status, 200, 'refresh');
    t.match(refresh.body, 'Second-200');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'UNLOCK', '-H', 'Lock-Token: <opaquelocktoken:nope>'])).status, 409, 'an unknown token');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'UNLOCK'])).status, 400, 'no Lock-Token');
    t.equal((await curl(h, dir, '/hello.txt', ['-X', 'UNLOCK', '-H', `Lock-Token: <${token}>`])).status, 204);
    t.equal((await curl(h, dir, '/hello.txt', ['-T', local])).status, 204, 'unlocked');
    const created = await curl(h, dir, '/locked-new.txt', ['-X', 'LOCK', '--data', lockBody('exclusive')]);
    t.equal(created.status, 201, 'LOCK of an unmapped URL creates an empty file');
    t.equal(statSync(path.join(home, 'locked-new.txt')).size, 0);
    t.equal((await curl(h, dir, '/', ['-X', 'LOCK', '-H', 'Depth: 1', '--data', lockBody('exclusive')])).status, 400, 'Depth 1');
  });
});

function readdir(p: string): string[] {
  return existsSync(p) ? readdirSync(p) : [];
}

t.test('a PUT cut by the client leaves nothing and the old file intact', async (t) => {
  const h = await startWebdav(t);
  const home = await h.addUser('u1');
  const dir = t.testdir({});
  writeFileSync(path.join(dir, 'old.txt'), 'old content');
  t.equal((await curl(h, dir, '/keep.txt', ['-T', path.join(dir, 'old.txt')])).status, 201);
  const net = await import('node:net');
  for (const target of ['/keep.txt', '/fresh.txt']) {
    await new Promise<void>((resolve, reject) => {
      const s = net.connect(h.port, '127.0.0.1', () => {
        const auth = Buffer.from('u1:u1-pass-1').toString('base64');
        s.write(`PUT ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${auth}\r\nContent-Length: 10000000\r\n\r\n`);
        s.write(Buffer.alloc(256 * 1024, 0x61), () => setTimeout(() => (s.destroy(), resolve()), 200));
      });
      s.on('error', reject);
    });
  }
  // the server sees the close and aborts the writes (their temporary files removed): up to 10 s
  const others = () => readdirSync(home).filter((n) => n !== 'keep.txt');
  for (let i = 0; i < 200 && others().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  const listing = await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 1']);
  t.notMatch(listing.body, 'fresh.txt', 'no partial new file');
  t.equal(readFileSync(path.join(home, 'keep.txt'), 'utf8'), 'old content', 'the old file is intact');
  t.same(others(), [], 'no temporary file left');
});
