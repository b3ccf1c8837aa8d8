import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { FsErrorCode } from '@ferry/core';
import { createTestApp } from '@ferry/core/testing';
import {
  RecordingRelay,
  StalledServer,
  createUserWithFolders,
  expectFsError,
  readFile,
  readUntilError,
  setEnvForTest,
  startFormStub,
  writeFile,
} from '@ferry/testkit';
import { createS3Provider, s3Provider, sameS3Bucket, type S3Fs } from '../src/index.js';
import { BUCKET, S3_ENDPOINT, S3_PORT, randomPrefix, s3Unavailable, scope, testOptions, removePrefix } from './fixtures/server.js';

// Options exercised against s3rver (not only their schemas): what the client really
// sends is recorded by a relay in front of the server (storage class, ACL, SSE-C,
// copy sources); role_arn against a local STS wire-protocol stub; server-side moves
// between mounts of one bucket; the time limits against a server that stalls.

const skip = await s3Unavailable();
const SSE_KEY = 'ferry-test-sse-c-key-32-bytes!!!';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const md5b64 = (s: string) => createHash('md5').update(s).digest('base64');

/** A relay in front of s3rver, stopped at teardown. */
async function relayed(t: Test): Promise<RecordingRelay> {
  const relay = await new RecordingRelay(S3_PORT).start();
  t.teardown(() => relay.stop());
  return relay;
}

t.test('sameS3Bucket()', async (t) => {
  const a = testOptions({ key_prefix: 'a/' });
  t.ok(sameS3Bucket(a, { ...a, key_prefix: 'b/' }), 'the key prefix does not matter');
  t.notOk(sameS3Bucket(a, { ...a, bucket: 'other' }));
  t.notOk(sameS3Bucket(a, { ...a, endpoint: 'http://127.0.0.1:1' }), 'another endpoint');
  t.notOk(sameS3Bucket(a, { ...a, access_key: 'OTHER' }), 'other credentials');
  t.notOk(sameS3Bucket(a, { ...a, sse_customer_key: SSE_KEY }), 'another SSE-C key');
  t.equal(s3Provider.sameResource, sameS3Bucket);
});

t.test('against s3rver', { skip: skip ?? false }, async (t) => {
  t.test('storage class, ACL and SSE-C headers on the wire', async (t) => {
    const relay = await relayed(t);
    const fs = (await s3Provider.create(
      testOptions({ endpoint: relay.endpoint, storage_class: 'STANDARD_IA', acl: 'public-read', sse_customer_key: SSE_KEY }),
      scope,
    )) as S3Fs;
    t.teardown(() => removePrefix(fs.prefix));
    await writeFile(fs, '/a.txt', 'encrypted with a customer key');
    const put = relay.matching('PUT', `/${fs.prefix}a.txt`).at(-1);
    t.ok(put, 'the object was PUT');
    t.match(put?.headers, {
      'x-amz-storage-class': 'STANDARD_IA',
      'x-amz-acl': 'public-read',
      'x-amz-server-side-encryption-customer-algorithm': 'AES256',
      'x-amz-server-side-encryption-customer-key': b64(SSE_KEY),
      'x-amz-server-side-encryption-customer-key-md5': md5b64(SSE_KEY),
    });
    t.equal((await readFile(fs, '/a.txt')).toString(), 'encrypted with a customer key');
    const get = relay.matching('GET', `/${fs.prefix}a.txt`).at(-1);
    t.match(get?.headers, { 'x-amz-server-side-encryption-customer-key': b64(SSE_KEY) }, 'reads send the customer key too');

    await fs.copy('/a.txt', '/b.txt');
    const copy = relay.matching('PUT', `/${fs.prefix}b.txt`).at(-1);
    t.match(
      copy?.headers,
      {
        'x-amz-copy-source': `${BUCKET}/${fs.prefix}a.txt`,
        'x-amz-storage-class': 'STANDARD_IA',
        'x-amz-acl': 'public-read',
        'x-amz-copy-source-server-side-encryption-customer-key': b64(SSE_KEY),
        'x-amz-server-side-encryption-customer-key': b64(SSE_KEY),
      },
      'a server-side copy keeps class, ACL and key',
    );

    await writeFile(fs, '/big.bin', Buffer.alloc(6 * 1024 * 1024, 7), { size: 6 * 1024 * 1024 });
    const create = relay.requests.find((r) => r.method === 'POST' && r.url.includes(`/${fs.prefix}big.bin?uploads`));
    t.match(
      create?.headers,
      { 'x-amz-storage-class': 'STANDARD_IA', 'x-amz-acl': 'public-read', 'x-amz-server-side-encryption-customer-algorithm': 'AES256' },
      'multipart uploads too',
    );
    const parts = relay.requests.filter((r) => r.method === 'PUT' && r.url.includes(`/${fs.prefix}big.bin?`) && r.url.includes('partNumber='));
    t.ok(parts.length >= 2, `${parts.length} parts`);
    t.ok(
      parts.every((p) => p.headers['x-amz-server-side-encryption-customer-key'] === b64(SSE_KEY)),
      'every part carries the customer key',
    );
    await fs.close();
  });

  t.test('role_arn: credentials assumed through an STS wire-protocol stub', async (t) => {
    // A local stub of the AWS STS query protocol: form-encoded POST, XML answer
    // (https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html).
    const calls: { params: URLSearchParams; authorization: string }[] = [];
    const sts = await startFormStub(t, (params, req) => {
      calls.push({ params, authorization: String(req.headers.authorization ?? '') });
      if (params.get('Action') !== 'AssumeRole') {
        return {
          status: 400,
          contentType: 'text/xml',
          body: '<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code><Message>only AssumeRole</Message></Error></ErrorResponse>',
        };
      }
      return {
        status: 200,
        contentType: 'text/xml',
        body: `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <Credentials>
      <AccessKeyId>S3RVER</AccessKeyId>
      <SecretAccessKey>S3RVER</SecretAccessKey>
      <SessionToken>stub-session-token</SessionToken>
      <Expiration>${new Date(Date.now() + 3600_000).toISOString()}</Expiration>
    </Credentials>
    <AssumedRoleUser>
      <AssumedRoleId>AROAFERRYTEST:${params.get('RoleSessionName')}</AssumedRoleId>
      <Arn>arn:aws:sts::123456789012:assumed-role/ferry-test/${params.get('RoleSessionName')}</Arn>
    </AssumedRoleUser>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ResponseMetadata>
</AssumeRoleResponse>`,
      };
    });
    setEnvForTest(t, 'AWS_ENDPOINT_URL_STS', sts.url);
    const relay = await relayed(t);
    const role = 'arn:aws:iam::123456789012:role/ferry-test';
    // the static keys only sign the AssumeRole call; s3rver knows only the assumed key id
    const fs = (await s3Provider.create(
      testOptions({ endpoint: relay.endpoint, role_arn: role, access_key: 'BASEKEY', access_secret: 'base-secret' }),
      scope,
    )) as S3Fs;
    t.teardown(() => removePrefix(fs.prefix));
    await writeFile(fs, '/as-role.txt', 'written with assumed credentials');
    t.equal((await readFile(fs, '/as-role.txt')).toString(), 'written with assumed credentials');
    t.equal(calls.length, 1, 'one AssumeRole call (the credentials are cached)');
    t.match(Object.fromEntries(calls[0]!.params), {
      Action: 'AssumeRole',
      Version: '2011-06-15',
      RoleArn: role,
      RoleSessionName: 'ferry-alice',
      DurationSeconds: '3600',
    });
    t.match(calls[0]!.authorization, /Credential=BASEKEY\//, 'AssumeRole is signed with the static keys');
    const put = relay.matching('PUT', `/${fs.prefix}as-role.txt`).at(-1);
    t.match(put?.headers, { 'x-amz-security-token': 'stub-session-token', authorization: /Credential=S3RVER\// }, 'S3 requests use the assumed credentials');
    await fs.close();
  });

  t.test('a server that accepts and never answers: an FsError, no hang', async (t) => {
    const stalled = await new StalledServer('silent').start();
    t.teardown(() => stalled.stop());
    const fs = await createS3Provider({ connect_timeout: 1, idle_timeout: 0.3 }).create(testOptions({ endpoint: stalled.endpoint }), scope);
    await expectFsError(t, fs.stat('/x'), FsErrorCode.Unavailable, 'the request timed out');
    t.ok(stalled.accepted >= 1, 'the client did connect');
    await fs.close();
  });

  t.test('a download that stops mid-body fails after the idle timeout', async (t) => {
    const stalled = await new StalledServer('mid-body', { bodySize: 1 << 20, sentBytes: 4096, headers: { ETag: '"abc"' } }).start();
    t.teardown(() => stalled.stop());
    const fs = await createS3Provider({ idle_timeout: 0.3 }).create(testOptions({ endpoint: stalled.endpoint }), scope);
    const { error: failure, received } = await readUntilError(await fs.openRead('/big.bin'));
    t.match(failure, { code: 'UNAVAILABLE' }, 'the stalled body fails instead of hanging');
    t.ok(received > 0 && received < 1 << 20, `part of the body arrived first (${received} bytes)`);
    await fs.close();
  });

  t.test('download_part_max_time covers the first part', async (t) => {
    const stalled = await new StalledServer('mid-body', {
      bodySize: 1 << 20,
      sentBytes: 4096,
      headers: { ETag: '"abc"', 'Content-Range': `bytes 0-${(1 << 20) - 1}/${4 << 20}` },
    }).start();
    t.teardown(() => stalled.stop());
    // no idle limit to speak of: only the part time limit can end this read
    const fs = await createS3Provider({ idle_timeout: 3600 }).create(
      testOptions({ endpoint: stalled.endpoint, download_concurrency: 2, download_part_size: 1, download_part_max_time: 1 }),
      scope,
    );
    const { error: failure } = await readUntilError(await fs.openRead('/big.bin'));
    t.match(failure, { code: 'UNAVAILABLE', message: /download_part_max_time/ });
    await fs.close();
  });

  t.test('moves and copies between mounts of one bucket are server-side copies', async (t) => {
    const relay = await relayed(t);
    const run = randomPrefix('same');
    const app = await createTestApp({ plugins: [{ name: '@ferry/fs-s3' }] });
    t.teardown(async () => {
      await app.close();
      await removePrefix(run);
    });
    const s3config = (prefix: string, endpoint = relay.endpoint) => ({
      ...testOptions({ endpoint, key_prefix: `${run}${prefix}/` }),
      access_secret: { status: 'Plain', payload: 'S3RVER' },
    });
    const { call } = await createUserWithFolders(t, app, {
      home: { provider: 1, s3config: s3config('home') },
      folders: {
        same: { provider: 1, s3config: s3config('same') },
        // the same bucket without the relay: another endpoint, so streamed
        direct: { provider: 1, s3config: s3config('direct', S3_ENDPOINT) },
      },
    });
    const q = encodeURIComponent;
    const key = (k: string) => `/${BUCKET}/${run}${k}`;
    await call('POST', `/api/v2/user/files/upload?path=${q('/a.txt')}&mkdir_parents=true`, Buffer.from('copied by the server'));

    relay.requests.length = 0;
    await call('PATCH', `/api/v2/user/files?path=${q('/a.txt')}&target=${q('/same/a.txt')}`);
    const copy = relay.matching('PUT', key('same/a.txt'));
    t.equal(copy.length, 1, 'one request wrote the target');
    t.equal(copy[0]?.headers['x-amz-copy-source'], `${BUCKET}/${run}home/a.txt`, 'a CopyObject from the home key');
    t.same(relay.matching('GET', key('home/a.txt')), [], 'the bytes were never read through Ferry');
    t.equal(relay.matching('DELETE', key('home/a.txt')).length, 1, 'then the source key deleted');

    await call('POST', `/api/v2/user/file-actions/copy?path=${q('/same/a.txt')}&target=${q('/b.txt')}`);
    t.equal(relay.matching('PUT', key('home/b.txt'))[0]?.headers['x-amz-copy-source'], `${BUCKET}/${run}same/a.txt`, 'copies are CopyObject too');

    relay.requests.length = 0;
    await call('PATCH', `/api/v2/user/files?path=${q('/same/a.txt')}&target=${q('/direct/a.txt')}`);
    t.equal(relay.matching('GET', key('same/a.txt')).length, 1, 'another endpoint: the source was read through Ferry');
    t.notOk(
      relay.requests.some((r) => r.headers['x-amz-copy-source']),
      'no CopyObject',
    );
  });
});

t.test('a listing asks S3 for the next page only when its consumer wants it', { skip: skip ?? false }, async (t) => {
  const relay = await relayed(t);
  const fs = (await s3Provider.create(testOptions({ endpoint: relay.endpoint }), scope)) as S3Fs;
  t.teardown(() => removePrefix(fs.prefix));
  for (const name of ['a', 'b', 'c', 'd', 'e']) await writeFile(fs, `/dir/${name}.txt`, name);
  const pages = () => relay.matching('GET', 'list-type=2').filter((r) => r.url.includes('max-keys=2'));
  const it = fs.list('/dir', { pageSize: 2 })[Symbol.asyncIterator]();
  t.same(pages(), [], 'nothing is asked before the first page is wanted');
  const names: string[] = [];
  for (let i = 1; i <= 3; i++) {
    const page = await it.next();
    t.notOk(page.done, `page ${i}`);
    names.push(...(page.value as { name: string }[]).map((e) => e.name));
    t.equal(pages().length, i, `${i} ListObjectsV2 request(s) once page ${i} is read`);
  }
  t.ok((await it.next()).done, 'the listing ends after the last page');
  t.equal(pages().length, 3, 'no request after the last page');
  t.same(names, ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']);
  const tokens = pages().map((r) => new URL(r.url, 'http://x').searchParams.get('continuation-token'));
  t.equal(tokens[0], null, 'the first request has no continuation token');
  t.ok(tokens[1] && tokens[2] && tokens[1] !== tokens[2], "later requests carry the previous page's token");
});

t.test('an upload holds at most upload_concurrency + 1 parts: the writer waits while they are all in flight', { skip: skip ?? false }, async (t) => {
  const MiB = 1024 * 1024;
  const relay = await relayed(t);
  // UploadPart requests never get an answer: every part sent stays in flight
  relay.stall = (method, url) => method === 'PUT' && url.includes('partNumber=');
  const fs = (await s3Provider.create(testOptions({ endpoint: relay.endpoint, upload_part_size: 5, upload_concurrency: 1 }), scope)) as S3Fs;
  t.teardown(() => removePrefix(fs.prefix));
  const h = await fs.openWrite('/big.bin', { size: 40 * MiB });
  const chunk = Buffer.alloc(64 * 1024, 7);
  let accepted = 0;
  let stop = false;
  const writing = (async () => {
    while (!stop && accepted < 40 * MiB) {
      await new Promise<void>((resolve, reject) => h.stream.write(chunk, (err) => (err ? reject(err) : resolve())));
      accepted += chunk.length;
    }
  })().catch(() => undefined);
  // two parts (10 MiB) fit in the buffers of a 5 MB x (1 + 1) upload: wait for them, then give the writer time to take more
  while (accepted < 10 * MiB) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 1000));
  t.ok(accepted <= 10 * MiB + 256 * 1024 + chunk.length, `the stream stopped accepting at ${accepted} bytes (2 parts + its 256 KiB buffer)`);
  stop = true;
  await h.abort();
  await writing;
  await t.rejects(h.done, { code: 'ABORTED' }, 'abort() ends the stalled upload');
  await t.rejects(fs.stat('/big.bin'), { code: 'NOT_FOUND' }, 'no object was created');
});
