import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';

// Valid filesystem options for every bundled storage provider (0-6), checked
// when a user is saved: nothing is contacted, so no test server is needed.

const plain = (payload: string) => ({ status: 'Plain', payload });

const serviceAccount = () =>
  Buffer.from(
    JSON.stringify({
      type: 'service_account',
      project_id: 'p',
      client_email: 'ferry@p.iam.gserviceaccount.com',
      private_key: generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
    }),
  ).toString('base64');

/** The remote plugins: provider number, the filesystem member of their options, valid options. */
export function remoteProviderOptions(): Record<string, { provider: number; configKey: string; options: Record<string, unknown> }> {
  return {
    '@ferry/fs-s3': {
      provider: 1,
      configKey: 's3config',
      options: { bucket: 'b', region: 'us-east-1', endpoint: 'http://127.0.0.1:1', access_key: 'AK', access_secret: plain('s') },
    },
    '@ferry/fs-gcs': { provider: 2, configKey: 'gcsconfig', options: { bucket: 'ferry-test', credentials: plain(serviceAccount()) } },
    '@ferry/fs-azblob': {
      provider: 3,
      configKey: 'azblobconfig',
      options: { container: 'ferry-test', account_name: 'devstoreaccount1', account_key: plain('a2V5') },
    },
    '@ferry/fs-sftp': { provider: 5, configKey: 'sftpconfig', options: { endpoint: '127.0.0.1:1', username: 'u', password: plain('p') } },
    '@ferry/fs-http': { provider: 6, configKey: 'httpconfig', options: { endpoint: 'https://127.0.0.1:1/api/v1', username: 'u', password: plain('p') } },
  };
}

/** [kind, filesystem] of a user on each provider 0-6 (local, crypt, then the remote ones). */
export function filesystemOfEachProvider(remote = remoteProviderOptions()): [string, Record<string, unknown>][] {
  return [
    ['local', { provider: 0 }],
    ['crypt', { provider: 4, cryptconfig: { passphrase: plain('pass') } }],
    ...Object.entries(remote).map(([name, r]): [string, Record<string, unknown>] => [
      name.slice('@ferry/fs-'.length),
      { provider: r.provider, [r.configKey]: r.options },
    ]),
  ];
}

/** The body of POST /api/v2/users for a user on `filesystem`, home under `homes`. */
export function userOn(kind: string, filesystem: Record<string, unknown>, homes: string): Record<string, unknown> {
  const username = `on-${kind}`;
  return { username, password: 'default-plugins-1', home_dir: path.join(homes, username), permissions: { '/': ['*'] }, filesystem };
}
