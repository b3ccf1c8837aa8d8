/**
 * The web admin's filesystem provider form without a browser
 * (app/src/admin/storage-model.ts): each of the seven providers read from the
 * API and sent back unchanged, secrets as set/unset (kept, replaced,
 * removed), switching providers, and the API's messages about a provider's
 * options named as the form's fields (field-message.ts).
 */
import t from 'tap';
import { fieldOfMessage, names } from '../app/src/admin/field-message.js';
import type { SecretEdit } from '../app/src/admin/option-values.js';
import {
  PROVIDERS,
  emptyStorage,
  filesystemInputOf,
  storageFieldsOf,
  usesLocalRoot,
  withOption,
  withoutStoredSecrets,
} from '../app/src/admin/storage-model.js';

/** A secret as the API shows it to an admin: its status only. */
const stored = { status: 'AES-256-GCM' };

/** One FilesystemConfig of each provider as GET /users/{username} shows it, every option given. */
const READ: Record<number, Record<string, unknown>> = {
  0: { provider: 0, osconfig: { read_buffer_size: 2, write_buffer_size: 4 } },
  1: {
    provider: 1,
    s3config: {
      bucket: 'ferry-test',
      region: 'eu-west-3',
      endpoint: 'http://127.0.0.1:19000',
      access_key: 'AKIA1',
      access_secret: stored,
      role_arn: 'arn:aws:iam::123456789012:role/ferry',
      session_token: 'tok',
      sse_customer_key: stored,
      key_prefix: 'users/alice/',
      storage_class: 'STANDARD_IA',
      acl: 'private',
      upload_part_size: 8,
      upload_concurrency: 3,
      upload_part_max_time: 60,
      download_part_size: 6,
      download_concurrency: 2,
      download_part_max_time: 30,
      force_path_style: true,
    },
  },
  2: {
    provider: 2,
    gcsconfig: {
      bucket: 'ferry-bucket',
      automatic_credentials: 0,
      credentials: stored,
      key_prefix: 'p/',
      storage_class: 'NEARLINE',
      acl: 'projectPrivate',
      upload_part_size: 16,
      upload_part_max_time: 120,
    },
  },
  3: {
    provider: 3,
    azblobconfig: {
      container: 'ferry-test',
      account_name: 'devstoreaccount1',
      account_key: stored,
      sas_url: stored,
      endpoint: 'http://127.0.0.1:19001',
      key_prefix: 'x/',
      access_tier: 'Cool',
      upload_part_size: 5,
      upload_concurrency: 4,
      download_part_size: 5,
      download_concurrency: 2,
      use_emulator: true,
    },
  },
  4: { provider: 4, cryptconfig: { passphrase: stored, read_buffer_size: 1, write_buffer_size: 1 } },
  5: {
    provider: 5,
    sftpconfig: {
      endpoint: '127.0.0.1:19022',
      username: 'ferrysftp',
      password: stored,
      private_key: stored,
      key_passphrase: stored,
      fingerprints: ['SHA256:' + 'A'.repeat(43), 'SHA256:' + 'B'.repeat(43)],
      prefix: '/data',
      buffer_size: 4,
      disable_concurrent_reads: true,
      equality_check_mode: 1,
    },
  },
  6: {
    provider: 6,
    httpconfig: {
      endpoint: 'https://files.example.com/api/v1',
      username: 'u',
      password: stored,
      api_key: stored,
      skip_tls_verify: true,
      equality_check_mode: 1,
    },
  },
};

t.test('the seven providers, each with its config key and options', async (t) => {
  t.same(
    PROVIDERS.map((p) => [p.provider, p.configKey]),
    [
      [0, 'osconfig'],
      [1, 's3config'],
      [2, 'gcsconfig'],
      [3, 'azblobconfig'],
      [4, 'cryptconfig'],
      [5, 'sftpconfig'],
      [6, 'httpconfig'],
    ],
  );
  for (const p of PROVIDERS) {
    const read = READ[p.provider]![p.configKey] as Record<string, unknown>;
    t.same(p.options.map((o) => o.key).sort(), Object.keys(read).sort(), `${p.configKey}: every option of reference.yaml has its field`);
  }
  t.same(
    PROVIDERS.filter((p) => usesLocalRoot(p.provider)).map((p) => p.provider),
    [0, 4],
    'local and encrypted local keep files under a local directory',
  );
});

t.test('each provider read from the API and sent back unchanged (its secrets kept as read)', async (t) => {
  for (const p of PROVIDERS) {
    const f = storageFieldsOf(READ[p.provider]);
    t.equal(f.provider, p.provider);
    for (const spec of p.options.filter((o) => o.kind === 'secret')) {
      const s = f.configs[p.provider]![spec.key] as SecretEdit;
      t.same(s, { stored: { status: 'AES-256-GCM' }, value: '', clear: false }, `${p.configKey}.${spec.key}: shown as set, no value`);
    }
    t.same(filesystemInputOf(f), READ[p.provider], `${p.configKey}: round trip`);
  }
});

t.test('secrets: a typed one replaces, a removed one is left out, an unset one stays unset', async (t) => {
  let f = storageFieldsOf(READ[1]);
  f = withOption(f, 'access_secret', { stored: { status: 'AES-256-GCM' }, value: 'new-secret', clear: false });
  f = withOption(f, 'sse_customer_key', { stored: { status: 'AES-256-GCM' }, value: '', clear: true });
  const s3 = filesystemInputOf(f).s3config as Record<string, unknown>;
  t.same(s3.access_secret, { status: 'Plain', payload: 'new-secret' }, 'the typed value, as a Plain secret');
  t.notOk('sse_customer_key' in s3, 'the removed secret is not sent (the server drops it)');

  const fresh = storageFieldsOf({ provider: 6, httpconfig: { endpoint: 'https://h.example.com' } });
  t.same(fresh.configs[6]!.api_key, { stored: null, value: '', clear: false }, 'a secret the API does not show: not set');
  t.same(
    filesystemInputOf(fresh),
    { provider: 6, httpconfig: { endpoint: 'https://h.example.com', skip_tls_verify: false, equality_check_mode: 0 } },
    'no secret sent',
  );
  t.same(
    storageFieldsOf({ provider: 4, cryptconfig: { passphrase: { status: '' } } }).configs[4]!.passphrase,
    { stored: null, value: '', clear: false },
    'a secret of empty status: not set',
  );
});

t.test('a new storage is the local filesystem; switching providers sends only the chosen one and keeps what was typed', async (t) => {
  const empty = emptyStorage();
  t.same(filesystemInputOf(empty), { provider: 0, osconfig: {} });
  t.same(storageFieldsOf(undefined), empty, 'an object without filesystem: local');

  let f = { ...empty, provider: 1 };
  f = withOption(f, 'bucket', 'ferry-test');
  f = withOption(f, 'access_key', 'S3RVER');
  f = withOption(f, 'access_secret', { stored: null, value: 'S3RVER', clear: false });
  f = withOption(f, 'force_path_style', true);
  f = withOption(f, 'upload_part_size', '');
  f = withOption(f, 'upload_concurrency', 'many');
  t.same(filesystemInputOf(f), {
    provider: 1,
    s3config: {
      bucket: 'ferry-test',
      access_key: 'S3RVER',
      access_secret: { status: 'Plain', payload: 'S3RVER' },
      upload_concurrency: 'many', // not a number: the API's message names it
      force_path_style: true,
    },
  });
  const sftp = withOption({ ...f, provider: 5 }, 'fingerprints', ` SHA256:${'C'.repeat(43)}\n\n`);
  t.same(
    filesystemInputOf(sftp),
    {
      provider: 5,
      sftpconfig: { endpoint: '', username: '', fingerprints: [`SHA256:${'C'.repeat(43)}`], disable_concurrent_reads: false, equality_check_mode: 0 },
    },
    "SFTP only, its required options sent empty (the API's message names them)",
  );
  t.equal((filesystemInputOf({ ...sftp, provider: 1 }).s3config as Record<string, unknown>).bucket, 'ferry-test', 'back to S3: what was typed is still there');

  const other = storageFieldsOf(READ[1]);
  t.same(
    filesystemInputOf({ ...other, provider: 3 }),
    { provider: 3, azblobconfig: { container: '', use_emulator: false } },
    "another provider of a stored object: its fresh form, none of S3's secrets",
  );
});

t.test("the API's messages about a provider's options name the form's fields", async (t) => {
  const cases: [string, string][] = [
    ['filesystem.s3config: endpoint must be an http:// or https:// URL, e.g. https://s3.example.com:9000', 'filesystem.s3config.endpoint'],
    ['filesystem.s3config: s3config.bucket is required', 'filesystem.s3config.bucket'],
    ['filesystem.s3config: access_secret is required when access_key is set', 'filesystem.s3config.access_secret'],
    ['filesystem.s3config: "upload_concurrency" must be a number', 'filesystem.s3config.upload_concurrency'],
    ['filesystem.gcsconfig: set "credentials" (base64 of a service-account JSON key) or "automatic_credentials": 1', 'filesystem.gcsconfig.credentials'],
    ['filesystem.azblobconfig: azblobconfig.container is required', 'filesystem.azblobconfig.container'],
    ['filesystem.cryptconfig: passphrase is required: fs-crypt encrypts every file with a key derived from it', 'filesystem.cryptconfig.passphrase'],
    ['filesystem.sftpconfig: "fingerprints[0]" must be a SHA256 host key fingerprint', 'filesystem.sftpconfig.fingerprints[0]'],
    ['filesystem.httpconfig: httpconfig.endpoint is required (e.g. https://files.example.com/api/v1)', 'filesystem.httpconfig.endpoint'],
    ['user_settings.filesystem.sftpconfig: "endpoint" is required: host:port of the SFTP server', 'user_settings.filesystem.sftpconfig.endpoint'],
    ['"filesystem.s3config.access_secret": a secret of status AWS cannot be decrypted by this server', 'filesystem.s3config.access_secret'],
    ['"filesystem.provider": filesystem provider 9 is not available (no plugin registers it)', 'filesystem.provider'],
  ];
  for (const [message, field] of cases) t.equal(fieldOfMessage(message), field, message);
  t.ok(
    names('filesystem.sftpconfig: "fingerprints[0]" must be a SHA256 host key fingerprint', 'filesystem.sftpconfig.fingerprints'),
    'a list item is in its list',
  );
  t.notOk(names('filesystem.s3config: endpoint must be an http:// URL', 'filesystem.httpconfig.endpoint'), "another provider's option is not named");
  t.notOk(names('filesystem.s3config: endpoint must be an http:// URL', 'endpoint'), "an event action's option of the same key is not named");
  t.ok(
    names('filesystem.azblobconfig: either sas_url or account_name with account_key is required', 'filesystem.azblobconfig'),
    'a message about two options together names the config (the form shows it at the provider)',
  );
});

t.test("a copy's storage (a clone): no stored secret, the rest kept, a secret typed again sent", async (t) => {
  for (const p of PROVIDERS) {
    const copy = withoutStoredSecrets(storageFieldsOf(READ[p.provider]));
    const sent = filesystemInputOf(copy)[p.configKey] as Record<string, unknown>;
    const original = READ[p.provider]![p.configKey] as Record<string, unknown>;
    for (const spec of p.options) {
      if (spec.kind === 'secret') t.notOk(spec.key in sent, `${p.configKey}.${spec.key}: the secret read is not sent`);
      else if (!spec.key.includes('.')) t.same(sent[spec.key], original[spec.key], `${p.configKey}.${spec.key}: kept`);
    }
  }
  const typed = withOption(withoutStoredSecrets(storageFieldsOf(READ[1])), 'access_secret', { stored: null, value: 'retyped', clear: false });
  t.same((filesystemInputOf(typed).s3config as Record<string, unknown>).access_secret, { status: 'Plain', payload: 'retyped' }, 'a secret typed again');
});
