import crypto from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** What is written beside a quarantined file (`<name>.json`). */
export interface QuarantineRecord {
  username: string;
  /** Virtual path the file had. */
  path: string;
  outcome: 'blocked' | 'adapted' | 'failed';
  threat: string;
  error: string;
  endpoint: string;
  /** Unix ms. */
  quarantined_at: number;
  size: number;
}

/** A file name part safe on any local filesystem: separators, control characters and dots-only names replaced. */
function safePart(s: string, max: number): string {
  const out = s.replace(/[/\\:*?"<>|\p{Cc}]/gu, '_').slice(0, max);
  return /^\.*$/.test(out) ? '_' : out;
}

/** `20261125T163300Z-<8 hex>-<base name>`: unique, sortable by time, still saying what the file was. */
export function quarantineName(vpath: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${crypto.randomBytes(4).toString('hex')}-${safePart(path.posix.basename(vpath) || 'file', 120)}`;
}

/**
 * Copies a file into the quarantine directory (`<dir>/<username>/<unique
 * name>`, mode 0600) through a temporary name renamed into place, and
 * writes its record beside it. Returns the name relative to `dir`.
 */
export async function quarantineFile(dir: string, rec: QuarantineRecord, open: () => Promise<Readable>): Promise<string> {
  const userDir = path.join(dir, safePart(rec.username, 200));
  await mkdir(userDir, { recursive: true, mode: 0o700 });
  const name = quarantineName(rec.path, new Date(rec.quarantined_at));
  const final = path.join(userDir, name);
  const part = path.join(userDir, `.${name}.part`);
  try {
    await pipeline(await open(), createWriteStream(part, { mode: 0o600, flags: 'wx' }));
    await writeFile(`${final}.json`, JSON.stringify(rec, null, 2), { mode: 0o600 });
    await rename(part, final);
  } catch (err) {
    await rm(part, { force: true });
    await rm(`${final}.json`, { force: true });
    throw err;
  }
  return path.posix.join(safePart(rec.username, 200), name);
}
