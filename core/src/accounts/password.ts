import argon2 from 'argon2';
import crypto from 'node:crypto';

/** argon2id hashing for passwords (never stored or returned in clear). */
export async function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });
}

/** True for a stored argon2 hash (as backups carry them), which is kept as is rather than hashed again. */
export function isPasswordHash(value: string): boolean {
  return /^\$argon2(id|i|d)\$/.test(value);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  if (!hash) return false;
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

/** A dummy hash, verified against when an account does not exist, so timing does not reveal it. */
let dummy: Promise<string> | undefined;
export async function burnPasswordCheck(password: string): Promise<void> {
  dummy ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  await verifyPassword(await dummy, password);
}

/** A strong random password (used for the generated first admin). */
export function generatePassword(): string {
  return crypto.randomBytes(18).toString('base64url');
}
