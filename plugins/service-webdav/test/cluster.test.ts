import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPgDatabase } from '@ferry/core/testing';
import t from 'tap';
import { curl, startWebdav } from './helpers.js';

// Two nodes on one PostgreSQL database and one data directory: a lock taken through one node holds
// on the other, and dead properties set through one are read through the other (tables webdav_locks
// and webdav_props of the core database).

t.test('locks and dead properties are shared by the nodes', async (t) => {
  const db = await createPgDatabase();
  t.teardown(() => db.drop());
  const a = await startWebdav(t, { databaseUrl: db.url });
  const b = await startWebdav(t, { databaseUrl: db.url, dataDir: a.ta.dataDir });
  await a.addUser('u1');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'webdav-cluster-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  t.equal((await curl(a, dir, '/f.txt', ['-X', 'PUT', '--data-binary', 'one'])).status, 201);
  const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
  const locked = await curl(a, dir, '/f.txt', ['-X', 'LOCK', '--data', lockBody]);
  t.equal(locked.status, 200, 'locked through node A');
  const token = /<([^>]+)>/.exec(locked.headers['lock-token'] ?? '')?.[1];
  t.ok(token);
  t.equal((await curl(b, dir, '/f.txt', ['-X', 'PUT', '--data-binary', 'two'])).status, 423, 'node B refuses a write without the token');
  t.equal((await curl(b, dir, '/f.txt', ['-X', 'PUT', '--data-binary', 'two', '-H', `If: (<${token}>)`])).status, 204, 'and takes it with the token');
  const found = await curl(b, dir, '/f.txt', [
    '-X',
    'PROPFIND',
    '-H',
    'Depth: 0',
    '--data',
    '<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>',
  ]);
  t.match(found.body, token!, 'node B shows the lock');

  const set = '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><E:tag xmlns:E="urn:example">shared</E:tag></D:prop></D:set></D:propertyupdate>';
  t.equal((await curl(a, dir, '/f.txt', ['-X', 'PROPPATCH', '-H', `If: (<${token}>)`, '--data', set])).status, 207);
  const read = await curl(b, dir, '/f.txt', [
    '-X',
    'PROPFIND',
    '-H',
    'Depth: 0',
    '--data',
    '<D:propfind xmlns:D="DAV:"><D:prop><E:tag xmlns:E="urn:example"/></D:prop></D:propfind>',
  ]);
  t.match(read.body, />shared</, 'node B reads the dead property set through node A');

  t.equal((await curl(b, dir, '/f.txt', ['-X', 'UNLOCK', '-H', `Lock-Token: <${token}>`])).status, 204, 'unlocked through node B');
  t.equal((await curl(a, dir, '/f.txt', ['-X', 'PUT', '--data-binary', 'three'])).status, 204, 'node A writes without a token again');
});

/** Polls `probe` until it holds or `boundMs` passed (a bounded wait for node B to hear A's notification, not a measure of speed). */
async function within(boundMs: number, probe: () => Promise<boolean>): Promise<boolean> {
  const end = Date.now() + boundMs;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('an account changed through node A drops the logins node B holds', async (t) => {
  const db = await createPgDatabase();
  t.teardown(() => db.drop());
  // an hour of login cache: without the change feed, B would go on accepting the old login
  const webdav = { login_cache_ttl: 3600 };
  const a = await startWebdav(t, { databaseUrl: db.url, webdav });
  const b = await startWebdav(t, { databaseUrl: db.url, dataDir: a.ta.dataDir, webdav });
  await a.addUser('u1');
  await a.addUser('u2');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'webdav-cluster-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const propfind = (auth: string) => curl(b, dir, '/', ['-X', 'PROPFIND', '-H', 'Depth: 0'], auth);
  const update = async (username: string, change: Record<string, unknown>) => {
    const got = await a.ta.inject('GET', `/api/v2/users/${username}`, { token: a.token });
    const body = { ...(got.result as Record<string, unknown>), ...change };
    if (!('password' in change)) delete body.password;
    const r = await a.ta.inject('PUT', `/api/v2/users/${username}`, { token: a.token, payload: body });
    t.equal(r.statusCode, 200, `${username} updated through node A`);
  };

  t.equal((await propfind('u1')).status, 207, 'node B serves u1 (and caches its login)');
  t.equal((await propfind('u1')).status, 207, 'again, from the cache');
  await update('u1', { password: 'u1-new-pass-2' });
  t.ok(await within(5000, async () => (await propfind('u1')).status === 401), 'node B refuses the old password');
  t.equal((await propfind('u1:u1-new-pass-2')).status, 207, 'and takes the new one');

  t.equal((await propfind('u2')).status, 207, 'node B serves u2');
  await update('u2', { status: 0 });
  t.ok(await within(5000, async () => (await propfind('u2')).status !== 207), 'node B refuses u2 once disabled on node A');
  const refused = await propfind('u2');
  t.ok([401, 403].includes(refused.status), `refused with ${refused.status}`);
});
