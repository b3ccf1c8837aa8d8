import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import ssh2 from './ssh2-module.js';
import { generateSshKeyPair } from '@ferry/core';

/** A host key as the server uses it and /status shows it (SSHHostKey of the API). */
export interface HostKey {
  path: string;
  /** The private key file's content, handed to ssh2. */
  privateKey: Buffer;
  /** SHA256:<base64>, as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** The host key algorithms the key signs with. */
  algorithms: string[];
}

/** The keys generated when none is configured: file name and key type. */
const GENERATED = [
  { file: 'ssh_host_ed25519_key', generate: () => generateSshKeyPair('ed25519') },
  { file: 'ssh_host_ecdsa_key', generate: () => generateSshKeyPair('ecdsa', { bits: 256 }) },
];

function algorithmsOf(type: string): string[] {
  if (type === 'ssh-rsa') return ['rsa-sha2-512', 'rsa-sha2-256'];
  return [type];
}

/** SHA256 fingerprint of a public key in the SSH wire format. */
export function fingerprintOf(publicSsh: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(publicSsh).digest('base64').replace(/=+$/, '');
}

async function loadKey(file: string): Promise<HostKey> {
  const privateKey = await readFile(file);
  const parsed = ssh2.utils.parseKey(privateKey);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key instanceof Error) throw new Error(`host key ${file}: ${key instanceof Error ? key.message : 'no key found'}`);
  if (!key.isPrivateKey()) throw new Error(`host key ${file}: not a private key`);
  return { path: file, privateKey, fingerprint: fingerprintOf(key.getPublicSSH()), algorithms: algorithmsOf(key.type) };
}

const exists = (file: string) =>
  readFile(file).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );

/**
 * The configured host keys, or when none is configured the keys of
 * `<dataDir>/sftp/`, generated (mode 0600) on first start.
 */
export async function loadHostKeys(configured: readonly string[], dataDir: string): Promise<HostKey[]> {
  if (configured.length > 0) return Promise.all(configured.map((f) => loadKey(f)));
  const dir = path.join(dataDir, 'sftp');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const keys: HostKey[] = [];
  for (const g of GENERATED) {
    const file = path.join(dir, g.file);
    if (!(await exists(file))) {
      const pair = g.generate();
      await writeFile(file, pair.private, { mode: 0o600, flag: 'wx' });
      await writeFile(`${file}.pub`, pair.public + '\n', { mode: 0o644 });
    }
    keys.push(await loadKey(file));
  }
  return keys;
}
