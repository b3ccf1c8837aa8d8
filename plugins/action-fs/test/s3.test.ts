import { randomBytes } from 'node:crypto';
import net from 'node:net';
import t from 'tap';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { harness, s3, S3_ENDPOINT } from './helpers.js';

// On S3 (s3rver): metadata check (sub-type 8) against the objects' user metadata
// (x-amz-meta-*) against equals / not equals / present / absent / matches
// conditions, with size and age; a failing check names every condition.
// Then every other sub-type on the flat key space of an object store (trees
// copied server side, renamed, emptied; zip and unzip; a zip slip refused).

const s3Up = await new Promise<boolean>((resolve) => {
  const sock = net.connect({ host: '127.0.0.1', port: Number(new URL(S3_ENDPOINT).port) }, () => (sock.destroy(), resolve(true)));
  sock.once('error', () => resolve(false));
});
if (!s3Up && process.env.CI === 'true') throw new Error(`s3rver is not listening on ${S3_ENDPOINT}: CI must start it (scripts/servers/up.sh)`);

t.test('metadata check on S3', { skip: s3Up ? false : `s3rver is not listening on ${S3_ENDPOINT} (bash scripts/servers/start-s3.sh)` }, async (t) => {
  const h = await harness();
  t.teardown(() => h.close());
  const prefix = `action-fs-meta-${randomBytes(4).toString('hex')}/`;
  await h.user('meta-s3', s3(prefix));
  const client = new S3Client({
    endpoint: S3_ENDPOINT,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  t.teardown(() => client.destroy());
  await client.send(
    new PutObjectCommand({
      Bucket: 'ferry-test',
      Key: `${prefix}scan/report.pdf`,
      Body: Buffer.alloc(2048, 1),
      Metadata: { 'scan-status': 'clean', owner: 'finance-team' },
    }),
  );
  const check = (cfg: Record<string, unknown>) => h.run('meta-s3', { type: 8, metadata_check: { paths: ['/scan/report.pdf'], ...cfg } });

  await check({
    min_size: 2048,
    max_age: 600,
    metadata: [
      { key: 'scan-status', value: 'clean' },
      { key: 'Owner', value: 'finance-*', condition: 5 },
      { key: 'owner', value: 'hr', condition: 2 },
      { key: 'owner', condition: 3 },
      { key: 'quarantine', condition: 4 },
    ],
  });
  t.pass('every condition holds');

  await t.rejects(
    check({
      metadata: [
        { key: 'scan-status', value: 'infected' },
        { key: 'owner', value: 'hr-*', condition: 5 },
        { key: 'quarantine', condition: 3 },
        { key: 'owner', condition: 4 },
        { key: 'scan-status', value: 'clean', condition: 2 },
      ],
    }),
    /metadata check failed: \/scan\/report\.pdf: metadata "scan-status" is "clean", not "infected", metadata "owner" \("finance-team"\) does not match "hr-\*", metadata "quarantine" is absent, metadata "owner" is present, metadata "scan-status" is "clean"$/,
  );
  await t.rejects(check({ max_size: 100, min_age: 3600 }), /size 2048 is above max_size 100, modified \d+s ago, less than min_age 3600s/);
  await t.rejects(
    h.run('meta-s3', { type: 8, metadata_check: { paths: ['/scan/none.pdf'], metadata: [{ key: 'x', condition: 3 }] } }),
    /\/scan\/none\.pdf: does not exist/,
  );
});

t.test('sub-types 1-6 and 9 on S3 (flat key space, server-side copy)', { skip: s3Up ? false : `s3rver is not listening on ${S3_ENDPOINT}` }, async (t) => {
  const h = await harness();
  t.teardown(() => h.close());
  const U = 'ops-s3';
  await h.user(U, s3());
  const { unzip } = await import('@ferry/testkit');
  const { craftZip } = await import('./fixtures/zip-writer.js');
  await h.put(U, '/a/one.txt', 'one');
  await h.put(U, '/a/sub/two.txt', 'two');
  await h.run(U, { type: 3, mkdirs: ['/m/n'] });
  t.ok(await h.exists(U, '/m/n'), 'mkdirs');
  await h.run(U, {
    type: 6,
    copy: [
      { key: '/a', value: '/b' },
      { key: '/a/one.txt', value: '/c/one-copy.txt' },
    ],
  });
  t.same(await h.tree(U, '/b'), ['/b/one.txt', '/b/sub/', '/b/sub/two.txt'], 'a tree copied');
  t.equal((await h.get(U, '/c/one-copy.txt')).toString(), 'one');
  await h.run(U, {
    type: 1,
    renames: [
      { key: '/b', value: '/moved/b' },
      { key: '/c/one-copy.txt', value: '/c/renamed.txt', update_modtime: true },
    ],
  });
  t.same(await h.tree(U, '/moved'), ['/moved/b/', '/moved/b/one.txt', '/moved/b/sub/', '/moved/b/sub/two.txt']);
  t.notOk(await h.exists(U, '/b/one.txt'));
  await h.run(U, { type: 4, exist: ['/moved/b/sub/two.txt', '/c/renamed.txt'] });
  await t.rejects(h.run(U, { type: 4, exist: ['/b/one.txt'] }), /missing: \/b\/one\.txt/);
  await h.run(U, { type: 5, compress: { name: '/z/all.zip', paths: ['/a', '/c/renamed.txt'] } });
  const zip = unzip(await h.get(U, '/z/all.zip'));
  t.same([...zip.keys()].sort(), ['a/', 'a/one.txt', 'a/sub/', 'a/sub/two.txt', 'c/renamed.txt'], 'entries relative to the common directory');
  await h.put(U, '/in/x.zip', craftZip([{ name: 'd/e.txt', data: Buffer.from('e') }]));
  await h.run(U, { type: 9, decompress: { name: '/in/x.zip', target: '/x' } });
  t.equal((await h.get(U, '/x/d/e.txt')).toString(), 'e');
  await h.put(
    U,
    '/in/slip.zip',
    craftZip([
      { name: 'ok', data: Buffer.from('1') },
      { name: '../../out', data: Buffer.from('2') },
    ]),
  );
  await t.rejects(h.run(U, { type: 9, decompress: { name: '/in/slip.zip', target: '/slip' } }), /archive refused/);
  t.notOk(await h.exists(U, '/slip'));
  t.notOk(await h.exists(U, '/out'));
  await h.run(U, { type: 2, deletes: ['/moved/', '/a'] });
  t.same(await h.tree(U, '/moved'), [], 'emptied');
  t.notOk(await h.exists(U, '/a'), 'removed');
});
