/**
 * TLS certificate files as the core serves them (HTTPS bindings, services
 * serving TLS themselves such as FTPS): read, checked (PEM, matching key,
 * usable by Node) and turned into secure context options. Errors name the
 * configuration key and the file, never key material.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import tls, { type SecureContextOptions } from 'node:tls';

/** min_tls_version values (spec: TLSVersions) to Node's names. */
export const TLS_VERSIONS = { 12: 'TLSv1.2', 13: 'TLSv1.3' } as const;

/** Files and options of one HTTPS binding (paths absolute). */
export interface TlsBindingFiles {
  /** Config key of the binding, e.g. `httpd.bindings.0`, used in messages. */
  key: string;
  certificateFile: string;
  certificateKeyFile: string;
  /** CA files client certificates must chain to (client_auth_type 1); empty otherwise. */
  caFiles: string[];
  minTlsVersion: 12 | 13;
  cipherSuites: string[];
  requireClientCert: boolean;
  /** The config key naming the CA files in messages (default `httpd.ca_certificates`). */
  caKey?: string;
  /** Ask for a client certificate without refusing the handshake (the service checks it: ServiceTlsBinding.client_ca_files). */
  requestClientCert?: boolean;
}

/** A certificate and key read from disk, checked and ready to serve. */
export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  ca: Buffer[];
  /** sha256 over the files' bytes: tells a real change from a touch. */
  digest: string;
  /** SHA-256 fingerprint of the leaf certificate (`AB:CD:...`). */
  fingerprint256: string;
  /** DNS names and IP addresses of the certificate (subject alternative names, else the subject CN). */
  names: string[];
  validTo: string;
}

/** A TLS file that cannot be used; the message names the config key and the file, never key material. */
export class TlsFileError extends Error {
  constructor(
    message: string,
    /** Digest of the bytes read, when they could be read (to report one broken content once). */
    readonly digest?: string,
  ) {
    super(message);
    this.name = 'TlsFileError';
  }
}

/** Certificate names: DNS and IP subject alternative names, else the subject common name. */
export function certificateNames(x509: X509Certificate): string[] {
  const names: string[] = [];
  for (const part of (x509.subjectAltName ?? '').split(/,\s*/)) {
    const m = /^(DNS|IP Address):(.+)$/.exec(part.trim());
    if (m) names.push(m[2]!);
  }
  if (names.length) return names;
  const cn = /(?:^|\n)CN=(.+)/.exec(x509.subject);
  return cn ? [cn[1]!.trim()] : [];
}

/** The message of a TLS file error without OpenSSL prefixes. */
export const tlsErrorText = (err: unknown): string => {
  const e = err as NodeJS.ErrnoException;
  return e.code && e.syscall ? String(e.message).split(',')[0]! : (e.message ?? String(err)).replace(/^error:[0-9A-F]+:/, '');
};

/** Reads and checks the binding's certificate, key and CA files. Throws TlsFileError naming the key. */
export async function loadTlsMaterial(f: TlsBindingFiles): Promise<TlsMaterial> {
  const read = async (file: string, key: string) => {
    try {
      return await readFile(file);
    } catch (err) {
      throw new TlsFileError(`${key}: cannot read "${file}": ${tlsErrorText(err)}`);
    }
  };
  const cert = await read(f.certificateFile, `${f.key}.certificate_file`);
  const key = await read(f.certificateKeyFile, `${f.key}.certificate_key_file`);
  const ca: Buffer[] = [];
  for (const file of f.caFiles) ca.push(await read(file, f.caKey ?? 'httpd.ca_certificates'));
  const hash = createHash('sha256');
  for (const b of [cert, key, ...ca]) hash.update(createHash('sha256').update(b).digest());
  const digest = hash.digest('hex');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new TlsFileError(`${f.key}.certificate_file: "${f.certificateFile}" holds no valid PEM certificate (${tlsErrorText(err)})`, digest);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new TlsFileError(
      `${f.key}.certificate_key_file: "${f.certificateKeyFile}" holds no usable unencrypted PEM private key (${tlsErrorText(err)})`,
      digest,
    );
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new TlsFileError(
      `${f.key}.certificate_key_file: the private key in "${f.certificateKeyFile}" does not match the certificate in "${f.certificateFile}"`,
      digest,
    );
  }
  const material: TlsMaterial = {
    cert,
    key,
    ca,
    digest,
    fingerprint256: x509.fingerprint256,
    names: certificateNames(x509),
    validTo: x509.validTo,
  };
  try {
    tls.createSecureContext(secureContextOptions(f, material));
  } catch (err) {
    throw new TlsFileError(`${f.key}: the certificate files cannot be used: ${tlsErrorText(err)}`, digest);
  }
  return material;
}

/** Options of tls.createServer / setSecureContext for the binding and its current material. */
export function secureContextOptions(f: TlsBindingFiles, m: TlsMaterial): SecureContextOptions {
  return {
    cert: m.cert,
    key: m.key,
    minVersion: TLS_VERSIONS[f.minTlsVersion],
    ...(f.cipherSuites.length ? { ciphers: f.cipherSuites.join(':') } : {}),
    ...(m.ca.length ? { ca: m.ca } : {}),
  };
}
