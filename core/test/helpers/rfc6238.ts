/**
 * TOTP as RFC 6238 and RFC 4226 define it, written for the tests with
 * node:crypto only, independent of the otpauth package the server uses
 * (checked against the RFC's test vectors in two-factor.test.ts).
 */
import crypto from 'node:crypto';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Decode(s: string): Buffer {
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of s.toUpperCase().replace(/=+$/, '')) {
    const i = B32.indexOf(c);
    if (i < 0) throw new Error(`not base32: ${c}`);
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

export function base32Encode(buf: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

/** HOTP (RFC 4226 §5.3) of `key` at `counter`, `digits` long. */
export function hotp(key: Buffer, counter: number, algo: 'sha1' | 'sha256' | 'sha512' = 'sha1', digits = 6): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const h = crypto.createHmac(algo, key).update(msg).digest();
  const off = h[h.length - 1]! & 0x0f;
  const bin = ((h[off]! & 0x7f) << 24) | (h[off + 1]! << 16) | (h[off + 2]! << 8) | h[off + 3]!;
  return String(bin % 10 ** digits).padStart(digits, '0');
}

/** TOTP (RFC 6238 §4) with T0 = 0 and 30 s steps at `unixSeconds`. */
export function totpAt(key: Buffer, unixSeconds: number, algo: 'sha1' | 'sha256' | 'sha512' = 'sha1', digits = 6): string {
  return hotp(key, Math.floor(unixSeconds / 30), algo, digits);
}

/** The TOTP code of a base32 secret now (or `offsetSteps` steps away). */
export function totpNow(secretBase32: string, algo: 'sha1' | 'sha256' | 'sha512' = 'sha1', offsetSteps = 0): string {
  return totpAt(base32Decode(secretBase32), Date.now() / 1000 + offsetSteps * 30, algo);
}
