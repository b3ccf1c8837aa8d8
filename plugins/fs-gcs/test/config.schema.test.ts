import t from 'tap';
import { readFileSync } from 'node:fs';
import type { FsProviderDef, PluginContext } from '@ferry/core';
import manifest, { ALLOW_NON_SA_ENV, GCS_PROVIDER, gcsOptionsSchema, gcsPluginConfigSchema, gcsProvider } from '../src/index.js';
import { serviceAccountB64 } from './fixtures/gcs-server.js';

const plain = (payload: string) => ({ status: 'Plain', payload });
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64');
const base = { bucket: 'my-bucket', credentials: plain(serviceAccountB64()) };

function refusal(options: Record<string, unknown>): string {
  return gcsOptionsSchema.validate(options).error?.message ?? '';
}

t.test('optionsSchema', async (t) => {
  t.test('accepts service-account credentials and fills defaults', async (t) => {
    const { value, error } = gcsOptionsSchema.validate(base);
    t.error(error);
    t.match(value, { automatic_credentials: 0, key_prefix: '', storage_class: '', acl: '', upload_part_size: 0, upload_part_max_time: 0 });
  });

  t.test('bucket', async (t) => {
    t.match(refusal({ ...base, bucket: undefined }), /"bucket" is required: the name of the Cloud Storage bucket/);
    t.match(refusal({ ...base, bucket: '' }), /"bucket" is required/);
    t.match(refusal({ ...base, bucket: 'Bad_Bucket!' }), /"bucket" must be a bucket name.*\(got "Bad_Bucket!"\)/);
  });

  t.test('credentials', async (t) => {
    t.match(refusal({ ...base, credentials: plain(b64('not json {')) }), /does not decode to JSON/);
    t.match(refusal({ ...base, credentials: plain('%%%') }), /does not decode to JSON/);
    t.match(refusal({ ...base, credentials: plain(b64([1, 2])) }), /must decode to a JSON object/);
    t.match(
      refusal({ ...base, credentials: plain(b64({ type: 'authorized_user', client_id: 'x', refresh_token: 'y' })) }),
      new RegExp(`must be a service-account key \\(type "service_account", got "authorized_user"\\); set ${ALLOW_NON_SA_ENV}=1`),
    );
    t.match(refusal({ ...base, credentials: plain(b64({ type: 'service_account', client_email: 'a@b' })) }), /lacks private_key/);
    t.match(refusal({ ...base, credentials: plain(b64({ type: 'service_account', client_email: 'a@b', private_key: 'nope' })) }), /no PEM private_key/);
    t.equal(refusal({ ...base, credentials: { status: 'AES-256-GCM', payload: 'xx', key: 'k' } }), '', 'encrypted: checked when first saved');
    t.match(refusal({ ...base, credentials: 5 }), /"credentials" must be a Secret object/);
  });

  t.test(`${ALLOW_NON_SA_ENV}=1 accepts other credential JSON`, async (t) => {
    process.env[ALLOW_NON_SA_ENV] = '1';
    t.teardown(() => void delete process.env[ALLOW_NON_SA_ENV]);
    t.equal(refusal({ ...base, credentials: plain(b64({ type: 'authorized_user', client_id: 'x', refresh_token: 'y' })) }), '');
    t.match(refusal({ ...base, credentials: plain(b64('not json')) }), /does not decode to JSON/, 'still JSON');
  });

  t.test('automatic_credentials', async (t) => {
    t.equal(refusal({ bucket: 'b1b', automatic_credentials: 1 }), '');
    t.match(refusal({ ...base, automatic_credentials: 1 }), /"credentials" must be empty when "automatic_credentials" is 1/);
    t.match(refusal({ bucket: 'b1b' }), /set "credentials" \(base64 of a service-account JSON key\) or "automatic_credentials": 1/);
    t.match(refusal({ bucket: 'b1b', automatic_credentials: 2 }), /"automatic_credentials" must be one of \[0, 1\]/);
  });

  t.test('storage_class, acl, sizes, key_prefix', async (t) => {
    t.equal(gcsOptionsSchema.validate({ ...base, storage_class: 'nearline' }).value?.storage_class, 'NEARLINE');
    t.match(refusal({ ...base, storage_class: 'FAST' }), /"storage_class" must be empty or one of STANDARD, NEARLINE/);
    t.match(refusal({ ...base, acl: 'everyone' }), /"acl" must be empty or a predefined ACL: authenticatedRead/);
    t.match(refusal({ ...base, upload_part_size: 2048 }), /"upload_part_size" is in MB, between 0 \(default 8\) and 1024/);
    t.match(refusal({ ...base, upload_part_max_time: -1 }), /"upload_part_max_time" must be greater than or equal to 0/);
    t.match(refusal({ ...base, key_prefix: '../x' }), /"key_prefix" must not contain ".." segments/);
    t.equal(refusal({ ...base, key_prefix: 'users/%username%/' }), '');
  });
});

t.test('plugin config', async (t) => {
  t.match(gcsPluginConfigSchema.validate({ endpoint: 'ftp://x' }).error?.message, /"endpoint" must be an http\(s\) URL/);
  t.throws(() => gcsProvider({ endpoint: 'nope' }), /"endpoint" must be an http\(s\) URL/);
  t.equal(gcsPluginConfigSchema.validate({ endpoint: 'http://127.0.0.1:19002' }).error, undefined);
});

t.test('manifest', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
  t.equal(manifest.name, '@ferry/fs-gcs');
  t.equal(manifest.version, pkg.version);
  t.equal(manifest.apiVersion, 1);
  const registered: FsProviderDef[] = [];
  const ctx = { registerFsProvider: (d: FsProviderDef) => registered.push(d) } as unknown as PluginContext;
  await manifest.register(ctx, {});
  t.equal(registered.length, 1);
  t.match(registered[0], { provider: GCS_PROVIDER, key: 'gcs', configKey: 'gcsconfig', placeholderFields: ['key_prefix'], secretFields: ['credentials'] });
  t.equal(registered[0]!.provider, 2);
  t.same(registered[0]!.describe?.({ bucket: 'b' }), { bucket: 'b' });
  await t.rejects(async () => registered[0]!.create({ bucket: 'b' } as never, { username: 'u', dataDir: '.' }), { code: 'INVALID' });
  await manifest.teardown?.();
});
