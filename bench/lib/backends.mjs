// The test servers of scripts/servers (s3rver, Azurite, GCS emulator, sshd) as benchmarks
// use them: where they listen, their well-known credentials, SDK clients made
// the way the plugins make theirs, and a Ferry `filesystem` object per backend.
import { randomUUID } from 'node:crypto';
import { fakeGcsServiceAccountB64 } from '@ferry/testkit/gcs-service-account';

const S3_PORT = Number(process.env.FERRY_S3_PORT ?? 19000);
const AZURITE_PORT = Number(process.env.FERRY_AZURITE_PORT ?? 19001);

export const S3 = {
  port: S3_PORT,
  endpoint: `http://127.0.0.1:${S3_PORT}`,
  region: 'us-east-1',
  bucket: 'ferry-test',
  accessKey: 'S3RVER',
  secret: 'S3RVER',
  script: 'start-s3.sh',
};

export const AZURITE = {
  port: AZURITE_PORT,
  endpoint: `http://127.0.0.1:${AZURITE_PORT}`,
  account: 'devstoreaccount1',
  key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
  container: 'ferry-test',
  script: 'start-azurite.sh',
};

export const GCS = {
  port: Number(process.env.FERRY_GCS_PORT ?? 19002),
  get endpoint() {
    return `http://127.0.0.1:${this.port}`;
  },
  bucket: 'ferry-test',
  script: 'start-gcs.sh',
  /** The plugin config of @ferry/fs-gcs for the emulator (the endpoint is a plugin setting, not a user's). */
  get pluginConfig() {
    return { endpoint: this.endpoint };
  },
};

export const SFTP = {
  host: '127.0.0.1',
  port: Number(process.env.FERRY_SFTP_PORT ?? 19022),
  username: 'ferrysftp',
  password: 'ferrysftp-pass',
  script: 'start-sftp.sh',
  /** Where benchmarks put their directories: the login directory, or FERRY_BENCH_SFTP_DIR (a directory the user can write). */
  baseDir: (process.env.FERRY_BENCH_SFTP_DIR ?? '').replace(/\/+$/, ''),
};

/**
 * The servers by the names benchmarks declare in a `// bench-servers:` line
 * of their header (read by bench/run.mjs, which starts them first).
 */
export const SERVERS = { s3: S3, azurite: AZURITE, gcs: GCS, sftp: SFTP };

/** The plugins of a Ferry process serving users on every remote backend (and local ones). */
export const remotePlugins = () => [
  { name: '@ferry/fs-local' },
  { name: '@ferry/fs-s3' },
  { name: '@ferry/fs-azblob' },
  { name: '@ferry/fs-gcs', config: GCS.pluginConfig },
  { name: '@ferry/fs-sftp' },
];

/** The remote directory of a benchmark's files on the SFTP server. */
export const sftpDir = (name) => (SFTP.baseDir ? `${SFTP.baseDir}/${name}` : name);

/** A fresh key prefix / directory name, so runs never see each other's objects. */
export const benchPrefix = (tag = 'bench') => `${tag}-${randomUUID()}`;

/** An S3 client for s3rver (checksums only when required: s3rver stores aws-chunked framing verbatim otherwise). */
export async function s3Client() {
  const { S3Client } = await import('@aws-sdk/client-s3');
  return new S3Client({
    endpoint: S3.endpoint,
    region: S3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: S3.accessKey, secretAccessKey: S3.secret },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Deletes every object under `prefix` in the S3 bucket. */
export async function s3RemovePrefix(client, prefix) {
  const { DeleteObjectsCommand, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const out = await client.send(new ListObjectsV2Command({ Bucket: S3.bucket, Prefix: prefix }));
  const keys = (out.Contents ?? []).map((o) => ({ Key: o.Key }));
  if (keys.length) await client.send(new DeleteObjectsCommand({ Bucket: S3.bucket, Delete: { Objects: keys } }));
}

/** The Azurite container client (created when missing). */
export async function azContainer() {
  const { BlobServiceClient, StorageSharedKeyCredential } = await import('@azure/storage-blob');
  const container = new BlobServiceClient(
    `${AZURITE.endpoint}/${AZURITE.account}`,
    new StorageSharedKeyCredential(AZURITE.account, AZURITE.key),
  ).getContainerClient(AZURITE.container);
  await container.createIfNotExists();
  return container;
}

export async function azRemovePrefix(container, prefix) {
  for await (const b of container.listBlobsFlat({ prefix })) await container.deleteBlob(b.name);
}

/**
 * Base64 of a service-account key that parses: the plugin requires credentials, the emulator
 * checks none and is sent none (endpoint_auth off). The fs-gcs tests use the same one.
 */
export const gcsServiceAccountB64 = () => fakeGcsServiceAccountB64();

/** The emulator's bucket through @google-cloud/storage, without credentials (as the plugin talks to an emulator). */
export async function gcsBucket() {
  process.env.METADATA_SERVER_DETECTION ??= 'none'; // never probe the GCE metadata server
  const { Storage } = await import('@google-cloud/storage');
  return new Storage({ apiEndpoint: GCS.endpoint, projectId: 'ferry', useAuthWithCustomEndpoint: false }).bucket(GCS.bucket);
}

/** Deletes every object under `prefix` in the GCS bucket. */
export async function gcsRemovePrefix(bucket, prefix) {
  const [files] = await bucket.getFiles({ prefix });
  for (const f of files) await f.delete({ ignoreNotFound: true });
}

/** A connected ssh2-sftp-client. */
export async function sftpClient(name = 'bench') {
  const { default: SftpClient } = await import('ssh2-sftp-client');
  const c = new SftpClient(name, {});
  await c.connect({ host: SFTP.host, port: SFTP.port, username: SFTP.username, password: SFTP.password });
  return c;
}

/** The `filesystem` object of a Ferry user (admin API) whose files live under `prefix` on the given backend. */
export function ferryFilesystem(backend, prefix, extra = {}) {
  const plain = (payload) => ({ status: 'Plain', payload });
  switch (backend) {
    case 's3':
      return {
        provider: 1,
        s3config: {
          bucket: S3.bucket,
          region: S3.region,
          endpoint: S3.endpoint,
          access_key: S3.accessKey,
          access_secret: plain(S3.secret),
          force_path_style: true,
          key_prefix: `${prefix}/`,
          ...extra,
        },
      };
    case 'azblob':
      return {
        provider: 3,
        azblobconfig: { container: AZURITE.container, use_emulator: true, endpoint: AZURITE.endpoint, key_prefix: `${prefix}/`, ...extra },
      };
    case 'gcs':
      return {
        provider: 2,
        gcsconfig: { bucket: GCS.bucket, credentials: plain(gcsServiceAccountB64()), key_prefix: `${prefix}/`, ...extra },
      };
    case 'sftp':
      return {
        provider: 5,
        sftpconfig: { endpoint: `${SFTP.host}:${SFTP.port}`, username: SFTP.username, password: plain(SFTP.password), prefix: sftpDir(prefix), ...extra },
      };
    default:
      throw new Error(`unknown backend ${backend}`);
  }
}
