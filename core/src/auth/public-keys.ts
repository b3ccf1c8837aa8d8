import type { ParsedKey } from 'ssh2';
import { loadSsh2 } from '../sdk/ssh2-module.js';

/** A token that starts an OpenSSH public key (its type), after the options of an authorized_keys line. */
const KEY_TYPE = /^(?:ssh-|ecdsa-|sk-)/;

/** One public key (not a private one, nor several), or null. */
function onePublicKey(parsed: ParsedKey | ParsedKey[] | Error): ParsedKey | null {
  const key = Array.isArray(parsed) ? (parsed.length === 1 ? parsed[0]! : null) : parsed;
  return key && !(key instanceof Error) ? key : null;
}

/**
 * The key of an `authorized_keys` line (`[options] type base64 [comment]`),
 * of any type ssh2 parses, or null when the line holds none.
 */
function authorizedKey(parse: (data: string) => ParsedKey | ParsedKey[] | Error, line: string): ParsedKey | null {
  const trimmed = line.trim();
  if (!trimmed || trimmed.startsWith('#')) return null;
  const whole = onePublicKey(parse(trimmed));
  if (whole) return whole;
  // options first (`from="..." ssh-ed25519 AAAA...`): the key starts at the first token naming a key type
  const tokens = trimmed.split(/\s+/);
  for (let i = 1; i < tokens.length; i++) {
    if (!KEY_TYPE.test(tokens[i]!)) continue;
    const key = onePublicKey(parse(tokens.slice(i).join(' ')));
    if (key) return key;
  }
  return null;
}

/**
 * The offered key (SSH wire format, or an OpenSSH public key line) parsed,
 * when it is one of the `authorized` keys (authorized_keys lines, compared by
 * their public SSH blobs); null when it is not or cannot be parsed.
 */
export async function matchingPublicKey(authorized: readonly string[], offered: Buffer | string): Promise<ParsedKey | null> {
  if (!authorized.length) return null;
  // (ssh2 loaded on the first public key login, through the SDK's loader as every user of it)
  const parse = loadSsh2().module.utils.parseKey as (data: Buffer | string) => ParsedKey | ParsedKey[] | Error;
  const key = onePublicKey(parse(offered));
  if (!key) return null;
  const blob = key.getPublicSSH();
  for (const line of authorized) {
    if (authorizedKey(parse, line)?.getPublicSSH().equals(blob)) return key;
  }
  return null;
}
