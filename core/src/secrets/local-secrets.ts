import crypto from 'node:crypto';
import type { Secret, SecretsService } from './secret.js';
import { setBounded } from '../util/bounded-map.js';

const STATUS = 'AES-256-GCM' as const;
/** Data keys kept (the oldest dropped first). */
const DATA_KEY_CACHE = 1024;

/**
 * AES-256-GCM envelope: each secret gets a random data key derived by HKDF
 * from the master key and a random salt (kept in `key`); `payload` is
 * base64(iv | ciphertext | tag); `additional_data` is authenticated.
 */
export class LocalSecretsService implements SecretsService {
  readonly status = STATUS;
  private readonly master: Buffer;

  constructor(masterKey: string | Buffer) {
    const raw = typeof masterKey === 'string' ? Buffer.from(masterKey, 'utf8') : masterKey;
    if (raw.length < 16) throw new Error('the secrets master key must be at least 16 bytes');
    this.master = crypto.createHash('sha256').update(raw).digest();
  }

  /**
   * Data keys of the secrets decrypted lately, by salt: a stored secret (a
   * backend's credentials) is decrypted for every session that opens its
   * filesystem, and HKDF costs more than the decryption itself.
   */
  private readonly dataKeys = new Map<string, Buffer>();

  private dataKey(salt: Buffer): Buffer {
    const id = salt.toString('base64');
    let key = this.dataKeys.get(id);
    if (!key) {
      key = Buffer.from(crypto.hkdfSync('sha256', this.master, salt, Buffer.from('ferry-secret-v1'), 32));
      setBounded(this.dataKeys, id, key, DATA_KEY_CACHE);
    }
    return key;
  }

  async encrypt(plain: string, aad = ''): Promise<Secret> {
    const salt = crypto.randomBytes(16);
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.dataKey(salt), iv);
    if (aad) cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const payload = Buffer.concat([iv, ct, cipher.getAuthTag()]).toString('base64');
    const s: Secret = { status: STATUS, payload, key: salt.toString('base64') };
    if (aad) s.additional_data = aad;
    return s;
  }

  async decrypt(secret: Secret): Promise<string> {
    if (secret.status === 'Plain') return secret.payload ?? '';
    if (secret.status !== STATUS) throw new Error(`cannot decrypt a secret of status ${secret.status}`);
    const buf = Buffer.from(secret.payload ?? '', 'base64');
    if (buf.length < 28 || !secret.key) throw new Error('malformed encrypted secret');
    const iv = buf.subarray(0, 12);
    const tag = buf.subarray(buf.length - 16);
    const ct = buf.subarray(12, buf.length - 16);
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.dataKey(Buffer.from(secret.key, 'base64')), iv);
    if (secret.additional_data) decipher.setAAD(Buffer.from(secret.additional_data, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
  }

  canDecrypt(secret: Secret): boolean {
    return secret.status === STATUS || secret.status === 'Plain';
  }
}
