import t from 'tap';
import { manifestTests } from '@ferry/testkit';
import type { FsProviderDef, PluginContext } from '@ferry/core';
import plugin, { s3Provider } from '../src/index.js';
import { S3Fs } from '../src/lib.js';

manifestTests(t, plugin, '@ferry/fs-s3', import.meta.url);

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
  t.equal(def, s3Provider as unknown as FsProviderDef);
  t.equal(def.provider, 1);
  t.equal(def.key, 's3');
  t.equal(def.configKey, 's3config');
  t.same(def.secretFields, ['access_secret', 'sse_customer_key']);
  t.same(def.placeholderFields, ['key_prefix']);
  t.notOk(def.requiresLocalRoot);
  t.same(def.capabilities, {
    rangeRead: true,
    atomicRename: false,
    serverSideCopy: true,
    realDirectories: false,
    settableMtime: false,
    atomicUpload: false,
  });
  t.same(def.describe?.({ bucket: 'b', endpoint: 'http://e' }), { bucket: 'b', endpoint: 'http://e' });
  t.error(def.optionsSchema.validate({ bucket: 'b' }).error);
});

t.test('create()', async (t) => {
  const fs = await s3Provider.create(
    { bucket: 'b', key_prefix: '/users/alice', access_key: 'a', access_secret: 's', endpoint: 'http://127.0.0.1:1' },
    { username: 'alice', dataDir: '/tmp' },
  );
  t.ok(fs instanceof S3Fs);
  t.equal((fs as S3Fs).prefix, 'users/alice/', 'the key prefix is normalised');
  t.equal((fs as S3Fs).key('/x/y'), 'users/alice/x/y');
  t.equal(typeof fs.copy, 'function', 'copy() present: serverSideCopy');
  t.equal(fs.chtimes, undefined, 'no chtimes(): settableMtime is false');
  await fs.close();
});
