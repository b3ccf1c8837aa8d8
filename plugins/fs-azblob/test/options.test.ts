import t from 'tap';
import { azBlobOptionsSchema, resolveSettings } from '../src/index.js';

const plain = (payload: string) => ({ status: 'Plain', payload });
const refusal = (opts: unknown) => azBlobOptionsSchema.validate(opts).error?.message ?? '';
const ok = { container: 'files', account_name: 'acct', account_key: plain('k') };

t.test('optionsSchema', async (t) => {
  t.test('accepts complete configurations', async (t) => {
    t.error(
      azBlobOptionsSchema.validate({
        ...ok,
        endpoint: 'https://acct.blob.core.windows.net',
        key_prefix: 'users/%username%/',
        upload_part_size: 8,
        upload_concurrency: 4,
        download_part_size: 2,
        download_concurrency: 3,
        access_tier: 'Cool',
        use_emulator: false,
      }).error,
    );
    t.error(azBlobOptionsSchema.validate({ container: 'files', sas_url: plain('https://a.blob.core.windows.net/files?sv=1') }).error);
    t.error(azBlobOptionsSchema.validate({ container: 'files', use_emulator: true }).error, 'emulator: dev account');
  });
  t.test('refuses a missing or malformed container', async (t) => {
    t.match(refusal({ account_name: 'acct', account_key: plain('k') }), /container is required/);
    t.match(refusal({ ...ok, container: 'Bad_Name' }), /container must be 3-63 characters/);
    t.match(refusal({ ...ok, container: '' }), /container must not be empty/);
  });
  t.test('refuses a malformed sas_url (without echoing it)', async (t) => {
    for (const bad of ['not a url', 'blob.core.windows.net/files?sig=s3cr3t', 'ftp://a.blob.core.windows.net/files?sig=s3cr3t', 'https://']) {
      const msg = refusal({ container: 'files', sas_url: plain(bad) });
      t.match(msg, /sas_url must be an http:\/\/ or https:\/\/ URL/, bad);
      t.notMatch(msg, /s3cr3t/, 'the SAS token is not in the message');
    }
    t.error(
      azBlobOptionsSchema.validate({ container: 'files', sas_url: { status: 'AES-256-GCM', payload: 'x' } }).error,
      'a stored (encrypted) secret is not parsed',
    );
  });
  t.test('refuses a malformed endpoint', async (t) => {
    t.match(refusal({ ...ok, endpoint: '127.0.0.1:10000' }), /endpoint must be an http/);
  });
  t.test('refuses negative sizes and counts', async (t) => {
    t.match(refusal({ ...ok, upload_part_size: -1 }), /upload_part_size must not be negative/);
    t.match(refusal({ ...ok, download_part_size: -2 }), /download_part_size must not be negative/);
    t.match(refusal({ ...ok, upload_concurrency: -1 }), /upload_concurrency must not be negative/);
    t.match(refusal({ ...ok, download_concurrency: 100 }), /at most 64/);
    t.match(refusal({ ...ok, upload_part_size: 5000 }), /at most 4000 MB/);
  });
  t.test('refuses missing credentials, bad tiers and prefixes', async (t) => {
    t.match(refusal({ container: 'files' }), /either sas_url or account_name with account_key is required/);
    t.match(refusal({ container: 'files', account_name: 'acct' }), /account_key is required/);
    t.match(refusal({ ...ok, access_tier: 'Premium' }), /access_tier must be one of/);
    t.match(refusal({ ...ok, key_prefix: '../x' }), /key_prefix must not contain '\.\.'/);
    t.match(refusal({ ...ok, account_name: 'Bad-Name' }), /account_name must be 3-24/);
  });
});

t.test('resolveSettings()', async (t) => {
  const s = resolveSettings({ container: 'c', account_name: 'acct', account_key: 'decrypted' });
  t.equal(s.serviceUrl, 'https://acct.blob.core.windows.net');
  t.equal(s.accountKey, 'decrypted');
  t.equal(s.uploadPartSize, 4 * 1024 * 1024);
  t.equal(s.uploadConcurrency, 2, 'two blocks in flight: 10 MB of block buffers per upload');
  t.equal(s.downloadPartSize, 5 * 1024 * 1024);
  t.equal(s.downloadConcurrency, 1, 'one streamed GET per read by default');
  const e = resolveSettings({ container: 'c', use_emulator: true });
  t.equal(e.serviceUrl, 'http://127.0.0.1:10000/devstoreaccount1', 'emulator default: path-style dev account');
  t.ok(e.accountKey, 'well-known emulator key');
  const e2 = resolveSettings({ container: 'c', use_emulator: true, endpoint: 'http://127.0.0.1:19001/' });
  t.equal(e2.serviceUrl, 'http://127.0.0.1:19001/devstoreaccount1', 'with endpoint given, use it');
  const e3 = resolveSettings({ container: 'c', use_emulator: true, endpoint: 'http://h:1/devstoreaccount1' });
  t.equal(e3.serviceUrl, 'http://h:1/devstoreaccount1');
  const c = resolveSettings({ container: 'c', account_name: 'a', account_key: 'k', endpoint: 'https://private.example/' });
  t.equal(c.serviceUrl, 'https://private.example', 'a custom endpoint is the service URL');
  t.throws(() => resolveSettings({ container: 'c', sas_url: { status: 'AES-256-GCM', payload: 'x' } }), /still encrypted/);
});
