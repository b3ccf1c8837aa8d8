import { readFileSync } from 'node:fs';
import { readdir, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { silentLogger, type FsProviderDef, type PluginContext } from '@ferry/core';
import { readFile as readFsFile, writeFile as writeFsFile } from '@ferry/testkit';
import manifest, { CryptFs, cryptFsConfigSchema, cryptFsProvider } from '../src/index.js';

const plain = (payload: string) => ({ status: 'Plain', payload });
const base = t.testdir({});

t.test('manifest and provider', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  t.equal(manifest.name, '@ferry/fs-crypt');
  t.equal(manifest.version, pkg.version, 'version comes from package.json');
  t.equal(manifest.apiVersion, 1);
  t.match(cryptFsProvider, { provider: 4, key: 'crypt', configKey: 'cryptconfig', requiresLocalRoot: true });
  t.same(cryptFsProvider.secretFields, ['passphrase'], 'the passphrase is declared secret');
  const data = path.join(base, 'data');
  await mkdir(path.join(data, 'uploads-tmp'), { recursive: true });
  await writeFile(path.join(data, 'uploads-tmp', 'stale.upload'), 'x');
  const registered: FsProviderDef[] = [];
  const ctx = { name: manifest.name, logger: silentLogger(), config: {}, dataDir: data, registerFsProvider: (d: FsProviderDef) => registered.push(d) };
  await manifest.register(ctx as unknown as PluginContext, {});
  t.same(await readdir(path.join(data, 'uploads-tmp')), [], 'register() empties the temp area');
  t.equal(registered[0], cryptFsProvider, 'register() registers provider 4');
});

t.test('create()', async (t) => {
  const scope = { username: 'bob', root: path.join(base, 'bob'), dataDir: path.join(base, 'data') };
  t.match(await create({ passphrase: '' }, scope), { code: 'INVALID', message: /passphrase is empty/ }, 'an empty passphrase is refused');
  t.match(await create({}, scope), { code: 'INVALID' }, 'a missing passphrase is refused');
  t.match(await create({ passphrase: 'x' }, { ...scope, root: undefined }), { code: 'INVALID', message: /root directory/ }, 'a root is required');
  const fs = await cryptFsProvider.create({ passphrase: 'secret', write_buffer_size: 2 }, scope);
  t.ok(fs instanceof CryptFs, 'a decrypted string passphrase works');
  await writeFsFile(fs, '/a.txt', 'hello');
  const again = await cryptFsProvider.create({ passphrase: plain('secret') as never }, scope);
  t.equal((await readFsFile(again, '/a.txt')).toString(), 'hello', 'so does a Plain secret object');
});

async function create(options: Record<string, unknown>, scope: { username: string; root?: string; dataDir: string }): Promise<unknown> {
  try {
    await cryptFsProvider.create(options as never, scope);
    return undefined;
  } catch (err) {
    return err;
  }
}

t.test('options schema', async (t) => {
  const ok = cryptFsConfigSchema.validate({ passphrase: plain('p') });
  t.same(ok.value, { passphrase: plain('p'), read_buffer_size: 0, write_buffer_size: 0 }, 'defaults');
  t.equal(cryptFsConfigSchema.validate({ passphrase: { status: 'AES-256-GCM', payload: 'xx', key: 'k' } }).error, undefined, 'a stored secret is accepted');
  const refusals: [unknown, RegExp][] = [
    [{}, /passphrase is required/],
    [{ passphrase: plain('') }, /passphrase must not be empty/],
    [{ passphrase: 'a string' }, /passphrase must be a secret object/],
    [{ passphrase: { payload: 'no status' } }, /status.*required/],
    [{ passphrase: plain('p'), read_buffer_size: 11 }, /read_buffer_size must be between 0 and 10 MiB/],
    [{ passphrase: plain('p'), write_buffer_size: -2 }, /write_buffer_size must be between 0 and 10 MiB/],
    [{ passphrase: plain('p'), write_buffer_size: 2.5 }, /write_buffer_size must be a whole number/],
    [{ passphrase: plain('p'), key: 'k' }, /key is not a cryptconfig option/],
  ];
  for (const [value, message] of refusals) {
    const { error } = cryptFsConfigSchema.validate(value);
    t.match(error?.message, message, `${JSON.stringify(value)} refused: ${error?.message}`);
  }
  t.match(manifest.configSchema?.validate({ x: 1 }).error?.message, /not a setting of @ferry\/fs-crypt/, 'no server-wide settings');
});
