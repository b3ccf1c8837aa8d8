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
