import t from 'tap';
import { resolveSettings, s3OptionsSchema } from '../src/index.js';

const plain = (payload: string) => ({ status: 'Plain', payload });

function refusal(opts: unknown): string {
  const { error } = s3OptionsSchema.validate(opts);
  return error?.message ?? '';
}

t.test('optionsSchema', async (t) => {
  t.test('accepts a complete configuration', async (t) => {
    const { error } = s3OptionsSchema.validate({
      bucket: 'b',
      region: 'eu-west-1',
      endpoint: 'https://s3.example.com:9000',
      key_prefix: 'users/%username%/',
      access_key: 'AK',
      access_secret: plain('SK'),
      sse_customer_key: plain('k'.repeat(32)),
      role_arn: 'arn:aws:iam::123456789012:role/ferry',
      session_token: 'tok',
      storage_class: 'STANDARD_IA',
      acl: 'private',
      upload_part_size: 8,
      upload_concurrency: 4,
      upload_part_max_time: 60,
      download_part_size: 1,
      download_concurrency: 3,
      download_part_max_time: 30,
      force_path_style: true,
    });
    t.error(error);
  });
  t.test('accepts the minimal configuration', async (t) => {
    t.error(s3OptionsSchema.validate({ bucket: 'b' }).error);
  });
  t.test('refuses a missing or empty bucket', async (t) => {
    t.match(refusal({}), /bucket is required/);
    t.match(refusal({ bucket: '' }), /bucket must not be empty/);
  });
  t.test('refuses a malformed endpoint', async (t) => {
    t.match(refusal({ bucket: 'b', endpoint: 'localhost:9000' }), /endpoint must be an http/);
    t.match(refusal({ bucket: 'b', endpoint: 'ftp://x' }), /endpoint must be an http/);
  });
  t.test('refuses negative or too small part sizes and counts', async (t) => {
    t.match(refusal({ bucket: 'b', upload_part_size: -1 }), /upload_part_size must not be negative/);
    t.match(refusal({ bucket: 'b', upload_part_size: 3 }), /upload_part_size must be 0 \(default\) or at least 5 MB/);
    t.match(refusal({ bucket: 'b', download_part_size: -5 }), /download_part_size must not be negative/);
    t.match(refusal({ bucket: 'b', upload_concurrency: -1 }), /upload_concurrency must not be negative/);
    t.match(refusal({ bucket: 'b', download_concurrency: 1.5 }), /download_concurrency must be a whole number/);
    t.match(refusal({ bucket: 'b', upload_part_size: 6000 }), /at most 5120 MB/);
  });
  t.test('refuses key prefixes that climb out', async (t) => {
    t.match(refusal({ bucket: 'b', key_prefix: 'a/../b' }), /key_prefix must not contain '\.\.'/);
    t.match(refusal({ bucket: 'b', key_prefix: 'a\\b' }), /key_prefix must not contain backslashes/);
  });
  t.test('refuses half credentials', async (t) => {
    t.match(refusal({ bucket: 'b', access_key: 'AK' }), /access_secret is required/);
    t.match(refusal({ bucket: 'b', access_secret: plain('x') }), /access_key is required/);
  });
  t.test('refuses bad ACLs, role ARNs, secret shapes and unknown keys', async (t) => {
    t.match(refusal({ bucket: 'b', acl: 'everyone' }), /acl must be one of/);
    t.match(refusal({ bucket: 'b', role_arn: 'ferry-role' }), /role_arn must look like/);
    t.match(refusal({ bucket: 'b', access_key: 'a', access_secret: 'plain-string' }), /access_secret/);
    t.match(refusal({ bucket: 'b', buckt: 'typo' }), /"buckt" is not allowed/);
  });
});

t.test('resolveSettings()', async (t) => {
  const s = resolveSettings({ bucket: 'b', access_key: 'a', access_secret: 'decrypted' });
  t.equal(s.accessSecret, 'decrypted', 'create() receives decrypted secrets as strings');
  t.equal(s.uploadPartSize, 5 * 1024 * 1024, 'default part size 5 MB');
  t.equal(s.uploadConcurrency, 2, 'two parts in flight: 15 MB of part buffers per upload');
  t.equal(s.downloadPartSize, 5 * 1024 * 1024);
  t.equal(s.downloadConcurrency, 1, 'one streamed GET per read by default');
  t.equal(s.uploadPartMaxTimeMs, 0);
  t.equal(s.forcePathStyle, false);
  const s2 = resolveSettings({ bucket: 'b', upload_part_size: 16, download_part_max_time: 7, sse_customer_key: plain('k') } as never);
  t.equal(s2.uploadPartSize, 16 * 1024 * 1024);
  t.equal(s2.downloadPartMaxTimeMs, 7000);
  t.equal(s2.sseCustomerKey, 'k', 'a Plain Secret is accepted too');
  t.throws(() => resolveSettings({ bucket: 'b', access_secret: { status: 'AES-256-GCM', payload: 'x' } } as never), /still encrypted/);
});
