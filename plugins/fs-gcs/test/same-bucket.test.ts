import t from 'tap';
import { createTestApp } from '@ferry/core/testing';
import { createUserWithFolders } from '@ferry/testkit';
import { gcsProvider, sameGcsBucket } from '../src/index.js';
import { BUCKET, RecordingRelay, randomPrefix, requireGcsServer, serviceAccountB64 } from './fixtures/gcs-server.js';

// Moves and copies between two mounts of one bucket (same identity) are server-side
// object copies: seen on the wire by a recording relay in front of the emulator.

t.test('sameGcsBucket()', async (t) => {
  const a = { bucket: 'b', credentials: serviceAccountB64(), key_prefix: 'a/' };
  t.ok(sameGcsBucket(a, { ...a, key_prefix: 'b/' }), 'the key prefix does not matter');
  t.notOk(sameGcsBucket(a, { ...a, bucket: 'other' }));
  t.notOk(sameGcsBucket(a, { ...a, credentials: serviceAccountB64({ client_email: 'other@demo-ferry.iam.gserviceaccount.com' }) }), 'another identity');
  t.ok(sameGcsBucket({ bucket: 'b', automatic_credentials: 1 }, { bucket: 'b', automatic_credentials: 1 }), 'both on Application Default Credentials');
  t.notOk(sameGcsBucket(a, { bucket: 'b', automatic_credentials: 1 }));
  t.equal(gcsProvider().sameResource, sameGcsBucket);
});

t.test('through the core, against the emulator', async (t) => {
  if (!(await requireGcsServer(t))) return;
  const relay = await new RecordingRelay().start();
  t.teardown(() => relay.stop());
  const app = await createTestApp({ plugins: [{ name: '@ferry/fs-gcs', config: { endpoint: relay.endpoint } }] });
  t.teardown(() => app.close());
  const run = randomPrefix('same');
  const gcsconfig = (prefix: string, credentials = serviceAccountB64()) => ({
    bucket: BUCKET,
    credentials: { status: 'Plain', payload: credentials },
    key_prefix: `${run}/${prefix}/`,
  });
  const { call } = await createUserWithFolders(t, app, {
    home: { provider: 2, gcsconfig: gcsconfig('home') },
    folders: {
      same: { provider: 2, gcsconfig: gcsconfig('same') },
      // another service account: not the same identity, so streamed
      other: { provider: 2, gcsconfig: gcsconfig('other', serviceAccountB64({ client_email: 'other@demo-ferry.iam.gserviceaccount.com' })) },
    },
  });
  const q = encodeURIComponent;
  const copies = () => relay.requests.filter((r) => r.method === 'POST' && /\/(rewriteTo|copyTo)\//.test(r.url));
  const mediaReads = () => relay.requests.filter((r) => r.method === 'GET' && r.url.includes('alt=media'));
  await call('POST', `/api/v2/user/files/upload?path=${q('/a.txt')}&mkdir_parents=true`, Buffer.from('copied by the server'));

  relay.requests.length = 0;
  await call('PATCH', `/api/v2/user/files?path=${q('/a.txt')}&target=${q('/same/a.txt')}`);
  t.equal(copies().length, 1, 'one server-side copy');
  t.match(decodeURIComponent(copies()[0]?.url ?? ''), `${run}/home/a.txt`, 'from the home key');
  t.match(decodeURIComponent(copies()[0]?.url ?? ''), `${run}/same/a.txt`, 'to the folder key');
  t.same(mediaReads(), [], 'the bytes were never read through Ferry');

  relay.requests.length = 0;
  await call('POST', `/api/v2/user/file-actions/copy?path=${q('/same/a.txt')}&target=${q('/b.txt')}`);
  t.equal(copies().length, 1, 'copies between the mounts are server side too');

  relay.requests.length = 0;
  await call('PATCH', `/api/v2/user/files?path=${q('/same/a.txt')}&target=${q('/other/a.txt')}`);
  t.same(copies(), [], 'another identity: no server-side copy');
  t.equal(mediaReads().length, 1, 'the source was streamed through Ferry');
});
