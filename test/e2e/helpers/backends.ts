/**
 * The remote storage servers started by scripts/servers (s3rver, Azurite,
 * the second sshd), reached directly with their SDKs: end-to-end tests use
 * them to look behind Ferry's back (what is really stored) and to remove what
 * a run created. Not a test file.
 */
import net from 'node:net';
import { DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import SftpClient from 'ssh2-sftp-client';

export const S3 = {
  port: Number(process.env.FERRY_S3_PORT ?? 19000),
  get endpoint() {
    return `http://127.0.0.1:${this.port}`;
  },
  bucket: 'ferry-test',
  accessKey: 'S3RVER',
  secret: 'S3RVER',
};

export const AZURE = {
  port: Number(process.env.FERRY_AZURITE_PORT ?? 19001),
  get endpoint() {
    return `http://127.0.0.1:${this.port}`;
  },
  container: 'ferry-test',
  account: 'devstoreaccount1',
  key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
};

export const SFTP = { host: '127.0.0.1', port: 19022, username: 'ferrysftp', password: 'ferrysftp-pass' };

export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 1000 });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

/**
 * Why the servers cannot be used (undefined when all answer). Under CI
 * (CI=true) a missing server is an error, never a skip.
 */
export async function remoteServersMissing(): Promise<string | undefined> {
  const down = [];
  if (!(await portOpen(S3.port))) down.push(`s3rver (127.0.0.1:${S3.port})`);
  if (!(await portOpen(AZURE.port))) down.push(`Azurite (127.0.0.1:${AZURE.port})`);
  if (!(await portOpen(SFTP.port))) down.push(`sshd (127.0.0.1:${SFTP.port})`);
  if (down.length === 0) return undefined;
  const why = `not running: ${down.join(', ')} (start them: bash scripts/servers/up.sh)`;
  if (process.env.CI === 'true') throw new Error(`${why}; CI must start them before the tests`);
  return why;
}

export function s3Client(): S3Client {
  return new S3Client({
    endpoint: S3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3.accessKey, secretAccessKey: S3.secret },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Every key under `prefix` with its size, sorted. */
export async function s3Keys(client: S3Client, prefix: string): Promise<[string, number][]> {
  const out: [string, number][] = [];
  let token: string | undefined;
  do {
    const r = await client.send(new ListObjectsV2Command({ Bucket: S3.bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) out.push([o.Key!, o.Size ?? 0]);
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

export async function s3DeletePrefix(client: S3Client, prefix: string): Promise<void> {
  const keys = (await s3Keys(client, prefix)).map(([k]) => k);
  for (let i = 0; i < keys.length; i += 500) {
    const Objects = keys.slice(i, i + 500).map((Key) => ({ Key }));
    await client.send(new DeleteObjectsCommand({ Bucket: S3.bucket, Delete: { Objects } }));
  }
}

/** The test container (created when missing). */
export async function azureContainer(): Promise<ContainerClient> {
  const cred = new StorageSharedKeyCredential(AZURE.account, AZURE.key);
  const c = new BlobServiceClient(`${AZURE.endpoint}/${AZURE.account}`, cred).getContainerClient(AZURE.container);
  await c.createIfNotExists();
  return c;
}

/** Every blob under `prefix` with its size, sorted. */
export async function azureBlobs(c: ContainerClient, prefix: string): Promise<[string, number][]> {
  const out: [string, number][] = [];
  for await (const b of c.listBlobsFlat({ prefix })) out.push([b.name, b.properties.contentLength ?? 0]);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

export async function azureDeletePrefix(c: ContainerClient, prefix: string): Promise<void> {
  for (const [name] of await azureBlobs(c, prefix)) await c.deleteBlob(name, { deleteSnapshots: 'include' }).catch(() => undefined);
}

export async function sftpClient(): Promise<SftpClient> {
  const c = new SftpClient();
  await c.connect({ host: SFTP.host, port: SFTP.port, username: SFTP.username, password: SFTP.password, readyTimeout: 20_000 });
  return c;
}

/** Every regular file under the directory `dir` (relative to the login directory) with its size, as paths relative to `dir`, sorted. */
export async function sftpFiles(c: SftpClient, dir: string): Promise<[string, number][]> {
  const out: [string, number][] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of await c.list(rel ? `${dir}/${rel}` : dir)) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.type === 'd') await walk(p);
      else out.push([p, e.size]);
    }
  };
  if (await c.exists(dir)) await walk('');
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}
