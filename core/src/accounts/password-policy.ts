/**
 * Password strength as users' `filters.password_strength` states it: the
 * minimum estimated entropy in bits (0: no minimum). The estimate follows
 * the approach of go-password-validator, which sftpgo uses for the same
 * field: log2(size of the character classes used) × length, where runs of
 * one character count once after the second and common sequences
 * (abc…, 123…, qwerty…) count as one character.
 */

const SPECIAL = ' !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
const SEQUENCES = ['abcdefghijklmnopqrstuvwxyz', '01234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'];

function baseSize(password: string): number {
  let lower = false;
  let upper = false;
  let digit = false;
  let special = false;
  let other = false;
  for (const ch of password) {
    if (ch >= 'a' && ch <= 'z') lower = true;
    else if (ch >= 'A' && ch <= 'Z') upper = true;
    else if (ch >= '0' && ch <= '9') digit = true;
    else if (SPECIAL.includes(ch)) special = true;
    else other = true;
  }
  return (lower ? 26 : 0) + (upper ? 26 : 0) + (digit ? 10 : 0) + (special ? SPECIAL.length : 0) + (other ? 32 : 0);
}

/** Length after collapsing repeated characters (beyond two) and runs of 3+ characters of a common sequence. */
function effectiveLength(password: string): number {
  const chars = [...password.toLowerCase()];
  let n = 0;
  for (let i = 0; i < chars.length;) {
    // a run of 3+ characters following one of the common sequences (either direction) counts once
    let run = 1;
    for (const seq of SEQUENCES) {
      for (const dir of [1, -1]) {
        let j = i;
        while (j + 1 < chars.length) {
          const a = seq.indexOf(chars[j]!);
          const b = seq.indexOf(chars[j + 1]!);
          if (a < 0 || b < 0 || b - a !== dir) break;
          j++;
        }
        run = Math.max(run, j - i + 1);
      }
    }
    if (run >= 3) {
      n++;
      i += run;
      continue;
    }
    // a character repeated more than twice counts twice
    let k = i;
    while (k + 1 < chars.length && chars[k + 1] === chars[i]) k++;
    const rep = k - i + 1;
    n += Math.min(rep, 2);
    i += rep;
  }
  return n;
}

/** Estimated entropy of a password in bits. */
export function passwordEntropy(password: string): number {
  const base = baseSize(password);
  if (!base) return 0;
  return Math.log2(base) * effectiveLength(password);
}

/** Why `password` is too weak for `minEntropy` bits, or null when it is strong enough (or there is no minimum). */
export function passwordStrengthProblem(password: string, minEntropy: number | undefined): string | null {
  if (!minEntropy) return null;
  const bits = passwordEntropy(password);
  if (bits >= minEntropy) return null;
  return `the password is too weak: about ${Math.floor(bits)} bits of entropy, at least ${minEntropy} are required (use a longer password mixing lower and upper case letters, digits and symbols)`;
}
