import t from 'tap';
import { manifestTests } from '@ferry/testkit';
import type { FsProviderDef, PluginContext } from '@ferry/core';
import plugin, { azBlobProvider } from '../src/index.js';
import { AzBlobFs } from '../src/lib.js';

manifestTests(t, plugin, '@ferry/fs-azblob', import.meta.url);

t.test('register()', async (t) => {
  const registered: FsProviderDef[] = [];
  const ctx = {
    name: plugin.name,
    registerFsProvider: (def: FsProviderDef) => registered.push(def),
    registerActionType: () => t.fail('no action types'),
  } as unknown as PluginContext;
  await plugin.register(ctx, {});
  t.equal(registered.length, 1);
  const def = registered[0]!;
  t.equal(def, azBlobProvider as unknown as FsProviderDef);
  t.equal(def.provider, 3);
  t.equal(def.key, 'azblob');
  t.equal(def.configKey, 'azblobconfig');
  t.same(def.secretFields, ['account_key', 'sas_url']);
  t.same(def.placeholderFields, ['key_prefix']);
  t.same(def.capabilities, {
    rangeRead: true,
    atomicRename: false,
    serverSideCopy: true,
    realDirectories: false,
    settableMtime: false,
    atomicUpload: false,
  });
  t.same(def.describe?.({ container: 'c', account_name: 'acct', account_key: 'secret' }), {
    bucket: 'c',
    endpoint: 'https://acct.blob.core.windows.net',
  });
  t.same(
    def.describe?.({ container: 'c', sas_url: 'https://acct.blob.core.windows.net/c?sv=1&sig=secret' }),
    {
      bucket: 'c',
      endpoint: 'https://acct.blob.core.windows.net/c',
    },
    'a SAS URL is described without its token',
  );
});

t.test('create()', async (t) => {
  const fs = await azBlobProvider.create({ container: 'c', key_prefix: '/users//alice/', use_emulator: true }, { username: 'alice', dataDir: '/tmp' });
  t.ok(fs instanceof AzBlobFs);
  t.equal((fs as AzBlobFs).prefix, 'users/alice/');
  t.equal((fs as AzBlobFs).key('/x'), 'users/alice/x');
  const sas = (await azBlobProvider.create(
    { container: 'c', sas_url: 'http://127.0.0.1:10000/devstoreaccount1/c?sv=2020&sig=x' },
    { username: 'alice', dataDir: '/tmp' },
  )) as AzBlobFs;
  t.equal(sas.container.containerName, 'c', 'container-level SAS URL');
  await t.rejects(
    async () => azBlobProvider.create({ container: 'c', sas_url: 'not a url ?sig=x' }, { username: 'alice', dataDir: '/tmp' }),
    { code: 'INVALID', message: /sas_url must be an http/ },
    'a malformed SAS URL is an FsError, not a TypeError',
  );
  t.same(azBlobProvider.describe?.({ container: 'c', sas_url: 'not a url' }), { bucket: 'c' });
  await fs.close();
});
