import 'reflect-metadata';
import t from 'tap';
import { pino } from 'pino';
import { FsFactory } from '../../src/vfs/fs-factory.js';
import { setLogLevel, trackLogLevel, type Logger } from '../../src/logger.js';
import type { PluginRegistry } from '../../src/plugins/registry.js';
import type { FsProviderDef } from '../../src/plugins/manifest.js';
import type { SecretsService } from '../../src/secrets/secret.js';
import type { FerryConfig } from '../../src/config/schema.js';
import type { StoredFilesystem } from '../../src/data/entities/index.js';
import type { Fs, FsScope } from '../../src/fs/fs.contract.js';

// FsFactory.create (core/src/vfs/fs-factory.ts): the scope a provider gets,
// and the logger in it: one child per user and provider, kept across the
// filesystems a session creates on every request, still reached by
// setLogLevel.

t.test('filesystems of one user and provider share a logger that follows the level', async (t) => {
  const scopes: FsScope[] = [];
  const def = {
    provider: 0,
    key: 'test',
    configKey: 'testconfig',
    capabilities: {},
    create: (_options: unknown, scope: FsScope) => {
      scopes.push(scope);
      return {} as Fs;
    },
  } as unknown as FsProviderDef;
  const registry = { fsProvider: (n: number) => (n === 0 || n === 9 ? { ...def, provider: n } : undefined) } as unknown as PluginRegistry;
  const root = pino({ level: 'info' }, { write: () => undefined }) as unknown as Logger;
  trackLogLevel(root);
  const factory = new FsFactory(registry, {} as SecretsService, { common: { data_dir: '/data' } } as FerryConfig, root);
  const local = { provider: 0 } as StoredFilesystem;
  await factory.create(local, '/home/a', { username: 'alice' }, 'c1');
  await factory.create(local, '/home/a', { username: 'alice' }, 'c2');
  await factory.create(local, '/home/b', { username: 'bob' }, 'c3');
  await factory.create({ provider: 9 } as StoredFilesystem, '/home/a', { username: 'alice' }, 'c4');
  const [a1, a2, b, other] = scopes.map((s) => s.logger as Logger);
  t.equal(a1, a2, "the same logger for a user's filesystems of one provider");
  t.not(a1, b, 'another user, another logger');
  t.not(a1, other, 'another provider, another logger');
  t.match(a1!.bindings(), { user: 'alice', provider: 0 });
  t.match(b!.bindings(), { user: 'bob', provider: 0 });
  t.match(other!.bindings(), { user: 'alice', provider: 9 });
  t.same(
    scopes.map((s) => [s.username, s.root, s.connectionId, s.dataDir]),
    [
      ['alice', '/home/a', 'c1', '/data'],
      ['alice', '/home/a', 'c2', '/data'],
      ['bob', '/home/b', 'c3', '/data'],
      ['alice', '/home/a', 'c4', '/data'],
    ],
    'the rest of the scope is per filesystem',
  );
  setLogLevel(root, 'debug');
  t.equal(a1!.level, 'debug', 'a kept logger follows the level set at run time');
  await factory.create(local, '/home/a', { username: 'alice' }, 'c5');
  t.equal(scopes[4]!.logger, a1, 'and is handed out again');
  t.equal((scopes[4]!.logger as Logger).level, 'debug');
});

// The options a provider gets: made once per stored filesystem object and
// owner (secrets decrypted, placeholders interpolated), frozen, the same
// object for every filesystem a session creates from them; new objects (an
// account changed: the account cache holds new ones) are made again.
t.test('options are made once per stored filesystem object and owner, frozen', async (t) => {
  const seen: unknown[] = [];
  const def = {
    provider: 0,
    key: 'test',
    configKey: 'testconfig',
    capabilities: {},
    secretFields: ['password'],
    placeholderFields: ['prefix'],
    create: (options: unknown) => {
      seen.push(options);
      return {} as Fs;
    },
    describe: (options: { prefix: string }) => ({ bucket: options.prefix }),
  } as unknown as FsProviderDef;
  const registry = { fsProvider: () => def } as unknown as PluginRegistry;
  let decrypts = 0;
  let failNext = false;
  const secrets = {
    decrypt: async (v: { payload: string }) => {
      decrypts++;
      if (failNext) {
        failNext = false;
        throw new Error('cannot decrypt');
      }
      return `plain-${v.payload}`;
    },
  } as unknown as SecretsService;
  const root = pino({ level: 'silent' }) as unknown as Logger;
  const factory = new FsFactory(registry, secrets, { common: { data_dir: '/data' } } as FerryConfig, root);
  const secret = { status: 'Secret', payload: 'p1' };
  const stored = () => ({ provider: 0, testconfig: { prefix: 'in/%username%', password: secret, nested: { list: [1, 2] } } }) as unknown as StoredFilesystem;
  const fs1 = stored();
  await factory.create(fs1, '/h', { username: 'alice' });
  await factory.create(fs1, '/h', { username: 'alice' });
  t.equal(seen[0], seen[1], 'the same options object for the same stored filesystem and owner');
  t.equal(decrypts, 1, 'its secret decrypted once');
  t.same(seen[0], { prefix: 'in/alice', password: 'plain-p1', nested: { list: [1, 2] } }, 'decrypted and interpolated');
  t.ok(Object.isFrozen(seen[0]), 'frozen');
  t.ok(Object.isFrozen((seen[0] as { nested: { list: number[] } }).nested.list), 'nested objects and arrays too');
  t.same(await factory.describe(fs1, { username: 'alice' }), { bucket: 'in/alice' }, 'describe() reads the same options');
  t.equal(decrypts, 1, 'without decrypting again');
  t.same((fs1 as unknown as { testconfig: { password: unknown } }).testconfig.password, secret, 'the stored filesystem object is left as it was');
  t.notOk(Object.isFrozen(fs1), 'and not frozen');

  await factory.create(fs1, '/h', { username: 'bob' });
  t.same(seen[2], { prefix: 'in/bob', password: 'plain-p1', nested: { list: [1, 2] } }, 'another owner: its own placeholders');
  await factory.create(fs1, '/h', { username: 'alice', role: 'r' });
  t.not(seen[3], seen[0], 'another role: made again (placeholders may name it)');
  t.equal(decrypts, 3);

  const fs2 = stored();
  await factory.create(fs2, '/h', { username: 'alice' });
  t.not(seen[4], seen[0], 'a new stored filesystem object (the account changed): made again');
  t.equal(decrypts, 4);

  const fs3 = stored();
  failNext = true;
  await t.rejects(factory.create(fs3, '/h', { username: 'alice' }), /cannot decrypt/, 'a failure is answered');
  await factory.create(fs3, '/h', { username: 'alice' });
  t.same(seen[5], { prefix: 'in/alice', password: 'plain-p1', nested: { list: [1, 2] } }, 'and not kept: the next request tries again');
});
