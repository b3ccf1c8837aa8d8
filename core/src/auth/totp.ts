import * as OTPAuth from 'otpauth';

/** HMAC algorithms of a TOTP configuration (reference.yaml TOTPHMacAlgo). */
export const TOTP_ALGOS = ['sha1', 'sha256', 'sha512'] as const;
export type TotpAlgo = (typeof TOTP_ALGOS)[number];

/** RFC 6238 parameters Ferry uses: 6 digits, 30 s steps; a code is accepted one step early or late. */
export const TOTP_DIGITS = 6;
export const TOTP_PERIOD = 30;
const WINDOW = 1;

/** Secret sizes in bytes by algorithm: the HMAC's output size, as RFC 4226 and RFC 6238 recommend. */
const SECRET_BYTES: Record<TotpAlgo, number> = { sha1: 20, sha256: 32, sha512: 64 };

function totp(secret: string, algo: TotpAlgo, issuer = '', label = ''): OTPAuth.TOTP {
  return new OTPAuth.TOTP({
    issuer,
    label,
    algorithm: algo.toUpperCase(),
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
    secret: OTPAuth.Secret.fromBase32(secret),
  });
}

/** A new random base32 secret for `algo`. */
export function newTotpSecret(algo: TotpAlgo): string {
  return new OTPAuth.Secret({ size: SECRET_BYTES[algo] }).base32;
}

/** True when `secret` is base32 that decodes to at least 10 bytes (RFC 4226's minimum of 80 bits). */
export function isValidTotpSecret(secret: string): boolean {
  if (!/^[A-Z2-7]+=*$/i.test(secret)) return false;
  try {
    return OTPAuth.Secret.fromBase32(secret).bytes.length >= 10;
  } catch {
    return false;
  }
}

/** The otpauth:// URL an authenticator app reads (usually from a QR code). */
export function totpUrl(secret: string, algo: TotpAlgo, issuer: string, account: string): string {
  return totp(secret, algo, issuer, account).toString();
}

/** The time step (counter) a timestamp falls in. */
export function totpStep(now = Date.now()): number {
  return OTPAuth.TOTP.counter({ period: TOTP_PERIOD, timestamp: now });
}

/**
 * The time step `code` belongs to when it is valid now (current step, or one
 * step either way for clock skew), or null. Callers that authenticate with it
 * must refuse a step already used (see TwoFactorService).
 */
export function matchTotp(secret: string, code: string, algo: TotpAlgo, now = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp(secret, algo).validate({ token: code, timestamp: now, window: WINDOW });
  return delta === null ? null : totpStep(now) + delta;
}
