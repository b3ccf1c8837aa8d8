import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { TOKENS, type EventBus, type FsEvent, type LogEvent } from '@ferry/core';
import t from 'tap';
import { curl, startWebdav } from './helpers.js';

const tmp = (t: { teardown(fn: () => void): void }) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'webdav-sec-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** A request on a keep-alive agent (one socket), resolving with the status and body. */
function request(agent: http.Agent, port: number, method: string, urlPath: string, auth: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path: urlPath, agent, headers: { authorization: 'Basic ' + Buffer.from(auth).toString('base64'), depth: '0' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

t.test('logins: refusals, the login cache, events and connections', async (t) => {
  const h = await startWebdav(t);
  const dir = tmp(t);
  await h.addUser('u1');
  await h.addUser('nodav', { filters: { denied_protocols: ['DAV'] } });
  await h.addUser('off', { status: 0 });
  const logs: LogEvent[] = [];
  const fsEvents: FsEvent[] = [];
  const bus = h.ta.app.container.resolve<EventBus>(TOKENS.EventBus);
  t.teardown(bus.on('log', (e) => void logs.push(e)));
  t.teardown(bus.on('fs', (e) => void fsEvents.push(e)));

  const none = await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'], null);
  t.equal(none.status, 401, 'no credentials');
  t.match(none.headers['www-authenticate'], /^Basic realm=/);
  t.equal((await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'], 'u1:wrong')).status, 401, 'a bad password');
  t.ok(
    logs.some((e) => e.event === 1 && e.username === 'u1' && e.protocol === 'DAV'),
    'a failed login event of protocol DAV',
  );
  t.equal((await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'], 'ghost:x')).status, 401, 'no such user');
  const denied = await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'], 'nodav');
  t.ok([401, 403].includes(denied.status), `denied protocol DAV refused (${denied.status})`);
  const disabled = await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'], 'off');
  t.ok([401, 403].includes(disabled.status), `a disabled user refused (${disabled.status})`);

  const before = logs.filter((e) => e.event === 5 && e.username === 'u1').length;
  for (let i = 0; i < 3; i++) t.equal((await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'])).status, 207);
  t.equal(
    logs.filter((e) => e.event === 5 && e.username === 'u1' && e.protocol === 'DAV').length - before,
    1,
    'three requests, one login: the others came from the cache',
  );

  // several connections at once with credentials not verified yet: one verification serves them all;
  // refusals are not shared (each is verified and logged on its own)
  await h.addUser('para');
  const loginsOf = (username: string, event: number) => logs.filter((e) => e.event === event && e.username === username && e.protocol === 'DAV').length;
  const atOnce = (auth: string) =>
    Promise.all(
      Array.from({ length: 6 }, () => {
        const agent = new http.Agent({ keepAlive: false });
        return request(agent, h.port, 'PROPFIND', '/', auth).finally(() => agent.destroy());
      }),
    );
  t.same(
    (await atOnce('para:para-pass-1')).map((r) => r.status),
    [207, 207, 207, 207, 207, 207],
    'six connections at once, all answered',
  );
  t.equal(loginsOf('para', 5), 1, 'one login verified for the six');
  t.same(
    (await atOnce('para:wrong-pass')).map((r) => r.status),
    [401, 401, 401, 401, 401, 401],
    'six wrong passwords at once, all refused',
  );
  t.equal(loginsOf('para', 1), 6, 'each refusal logged on its own');

  writeFileSync(path.join(dir, 'f.txt'), 'data');
  t.equal((await curl(h, dir, '/f.txt', ['-T', path.join(dir, 'f.txt')])).status, 201);
  t.ok(
    fsEvents.some((e) => e.action === 'upload' && e.protocol === 'DAV' && e.virtual_path === '/f.txt'),
    'an upload event of protocol DAV',
  );

  // one keep-alive connection: listed while open, closed by the API
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  t.equal((await request(agent, h.port, 'PROPFIND', '/', 'u1:u1-pass-1')).status, 207);
  const list = async () => {
    const r = await h.ta.inject('GET', '/api/v2/connections', { token: h.token });
    return (JSON.parse(r.payload) as { username: string; protocol: string; connection_id: string }[]).filter((c) => c.username === 'u1');
  };
  const listed = await list();
  t.equal(listed.length, 1, 'the connection is listed');
  t.equal(listed[0]?.protocol, 'DAV');
  const socketClosed = new Promise<void>((resolve) => {
    const sockets = Object.values(agent.freeSockets).flat();
    if (sockets.length === 0) resolve();
    for (const s of sockets) s?.once('close', () => resolve());
  });
  const del = await h.ta.inject('DELETE', `/api/v2/connections/${encodeURIComponent(listed[0]!.connection_id)}`, { token: h.token });
  t.equal(del.statusCode, 200, 'closed by the API');
  await socketClosed;
  t.pass('the client socket is cut');
  while ((await list()).length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  t.pass('the connection is no longer listed');

  // a change of the account drops its cached logins at once (long TTL of the harness: 60 s)
  await h.addUser('chg');
  t.equal((await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'], 'chg')).status, 207, 'logged in (cached)');
  const current = await h.ta.inject('GET', '/api/v2/users/chg', { token: h.token });
  const changed = await h.ta.inject('PUT', '/api/v2/users/chg', { token: h.token, payload: { ...(current.result as object), password: 'chg-pass-2' } });
  t.equal(changed.statusCode, 200, changed.payload);
  t.equal((await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'], 'chg')).status, 401, 'the old password is refused at once');
  t.equal((await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'], 'chg:chg-pass-2')).status, 207, 'the new one works');
  const again = await h.ta.inject('GET', '/api/v2/users/chg', { token: h.token });
  await h.ta.inject('PUT', '/api/v2/users/chg', { token: h.token, payload: { ...(again.result as object), status: 0 } });
  const off = await curl(h, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'], 'chg:chg-pass-2');
  t.ok([401, 403].includes(off.status), `disabled: refused at once (${off.status})`);
});

t.test('path escapes: refused, nothing changed, no 500', async (t) => {
  const h = await startWebdav(t, { webdav: { prefix: '/dav' } });
  const dir = tmp(t);
  const home = await h.addUser('u1');
  mkdirSync(path.join(home, 'sub'), { recursive: true });
  writeFileSync(path.join(home, 'sub', 'a.txt'), 'a');
  const outside = path.join(path.dirname(home), 'outside.txt');
  writeFileSync(outside, 'secret');
  const snapshot = () => JSON.stringify(readdirSync(path.dirname(home), { recursive: true }).sort());
  const before = snapshot();
  const base = `http://127.0.0.1:${h.port}`;
  const targets = [
    '/../outside.txt',
    '/%2e%2e/outside.txt',
    '/sub/..%2f..%2foutside.txt',
    '/sub%2f..%2f..%2foutside.txt',
    '/sub/..%5c..%5coutside.txt',
    '/sub\\..\\..\\outside.txt',
    '/%00',
    '/%zz',
  ];
  for (const target of targets) {
    for (const method of ['GET', 'DELETE', 'PROPFIND']) {
      const r = await curl(h, dir, target, ['-X', method, '-H', 'Depth: 0']);
      t.ok(r.status >= 400 && r.status < 500, `${method} ${target}: ${r.status}`);
    }
    const put = await curl(h, dir, target, ['-X', 'PUT', '--data-binary', 'x']);
    t.ok(put.status >= 400 && put.status < 500, `PUT ${target}: ${put.status}`);
  }
  const destinations = [
    ['http://other.example/dav/x.txt', 502],
    [`${base}/x.txt`, 403],
    [`${base}/dav/../outside.txt`, 400],
    [`${base}/dav/%2e%2e/outside.txt`, 400],
    [`${base}/dav/sub%2f..%2f..%2foutside.txt`, 400],
    [`${base}/dav/..%5coutside.txt`, 400],
    ['/dav/../../outside.txt', 400],
    ['/etc/passwd', 403],
    ['ftp://127.0.0.1/x', 502],
  ] as const;
  for (const [destination, status] of destinations) {
    for (const method of ['COPY', 'MOVE']) {
      const r = await curl(h, dir, '/sub/a.txt', ['-X', method, '-H', `Destination: ${destination}`, '-H', 'Overwrite: T']);
      t.equal(r.status, status, `${method} to ${destination}`);
    }
  }
  t.equal((await curl(h, dir, '/sub', ['-X', 'MOVE', '-H', `Destination: ${base}/dav/sub/inner`])).status, 403, 'a collection into itself');
  t.equal(snapshot(), before, 'nothing changed');
  t.ok(existsSync(path.join(home, 'sub', 'a.txt')));
  const outsidePrefix = await fetch(`${base}/sub/a.txt`, { headers: { authorization: 'Basic ' + Buffer.from('u1:u1-pass-1').toString('base64') } });
  t.equal(outsidePrefix.status, 404, 'a path outside the prefix: 404');
  t.equal((await curl(h, dir, '/sub/a.txt')).status, 200, 'under the prefix: served');
});

t.test('malformed XML and headers: 400/413, no 500, nothing changed', async (t) => {
  const h = await startWebdav(t);
  const dir = tmp(t);
  const home = await h.addUser('u1');
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'a.txt'), 'a');
  const laughs =
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>' +
    '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><X:a xmlns:X="urn:x">&lol3;</X:a></D:prop></D:set></D:propertyupdate>';
  const external =
    '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><D:propfind xmlns:D="DAV:"><D:prop><X:a xmlns:X="urn:x">&e;</X:a></D:prop></D:propfind>';
  const deep = '<D:propfind xmlns:D="DAV:"><D:prop>' + '<x>'.repeat(500) + '</x>'.repeat(500) + '</D:prop></D:propfind>';
  const bodies: [string, string, number][] = [
    ['PROPPATCH', laughs, 400],
    ['PROPFIND', external, 400],
    ['PROPFIND', deep, 400],
    ['PROPFIND', '<D:propfind xmlns:D="DAV:"><D:prop>', 400],
    ['PROPFIND', '<a><b></a></b>', 400],
    ['PROPFIND', '<x:propfind/>', 400],
    ['LOCK', '<D:lockinfo xmlns:D="DAV:"><D:lockscope/></D:lockinfo>', 400],
    ['PROPPATCH', '<D:propertyupdate xmlns:D="DAV:"/>', 400],
    ['PROPFIND', 'not xml at all', 400],
  ];
  for (const [method, body, status] of bodies) {
    const r = await curl(h, dir, '/a.txt', ['-X', method, '-H', 'Depth: 0', '--data-binary', body]);
    t.equal(r.status, status, `${method} ${body.slice(0, 40)}`);
    t.notMatch(r.body, /root:|lollollol/, 'nothing expanded');
  }
  const hugeFile = path.join(dir, 'huge.xml');
  writeFileSync(hugeFile, '<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>' + ' '.repeat(2 * 1024 * 1024));
  t.equal((await curl(h, dir, '/a.txt', ['-X', 'PROPFIND', '-H', 'Depth: 0', '--data-binary', `@${hugeFile}`])).status, 413, 'a huge body');
  t.equal(
    (await curl(h, dir, '/a.txt', ['-X', 'PROPFIND', '-H', 'Depth: 0', '-H', 'Transfer-Encoding: chunked', '--data-binary', `@${hugeFile}`])).status,
    413,
    'a huge chunked body',
  );
  for (const bad of ['(<opaquelocktoken:x>', '<http://x/>', '()', '(Not)', '(<a>) garbage', 'x']) {
    const r = await curl(h, dir, '/a.txt', ['-X', 'PUT', '--data-binary', 'changed', '-H', `If: ${bad}`]);
    t.equal(r.status, 400, `If: ${bad}`);
  }
  for (const [name, value] of [
    ['Depth', 'many'],
    ['Overwrite', 'maybe'],
    ['Timeout', 'Second-abc'],
    ['Lock-Token', 'nope'],
  ]) {
    const method = name === 'Lock-Token' ? 'UNLOCK' : name === 'Overwrite' ? 'COPY' : name === 'Timeout' ? 'LOCK' : 'PROPFIND';
    const r = await curl(h, dir, '/a.txt', ['-X', method, '-H', `${name}: ${value}`, '-H', `Destination: ${h.base}/b.txt`]);
    t.ok(r.status < 500, `${name}: ${value} -> ${r.status}`);
  }
  t.equal(readdirSync(home).sort().join(','), 'a.txt', 'nothing changed');
});
