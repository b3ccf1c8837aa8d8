import t from 'tap';
import { ContainerSASPermissions, StorageSharedKeyCredential, generateBlobSASQueryParameters } from '@azure/storage-blob';
import { FsErrorCode } from '@ferry/core';
import { createTestApp } from '@ferry/core/testing';
import { StalledServer, createUserWithFolders, expectFsError, readFile, readUntilError, writeFile } from '@ferry/testkit';
import { createAzBlobProvider, sameAzContainer, type AzBlobFs } from '../src/index.js';
import { EMULATOR_ACCOUNT, EMULATOR_KEY } from '../src/config.schema.js';
import { AZ_ENDPOINT, CONTAINER, azUnavailable, createTestFs, randomPrefix, rawContainer, scope, testOptions } from './fixtures/server.js';

// Options exercised against Azurite (not only their schemas): a live SAS URL, the
// access tier read back from the server, server-side moves between mounts of one
// container, and the time limits against a server that stalls.

const skip = await azUnavailable();
const cred = new StorageSharedKeyCredential(EMULATOR_ACCOUNT, EMULATOR_KEY);

/** A container SAS URL signed with Azurite's development account key. */
function sasUrl(permissions: string, tamper = false): string {
  const sas = generateBlobSASQueryParameters(
    {
      containerName: CONTAINER,
      permissions: ContainerSASPermissions.parse(permissions),
      startsOn: new Date(Date.now() - 60_000),
      expiresOn: new Date(Date.now() + 3600_000),
    },
    cred,
  ).toString();
  const url = `${AZ_ENDPOINT}/${EMULATOR_ACCOUNT}/${CONTAINER}?${sas}`;
  return tamper ? url.replace(/sig=[^&]+/, 'sig=AAAA') : url;
}

t.test('sameAzContainer()', async (t) => {
  const a = testOptions({ key_prefix: 'a/' });
  t.ok(sameAzContainer(a, { ...a, key_prefix: 'b/' }), 'the key prefix does not matter');
  t.notOk(sameAzContainer(a, { ...a, container: 'other' }));
  t.notOk(sameAzContainer(a, { ...a, account_key: Buffer.from('another key').toString('base64') }), 'other credentials');
  t.notOk(sameAzContainer(a, { container: CONTAINER, sas_url: 'https://acct.blob.core.windows.net/ferry-test?sig=x' }));
});

t.test('against Azurite', { skip: skip ?? false }, async (t) => {
  t.test('a live SAS URL (container SAS from the development key)', async (t) => {
    const prefix = randomPrefix('sas');
    const fs = (await createAzBlobProvider().create({ container: CONTAINER, sas_url: sasUrl('racwdl'), key_prefix: prefix }, scope)) as AzBlobFs;
    await writeFile(fs, '/dir/a.txt', 'through a SAS');
    t.equal((await readFile(fs, '/dir/a.txt')).toString(), 'through a SAS');
    await fs.rename('/dir/a.txt', '/dir/b.txt');
    t.ok(await rawContainer().getBlobClient(`${prefix}dir/b.txt`).exists(), 'the blob is where the SAS client put it');
    await fs.remove('/dir', { recursive: true });

    const readOnly = (await createAzBlobProvider().create({ container: CONTAINER, sas_url: sasUrl('rl'), key_prefix: prefix }, scope)) as AzBlobFs;
    await expectFsError(t, writeFile(readOnly, '/nope.txt', 'x'), FsErrorCode.Permission, 'a read-only SAS cannot write');
    const forged = (await createAzBlobProvider().create({ container: CONTAINER, sas_url: sasUrl('racwdl', true), key_prefix: prefix }, scope)) as AzBlobFs;
    await expectFsError(t, forged.stat('/dir-or-file'), FsErrorCode.Permission, 'a SAS with a wrong signature is refused by the server');
  });

  t.test('access_tier is set on uploads and copies (read back with getProperties)', async (t) => {
    const fs = await createTestFs({ access_tier: 'Cool' });
    t.teardown(() => fs.remove('/', { recursive: true }).catch(() => undefined));
    await writeFile(fs, '/cool.txt', 'cool data');
    const props = await rawContainer().getBlobClient(`${fs.prefix}cool.txt`).getProperties();
    t.equal(props.accessTier, 'Cool', 'uploaded in the Cool tier');
    await fs.copy('/cool.txt', '/copy.txt');
    t.equal((await rawContainer().getBlobClient(`${fs.prefix}copy.txt`).getProperties()).accessTier, 'Cool', 'copied in the Cool tier');
    const hot = await createTestFs({ access_tier: 'Hot', key_prefix: fs.prefix });
    await writeFile(hot, '/hot.txt', 'hot data');
    t.equal((await rawContainer().getBlobClient(`${fs.prefix}hot.txt`).getProperties()).accessTier, 'Hot');
  });

  t.test('a server that accepts and never answers: an FsError within the try timeout', async (t) => {
    const stalled = await new StalledServer('silent').start();
    t.teardown(() => stalled.stop());
    const provider = createAzBlobProvider({ try_timeout: 0.3 });
    const fs = await provider.create(testOptions({ endpoint: stalled.endpoint }), scope);
    await expectFsError(t, fs.stat('/x'), FsErrorCode.Unavailable, 'no hang: the request timed out');
    t.ok(stalled.accepted >= 1, 'the client did connect');
  });

  t.test('a download that stops mid-body fails after the idle timeout', async (t) => {
    const stalled = await new StalledServer('mid-body', {
      bodySize: 1 << 20,
      sentBytes: 4096,
      headers: { ETag: '"0x8DC0FFEE"', 'Last-Modified': new Date().toUTCString(), 'x-ms-blob-type': 'BlockBlob', 'Accept-Ranges': 'bytes' },
    }).start();
    t.teardown(() => stalled.stop());
    const fs = await createAzBlobProvider({ idle_timeout: 0.3, try_timeout: 5 }).create(testOptions({ endpoint: stalled.endpoint }), scope);
    const { error: failure, received } = await readUntilError(await fs.openRead('/big.bin'));
    t.match(failure, { code: FsErrorCode.Unavailable, message: /sent no data/ }, 'the stalled body fails instead of hanging');
    t.ok(received > 0 && received < 1 << 20, `part of the body arrived first (${received} bytes)`);
  });

  t.test('moves between mounts of one container are server-side copies', async (t) => {
    const run = randomPrefix('same');
    const app = await createTestApp({ plugins: [{ name: '@ferry/fs-azblob' }] });
    t.teardown(async () => {
      await app.close();
      for await (const b of rawContainer().listBlobsFlat({ prefix: run }))
        await rawContainer()
          .deleteBlob(b.name)
          .catch(() => undefined);
    });
    const keyed = (prefix: string) => ({ container: CONTAINER, endpoint: AZ_ENDPOINT, use_emulator: true, key_prefix: `${run}${prefix}/` });
    const { call } = await createUserWithFolders(t, app, {
      home: { provider: 3, azblobconfig: keyed('home') },
      folders: {
        same: { provider: 3, azblobconfig: keyed('same') },
        // the same container through a SAS URL: other credentials, so streamed
        sas: { provider: 3, azblobconfig: { container: CONTAINER, sas_url: { status: 'Plain', payload: sasUrl('racwdl') }, key_prefix: `${run}sas/` } },
      },
    });
    const q = encodeURIComponent;
    const props = (name: string) => rawContainer().getBlobClient(`${run}${name}`).getProperties();
    await call('POST', `/api/v2/user/files/upload?path=${q('/d/a.txt')}&mkdir_parents=true`, Buffer.from('copied by the server'));
    t.notOk((await props('home/d/a.txt')).copyId, 'an upload is no blob copy');

    await call('PATCH', `/api/v2/user/files?path=${q('/d/a.txt')}&target=${q('/same/a.txt')}`);
    const moved = await props('same/a.txt');
    t.ok(moved.copyId, 'same container and credentials: the blob was copied by the server (Copy Blob)');
    t.match(moved.copySource, /home\/d\/a\.txt/);
    t.notOk(await rawContainer().getBlobClient(`${run}home/d/a.txt`).exists(), 'the source is gone');

    await call('POST', `/api/v2/user/file-actions/copy?path=${q('/same/a.txt')}&target=${q('/c.txt')}`);
    t.ok((await props('home/c.txt')).copyId, 'copies between the mounts are server side too');

    await call('PATCH', `/api/v2/user/files?path=${q('/same/a.txt')}&target=${q('/sas/a.txt')}`);
    const streamed = await props('sas/a.txt');
    t.notOk(streamed.copyId, 'other credentials: streamed through Ferry (a plain upload)');
    t.equal((await rawContainer().getBlobClient(`${run}sas/a.txt`).downloadToBuffer()).toString(), 'copied by the server');
  });
});
