import { createPrivateKey, generateKeyPairSync, randomBytes, type JsonWebKey } from 'node:crypto';

/** Key types an SSH server or client here generates. */
export type SshKeyType = 'ed25519' | 'ecdsa' | 'rsa';

/** A generated key pair: an unencrypted OpenSSH private key file and an authorized_keys line. */
export interface SshKeyPair {
  private: string;
  public: string;
}

export interface SshKeyOptions {
  /** ecdsa: 256, 384 or 521 (default 256); rsa: the modulus size (default 3072). */
  bits?: number;
  /** Written into the private key file and after the public key. */
  comment?: string;
}

const CURVES: Record<number, { curve: string; name: string }> = {
  256: { curve: 'P-256', name: 'nistp256' },
  384: { curve: 'P-384', name: 'nistp384' },
  521: { curve: 'P-521', name: 'nistp521' },
};

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const str = (data: Buffer | string): Buffer => {
  const b = typeof data === 'string' ? Buffer.from(data) : data;
  return Buffer.concat([u32(b.length), b]);
};
/** An SSH mpint: big-endian, no leading zero byte unless the top bit would read as a sign. */
const mpint = (raw: Buffer): Buffer => {
  let i = 0;
  while (i < raw.length && raw[i] === 0) i++;
  const digits = raw.subarray(i);
  return str(digits.length > 0 && digits[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), digits]) : digits);
};
const b64url = (s: string | undefined): Buffer => Buffer.from(s ?? '', 'base64url');

/**
 * A new private key's JWK fields. The key leaves the generator as DER and is
 * read back as a new key object: Node 20 can deadlock when a garbage
 * collection during the JWK export of a key object made by
 * generateKeyPairSync runs the destructor of that key's generation job, which
 * takes the lock the export holds (seen in CI: ssh-keys.test.ts hung in
 * KeyGenJob::~KeyGenJob under ExportJWKEcKey).
 */
function generateJwk(type: 'ed25519' | 'ec' | 'rsa', options: { namedCurve?: string; modulusLength?: number } = {}): JsonWebKey {
  const der = (generateKeyPairSync as (t: string, o: object) => { privateKey: Buffer })(type, {
    ...options,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'der' },
  }).privateKey;
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
}

/** The public key blob and the private fields of the OpenSSH format, in the order that format stores them. */
function generateParts(type: SshKeyType, bits: number | undefined): { keyType: string; publicBlob: Buffer; privateFields: Buffer } {
  switch (type) {
    case 'ed25519': {
      const jwk = generateJwk('ed25519');
      const pub = b64url(jwk.x);
      const keyType = 'ssh-ed25519';
      // the private field is the 32-byte seed followed by the 32-byte public key, as OpenSSH writes it
      return {
        keyType,
        publicBlob: Buffer.concat([str(keyType), str(pub)]),
        privateFields: Buffer.concat([str(keyType), str(pub), str(Buffer.concat([b64url(jwk.d), pub]))]),
      };
    }
    case 'ecdsa': {
      const c = CURVES[bits ?? 256];
      if (!c) throw new Error(`ecdsa keys are 256, 384 or 521 bits, not ${bits}`);
      const jwk = generateJwk('ec', { namedCurve: c.curve });
      const keyType = `ecdsa-sha2-${c.name}`;
      const point = Buffer.concat([Buffer.from([4]), b64url(jwk.x), b64url(jwk.y)]);
      return {
        keyType,
        publicBlob: Buffer.concat([str(keyType), str(c.name), str(point)]),
        privateFields: Buffer.concat([str(keyType), str(c.name), str(point), mpint(b64url(jwk.d))]),
      };
    }
    case 'rsa': {
      const modulusLength = bits ?? 3072;
      if (!Number.isInteger(modulusLength) || modulusLength < 2048) throw new Error(`rsa keys are at least 2048 bits, not ${bits}`);
      const jwk = generateJwk('rsa', { modulusLength });
      const [n, e] = [mpint(b64url(jwk.n)), mpint(b64url(jwk.e))];
      return {
        keyType: 'ssh-rsa',
        publicBlob: Buffer.concat([str('ssh-rsa'), e, n]),
        privateFields: Buffer.concat([str('ssh-rsa'), n, e, mpint(b64url(jwk.d)), mpint(b64url(jwk.qi)), mpint(b64url(jwk.p)), mpint(b64url(jwk.q))]),
      };
    }
    default:
      throw new Error(`unknown SSH key type ${String(type)}`);
  }
}

/**
 * A new SSH key pair in OpenSSH's formats, which ssh2, OpenSSH and PuTTYgen
 * all read. Written here rather than taken from ssh2's generator, which about
 * once in 256 ed25519 keys drops a leading zero byte of the public key and so
 * writes a key its own parser refuses.
 */
export function generateSshKeyPair(type: SshKeyType, options: SshKeyOptions = {}): SshKeyPair {
  const { keyType, publicBlob, privateFields } = generateParts(type, options.bits);
  const comment = options.comment ?? '';
  const check = randomBytes(4);
  let section = Buffer.concat([check, check, privateFields, str(comment)]);
  // padded with 1, 2, 3, ... to the cipher block size ("none": 8)
  const pad = (8 - (section.length % 8)) % 8;
  section = Buffer.concat([section, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const file = Buffer.concat([Buffer.from('openssh-key-v1\0'), str('none'), str('none'), str(''), u32(1), str(publicBlob), str(section)]);
  const body = file
    .toString('base64')
    .match(/.{1,70}/g)!
    .join('\n');
  return {
    private: `-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\n-----END OPENSSH PRIVATE KEY-----\n`,
    public: `${keyType} ${publicBlob.toString('base64')}${comment ? ` ${comment}` : ''}`,
  };
}
