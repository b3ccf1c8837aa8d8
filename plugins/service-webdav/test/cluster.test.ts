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
