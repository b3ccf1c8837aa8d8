import t from 'tap';
import { readFileSync } from 'node:fs';
import type { FsProviderDef, PluginContext } from '@ferry/core';
import manifest, { SFTP_PROVIDER, sftpOptionsSchema, sftpPluginConfigSchema } from '../src/index.js';
import { clientKey } from './fixtures/sftp-server.js';

const plain = (payload: string) => ({ status: 'Plain', payload });
const base = { endpoint: 'sftp.example.com:22', username: 'alice', password: plain('pw') };

function refusal(options: Record<string, unknown>): string {
  const { error } = sftpOptionsSchema.validate(options);
  return error?.message ?? '';
}

t.test('optionsSchema', async (t) => {
  t.test('accepts a minimal config and fills defaults', async (t) => {
    const { value, error } = sftpOptionsSchema.validate(base);
    t.error(error);
    t.match(value, { prefix: '', fingerprints: [], buffer_size: 0, disable_concurrent_reads: false, equality_check_mode: 0 });
  });

  t.test('refuses a missing or malformed endpoint', async (t) => {
    t.match(refusal({ ...base, endpoint: undefined }), /"endpoint" is required: host:port/);
    t.match(refusal({ ...base, endpoint: '' }), /"endpoint" is required/);
    t.match(refusal({ ...base, endpoint: 'sftp.example.com' }), /"endpoint" must be host:port, e.g. sftp.example.com:22 \(got "sftp.example.com"\)/);
    t.match(refusal({ ...base, endpoint: 'sftp://host:22' }), /must be host:port/);
    t.match(refusal({ ...base, endpoint: 'host:70000' }), /port must be between 1 and 65535/);
    t.equal(refusal({ ...base, endpoint: '[::1]:2222' }), '', 'IPv6 literal accepted');
  });

  t.test('refuses a missing username', async (t) => {
    t.match(refusal({ ...base, username: undefined }), /"username" is required/);
    t.match(refusal({ ...base, username: '  ' }), /"username" is required/);
  });

  t.test('requires a password or a private key', async (t) => {
    t.match(refusal({ ...base, password: undefined }), /set "password" and\/or "private_key"/);
    t.match(refusal({ ...base, password: plain('') }), /set "password" and\/or "private_key"/);
    t.equal(refusal({ ...base, password: { status: 'AES-256-GCM', payload: 'xx', key: 'k' } }), '', 'encrypted secret kept');
    t.match(refusal({ ...base, password: 42 }), /"password" must be a Secret object/);
    t.match(refusal({ ...base, key_passphrase: plain('x') }), /"private_key" is empty/);
  });

  t.test('checks a cleartext private key at save time', async (t) => {
    t.match(refusal({ ...base, password: undefined, private_key: plain('not a key') }), /"private_key" cannot be used/);
    t.equal(refusal({ ...base, password: undefined, private_key: plain(clientKey()) }), '', 'the test client key parses');
  });

  t.test('validates fingerprints, buffer_size, equality_check_mode and prefix', async (t) => {
    t.match(refusal({ ...base, fingerprints: ['MD5:aa:bb'] }), /SHA256 host key fingerprint as ssh-keygen -l prints it/);
    t.equal(refusal({ ...base, fingerprints: ['SHA256:' + 'A'.repeat(43)] }), '');
    t.match(refusal({ ...base, buffer_size: 17 }), /"buffer_size" is in MB, between 0 and 16/);
    t.match(refusal({ ...base, buffer_size: -1 }), /between 0 and 16/);
    t.match(refusal({ ...base, equality_check_mode: 2 }), /"equality_check_mode" must be one of \[0, 1\]/);
    t.match(refusal({ ...base, prefix: 'a/../b' }), /"prefix" must not contain ".." segments/);
    t.equal(refusal({ ...base, prefix: '/srv/%username%' }), '', 'placeholders and absolute prefixes accepted');
    t.match(refusal({ ...base, unknown_key: 1 }), /"unknown_key" is not allowed/);
  });
});

t.test('plugin config schema', async (t) => {
  t.match(sftpPluginConfigSchema.validate({}).value, { max_connections: 8, idle_timeout: 60, connect_timeout: 20 });
  t.match(sftpPluginConfigSchema.validate({ max_connections: 0 }).error?.message, /max_connections/);
});

t.test('manifest', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
  t.equal(manifest.name, '@ferry/fs-sftp');
  t.equal(manifest.name, pkg.name);
  t.equal(manifest.version, pkg.version);
  t.equal(manifest.apiVersion, 1);
  const registered: FsProviderDef[] = [];
  const ctx = {
    logger: { child: () => ({ debug: () => undefined }) },
    registerFsProvider: (d: FsProviderDef) => registered.push(d),
  } as unknown as PluginContext;
  await manifest.register(ctx, sftpPluginConfigSchema.validate({}).value!);
  t.equal(registered.length, 1);
  const def = registered[0]!;
  t.match(def, { provider: SFTP_PROVIDER, key: 'sftp', configKey: 'sftpconfig', placeholderFields: ['prefix'] });
  t.equal(def.provider, 5);
  t.same(def.secretFields, ['password', 'private_key', 'key_passphrase']);
  t.same(def.describe?.({ ...base }), { endpoint: 'sftp.example.com:22' });
  t.match(def.capabilities, { atomicUpload: true, atomicRename: true, rangeRead: true, realDirectories: true });
  await manifest.teardown?.();
});
