import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { createPgDatabase, usePostgres } from '@ferry/core/testing';
import { ADMIN, call, serve, token, writeConfig } from './helpers/server.js';

// Bad options of every remote storage plugin are refused when the account is
// saved, through the HTTP API of a real server: 400, JSON {message, error},
// a message naming the field (and the config object), nothing stored, and no
// secret echoed. Valid options of each plugin are accepted, so a refusal is
// never caused by something else in the request. Nothing here contacts a
// storage server: options are checked at save time.

const SECRET = 'Marker-Secret-0042';
const plain = (payload = SECRET) => ({ status: 'Plain', payload });
const b64 = (s: string) => Buffer.from(s).toString('base64');
const serviceAccount = b64(
  JSON.stringify({
    type: 'service_account',
    project_id: 'ferry-test',
    client_email: 'ferry@ferry-test.iam.gserviceaccount.com',
    private_key: generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
  }),
);

type Fs = { provider: number } & Record<string, unknown>;
const s3 = (o: Record<string, unknown>): Fs => ({ provider: 1, s3config: o });
const gcs = (o: Record<string, unknown>): Fs => ({ provider: 2, gcsconfig: o });
const az = (o: Record<string, unknown>): Fs => ({ provider: 3, azblobconfig: o });
const sftp = (o: Record<string, unknown>): Fs => ({ provider: 5, sftpconfig: o });
const httpfs = (o: Record<string, unknown>): Fs => ({ provider: 6, httpconfig: o });

const s3ok = { bucket: 'ferry-test', region: 'us-east-1', endpoint: 'http://127.0.0.1:19000', access_key: 'AK', access_secret: plain() };
const azOk = { container: 'ferry-test', account_name: 'devstoreaccount1', account_key: plain() };
const sftpOk = { endpoint: '127.0.0.1:19022', username: 'ferrysftp', password: plain() };

/** Valid options of each plugin: accepted (201). */
const valid: [string, Fs][] = [
  ['S3', s3(s3ok)],
  ['GCS', gcs({ bucket: 'ferry-test', credentials: plain(serviceAccount) })],
  ['Azure, account and key', az(azOk)],
  ['Azure, SAS URL', az({ container: 'ferry-test', sas_url: plain(`https://acct.blob.core.windows.net/ferry-test?sig=${SECRET}`) })],
  ['SFTP', sftp(sftpOk)],
  ['HTTP', httpfs({ endpoint: 'https://files.example.com/api/v1', username: 'u', password: plain() })],
];

/** [case, filesystem, the field the message must name, the config object it belongs to]. */
const invalid: [string, Fs, RegExp, string][] = [
  ['no plugin for the provider', { provider: 99 }, /provider/, 'filesystem'],
  ['S3: no bucket', s3({ ...s3ok, bucket: undefined }), /bucket/, 's3config'],
  ['S3: empty bucket', s3({ ...s3ok, bucket: '' }), /bucket/, 's3config'],
  ['S3: malformed endpoint', s3({ ...s3ok, endpoint: 'not a url' }), /endpoint/, 's3config'],
  ['S3: endpoint of another scheme', s3({ ...s3ok, endpoint: 'ftp://s3.example.com' }), /endpoint/, 's3config'],
  ['S3: access key without secret', s3({ ...s3ok, access_secret: undefined }), /access_secret/, 's3config'],
  ['S3: secret without access key', s3({ ...s3ok, access_key: '' }), /access_key/, 's3config'],
  ['S3: key_prefix escaping with ..', s3({ ...s3ok, key_prefix: 'a/../../b/' }), /key_prefix/, 's3config'],
  ['S3: part size under 5 MB', s3({ ...s3ok, upload_part_size: 1 }), /upload_part_size/, 's3config'],
  ['S3: unknown ACL', s3({ ...s3ok, acl: 'everyone' }), /acl/, 's3config'],
  ['S3: config not an object', { provider: 1, s3config: 'bucket=x' }, /s3config/, 's3config'],
  ['GCS: no bucket', gcs({ credentials: plain(serviceAccount) }), /bucket/, 'gcsconfig'],
  ['GCS: malformed bucket', gcs({ bucket: 'Not_A_Bucket!', credentials: plain(serviceAccount) }), /bucket/, 'gcsconfig'],
  ['GCS: credentials not JSON', gcs({ bucket: 'ferry-test', credentials: plain(b64(`not json ${SECRET}`)) }), /credentials/, 'gcsconfig'],
  [
    'GCS: credentials not a service account',
    gcs({ bucket: 'ferry-test', credentials: plain(b64(JSON.stringify({ type: 'authorized_user', refresh_token: SECRET }))) }),
    /credentials/,
    'gcsconfig',
  ],
  ['GCS: no credentials', gcs({ bucket: 'ferry-test' }), /credentials/, 'gcsconfig'],
  [
    'GCS: credentials and automatic credentials',
    gcs({ bucket: 'ferry-test', credentials: plain(serviceAccount), automatic_credentials: 1 }),
    /credentials/,
    'gcsconfig',
  ],
  ['Azure: no container', az({ ...azOk, container: undefined }), /container/, 'azblobconfig'],
  ['Azure: malformed container', az({ ...azOk, container: 'Bad_Name' }), /container/, 'azblobconfig'],
  ['Azure: neither SAS URL nor account', az({ container: 'ferry-test' }), /sas_url/, 'azblobconfig'],
  ['Azure: account without key', az({ container: 'ferry-test', account_name: 'devstoreaccount1' }), /account_key/, 'azblobconfig'],
  ['Azure: malformed endpoint', az({ ...azOk, endpoint: 'blob.example.com' }), /endpoint/, 'azblobconfig'],
  ['Azure: unknown access tier', az({ ...azOk, access_tier: 'Lukewarm' }), /access_tier/, 'azblobconfig'],
  ['SFTP: no endpoint', sftp({ ...sftpOk, endpoint: undefined }), /endpoint/, 'sftpconfig'],
  ['SFTP: endpoint without port', sftp({ ...sftpOk, endpoint: 'sftp.example.com' }), /endpoint/, 'sftpconfig'],
  ['SFTP: port out of range', sftp({ ...sftpOk, endpoint: 'sftp.example.com:70000' }), /endpoint/, 'sftpconfig'],
  ['SFTP: no username', sftp({ ...sftpOk, username: undefined }), /username/, 'sftpconfig'],
  ['SFTP: neither password nor key', sftp({ endpoint: '127.0.0.1:19022', username: 'ferrysftp' }), /password/, 'sftpconfig'],
  [
    'SFTP: unreadable private key',
    sftp({ ...sftpOk, private_key: plain(`-----BEGIN OPENSSH PRIVATE KEY-----\n${SECRET}\n-----END OPENSSH PRIVATE KEY-----`) }),
    /private_key/,
    'sftpconfig',
  ],
  ['SFTP: malformed fingerprint', sftp({ ...sftpOk, fingerprints: ['MD5:00:11'] }), /fingerprints/, 'sftpconfig'],
  ['SFTP: prefix escaping with ..', sftp({ ...sftpOk, prefix: '../../etc' }), /prefix/, 'sftpconfig'],
  ['HTTP: no endpoint', httpfs({}), /endpoint/, 'httpconfig'],
  ['HTTP: malformed endpoint', httpfs({ endpoint: 'files.example.com/api' }), /endpoint/, 'httpconfig'],
  ['HTTP: endpoint with credentials', httpfs({ endpoint: `https://u:${SECRET}@files.example.com/api` }), /endpoint/, 'httpconfig'],
  ['HTTP: endpoint with a query', httpfs({ endpoint: 'https://files.example.com/api?x=1' }), /endpoint/, 'httpconfig'],
  ['HTTP: username without password', httpfs({ endpoint: 'https://files.example.com/api', username: 'u' }), /password/, 'httpconfig'],
];

t.test('remote storage options are checked when users, folders and groups are saved', async (t) => {
  const dir = t.testdir({});
  const pg = usePostgres() ? await createPgDatabase() : undefined;
  t.teardown(async () => pg?.drop());
  const config = writeConfig(dir, {
    databaseUrl: pg?.url,
    plugins: ['@ferry/fs-local', '@ferry/fs-s3', '@ferry/fs-gcs', '@ferry/fs-azblob', '@ferry/fs-sftp', '@ferry/fs-http'],
  });
  const srv = await serve(config);
  t.teardown(() => srv.kill('SIGTERM'));
  const base = `${srv.url}/api/v2`;
  const admin = await token(srv.url, 'admin', ADMIN.username, ADMIN.password);

  // each kind of account, as created through POST (and read back by name)
  const kinds = [
    {
      kind: 'user',
      collection: 'users',
      label: 'filesystem',
      body: (name: string, fs: Fs) => ({ username: name, password: 'validation-password-1', permissions: { '/': ['*'] }, filesystem: fs }),
    },
    { kind: 'folder', collection: 'folders', label: 'filesystem', body: (name: string, fs: Fs) => ({ name, filesystem: fs }) },
    { kind: 'group', collection: 'groups', label: 'user_settings.filesystem', body: (name: string, fs: Fs) => ({ name, user_settings: { filesystem: fs } }) },
  ];
  let n = 0;

  for (const k of kinds) {
    await t.test(`${k.kind}s: valid options are accepted`, async (t) => {
      for (const [what, fs] of valid) {
        const name = `ok-${k.kind}-${++n}`;
        const r = await call(`${base}/${k.collection}`, 'POST', { token: admin, body: k.body(name, fs) });
        t.equal(r.status, 201, `${what}: 201${r.status === 201 ? '' : ` ${r.text}`}`);
        t.notMatch(r.text, SECRET, `${what}: no secret in the answer`);
      }
    });

    await t.test(`${k.kind}s: bad options are a 400 naming the field`, async (t) => {
      for (const [what, fs, field, object] of invalid) {
        const name = `bad-${k.kind}-${++n}`;
        const r = await call(`${base}/${k.collection}`, 'POST', { token: admin, body: k.body(name, fs) });
        t.equal(r.status, 400, `${what}: 400`);
        const body = r.json() as { message: string; error: string };
        t.match(body, { message: String, error: 'Bad Request' }, `${what}: JSON {message, error}`);
        t.match(body.message, field, `${what}: the message names the field (${body.message})`);
        const where = object === 'filesystem' ? `${k.label}.provider` : `${k.label}.${object}`;
        t.ok(body.message.includes(where), `${what}: the message says where (${where})`);
        t.notMatch(r.text, SECRET, `${what}: no secret in the answer`);
        t.notMatch(r.text, /\bat .+\.(ts|js):\d+/, `${what}: no stack trace`);
        const stored = await call(`${base}/${k.collection}/${name}`, 'GET', { token: admin });
        t.equal(stored.status, 404, `${what}: nothing stored`);
      }
    });

    await t.test(`${k.kind}s: an update with bad options is refused and changes nothing`, async (t) => {
      const name = `update-${k.kind}`;
      const created = await call(`${base}/${k.collection}`, 'POST', { token: admin, body: k.body(name, s3(s3ok)) });
      t.equal(created.status, 201, created.text);
      const before = await call(`${base}/${k.collection}/${name}`, 'GET', { token: admin });
      for (const [what, fs, field] of invalid) {
        const r = await call(`${base}/${k.collection}/${name}`, 'PUT', { token: admin, body: k.body(name, fs) });
        t.equal(r.status, 400, `${what}: 400`);
        t.match((r.json() as { message: string }).message, field, `${what}: the message names the field`);
      }
      const after = await call(`${base}/${k.collection}/${name}`, 'GET', { token: admin });
      const fsOf = (v: unknown) => {
        const o = v as { filesystem?: unknown; user_settings?: { filesystem?: unknown } };
        return o.filesystem ?? o.user_settings?.filesystem;
      };
      t.same(fsOf(after.json()), fsOf(before.json()), 'the stored filesystem is unchanged');
      t.match(fsOf(after.json()), { provider: 1, s3config: { bucket: 'ferry-test' } });
    });
  }
});
