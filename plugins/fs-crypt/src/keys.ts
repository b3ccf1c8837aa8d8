import { hkdfSync, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { FsCryptError } from './errors.js';
import { DEFAULT_SCRYPT, KEY_CHECK_SIZE, NONCE_PREFIX_SIZE, SALT_SIZE, encodeHeader, type Header, type ScryptParams } from './format.js';

/** Fixed, domain-separating scrypt salt (see the README: per-file uniqueness comes from the HKDF salt). */
const SCRYPT_SALT = Buffer.from('ferry/fs-crypt/v1/scrypt');
const HKDF_INFO = Buffer.from('ferry/fs-crypt/v1/file-key');

function stretch(passphrase: string, params: ScryptParams): Promise<Buffer> {
  const N = 2 ** params.logN;
  return new Promise((resolve, reject) => {
    scrypt(Buffer.from(passphrase.normalize('NFC'), 'utf8'), SCRYPT_SALT, 32, { N, r: params.r, p: params.p, maxmem: 256 * N * params.r }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** A file's AES key and the header that goes with it. */
export interface FileKey {
  header: Header;
  key: Buffer;
}

/**
 * Keys of one Fs instance. The passphrase is stretched with scrypt once per
 * parameter set and the result cached, so opening many files costs one
 * scrypt, not one per file; each file key is then
 * HKDF-SHA256(stretched, salt = the file's random salt), 48 bytes: 32 for
 * AES-256-GCM, 16 stored in the header as a key check.
 */
export class KeyRing {
  /** scrypt runs so far (tests check that it stays at one per instance). */
  derivations = 0;
  private readonly stretched = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly passphrase: string,
    private readonly params: ScryptParams = DEFAULT_SCRYPT,
  ) {}

  private master(params: ScryptParams): Promise<Buffer> {
    const id = `${params.logN}:${params.r}:${params.p}`;
    let key = this.stretched.get(id);
    if (!key) {
      this.derivations++;
      key = stretch(this.passphrase, params);
      key.catch(() => this.stretched.delete(id));
      this.stretched.set(id, key);
    }
    return key;
  }

  private static derive(master: Buffer, salt: Buffer): { key: Buffer; check: Buffer } {
    const okm = Buffer.from(hkdfSync('sha256', master, salt, HKDF_INFO, 32 + KEY_CHECK_SIZE));
    return { key: okm.subarray(0, 32), check: okm.subarray(32) };
  }

  /** A fresh salt and nonce prefix, the derived key and the header for a new file. */
  async newFile(): Promise<FileKey> {
    const master = await this.master(this.params);
    // one draw for both (a call to the random generator per file, not two)
    const random = randomBytes(SALT_SIZE + NONCE_PREFIX_SIZE);
    const salt = random.subarray(0, SALT_SIZE);
    const { key, check } = KeyRing.derive(master, salt);
    return { key, header: encodeHeader(this.params, salt, random.subarray(SALT_SIZE), check) };
  }

  /** The key of an existing file; fails with a clear error when the passphrase is not the one it was written with. */
  async fileKey(header: Header, path: string): Promise<Buffer> {
    const { key, check } = KeyRing.derive(await this.master(header.scrypt), header.salt);
    if (!timingSafeEqual(check, header.keyCheck)) throw FsCryptError.passphrase(path);
    return key;
  }
}
