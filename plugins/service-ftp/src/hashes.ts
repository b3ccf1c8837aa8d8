import { FsError, FsErrorCode, hashFileRange, type FileSession } from '@ferry/core';
import { FtpReply, replyOf } from './replies.js';

/**
 * File hashes over FTP: HASH and OPTS HASH (draft-bryan-ftpext-hash-02),
 * RANG for its byte range (draft-bryan-ftp-range), and the older XMD5,
 * XSHA1, XSHA256, XSHA512 and XCRC. Every hash is the SDK's hashFileRange:
 * a download of the range through the user's file session (download
 * permission, file patterns, bandwidth, download event).
 */

/** HASH's algorithm names, in FEAT's order, and node's names for them. */
export const HASH_ALGORITHMS: Readonly<Record<string, string>> = { 'SHA-256': 'sha256', 'SHA-512': 'sha512', 'SHA-1': 'sha1', MD5: 'md5', CRC32: 'crc32' };

/** The legacy commands and their algorithms. */
export const LEGACY_HASH_COMMANDS: Readonly<Record<string, string>> = { XCRC: 'crc32', XMD5: 'md5', XSHA1: 'sha1', XSHA256: 'sha256', XSHA512: 'sha512' };

const DEFAULT_HASH = 'SHA-256';

/** A byte range set by RANG: first and last byte, inclusive. */
export interface ByteRangeCmd {
  start: number;
  end: number;
}

export interface HashTarget {
  files: FileSession;
  /** The virtual path of a client path. */
  path: string;
  signal: AbortSignal;
}

/** The HASH state of one control connection: the algorithm chosen by OPTS HASH. */
export class FtpHashes {
  private name = DEFAULT_HASH;

  /** The FEAT line: every algorithm, the selected one marked `*`. */
  feature(): string {
    return `HASH ${Object.keys(HASH_ALGORITHMS)
      .map((n) => (n === this.name ? `${n}*` : n))
      .join(';')}`;
  }

  /** OPTS HASH [name]: the algorithm in use, or a new one (one of FEAT's names, any case). */
  opts(arg: string): string {
    const wanted = arg.trim().toUpperCase();
    if (!wanted) return `200 ${this.name}`;
    if (!Object.hasOwn(HASH_ALGORITHMS, wanted))
      throw new FtpReply(504, `Unknown hash algorithm ${arg.trim()}: use one of ${Object.keys(HASH_ALGORITHMS).join(', ')}.`);
    this.name = wanted;
    return `200 ${wanted}`;
  }

  /** HASH: `213 <name> <start>-<end> <hex> <path>` (end: the offset after the last byte hashed), over the RANG range when one was set. */
  async hash(target: HashTarget, shown: string, range: ByteRangeCmd | null): Promise<string> {
    const r = await hashOf(target, HASH_ALGORITHMS[this.name]!, range ? range.start : 0, range ? range.end + 1 - range.start : 0);
    return `213 ${this.name} ${r.start}-${r.end} ${r.hex} ${shown}`;
  }
}

/** RANG <start> <end> (inclusive bytes; `RANG 1 0` clears it): the range, or null to clear. */
export function parseRang(arg: string): ByteRangeCmd | null {
  const m = /^\s*(\d{1,15})\s+(\d{1,15})\s*$/.exec(arg);
  if (!m) throw new FtpReply(501, 'RANG needs a start and an end byte.');
  const start = Number(m[1]);
  const end = Number(m[2]);
  if (start === 1 && end === 0) return null;
  if (end < start) throw new FtpReply(501, 'RANG: the end byte is before the start byte.');
  return { start, end };
}

/**
 * The arguments of XMD5, XSHA1, XSHA256, XSHA512, XCRC: a path, optionally
 * quoted, then optionally `end` or `start end` (byte offsets, end exclusive,
 * 0: the end of the file), separated by spaces or commas. A path whose name
 * ends in a number is written quoted.
 */
export function parseLegacyHashArgs(arg: string): { path: string; start: number; end: number } {
  const quoted = /^\s*"((?:[^"]|"")*)"\s*(.*)$/.exec(arg);
  let p: string;
  let rest: string;
  if (quoted) {
    p = quoted[1]!.replace(/""/g, '"');
    rest = quoted[2]!;
  } else {
    const m = /^(.*?)((?:[\s,]+\d{1,15}){0,2})\s*$/.exec(arg)!;
    p = m[1]!;
    rest = m[2]!;
  }
  const nums = rest
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((n) => (/^\d{1,15}$/.test(n) ? Number(n) : NaN));
  if (!p.trim() || nums.length > 2 || nums.some((n) => Number.isNaN(n))) throw new FtpReply(501, 'Syntax: X<hash> path [[start] end].');
  const [start, end] = nums.length === 2 ? [nums[0]!, nums[1]!] : [0, nums[0] ?? 0];
  if (end !== 0 && end <= start) throw new FtpReply(501, 'The end offset must be after the start offset.');
  return { path: p, start, end };
}

/** XMD5 and the others: `250 <hex>` of the file or of bytes start..end (end exclusive). */
export async function legacyHash(target: HashTarget, verb: string, start: number, end: number): Promise<string> {
  const r = await hashOf(target, LEGACY_HASH_COMMANDS[verb]!, start, end === 0 ? 0 : end - start);
  return `250 ${r.hex}`;
}

async function hashOf(target: HashTarget, algorithm: string, start: number, length: number): Promise<{ hex: string; start: number; end: number }> {
  try {
    const r = await hashFileRange(target.files, target.path, { algorithm, start, length, blockSize: 0, signal: target.signal });
    return { hex: r.hashes[0]!.toString('hex'), start: r.start, end: r.end };
  } catch (err) {
    if (err instanceof FsError && err.code === FsErrorCode.IsDirectory) throw new FtpReply(550, `${target.path} is a directory: only files have hashes.`);
    if (err instanceof FsError && (err.code === FsErrorCode.Permission || err.code === FsErrorCode.NotFound)) {
      throw new FtpReply(550, `Cannot hash ${target.path}: ${replyOf(err).slice(4)}`);
    }
    throw err;
  }
}
