/**
 * TLS material for tests of HTTPS clients: a self-signed certificate for
 * 127.0.0.1 made at test time by the openssl command line tool (node:crypto
 * cannot build X.509 certificates).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

/** Why self-signed certificates cannot be made on this machine (openssl is not installed), or null. */
export function opensslMissing(): string | null {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'openssl is not installed: cannot create a self-signed certificate for the HTTPS tests';
  }
}

/** A self-signed certificate (RSA 2048, valid one day) for CN and IP SAN 127.0.0.1, with its key, both PEM. */
export async function selfSignedCert(): Promise<{ key: Buffer; cert: Buffer }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-tls-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return { key: await readFile(key), cert: await readFile(cert) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The SHA-256 fingerprint of the certificate a TLS server on 127.0.0.1:`port` presents (not verified). */
export function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fp = s.getPeerCertificate().fingerprint256;
      s.destroy();
      resolve(fp);
    });
    s.on('error', reject);
  });
}
