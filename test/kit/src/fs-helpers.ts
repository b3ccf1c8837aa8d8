import { once } from 'node:events';
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Test } from 'tap';
import { FsError } from '@ferry/core';
import type { FileInfo, Fs, FsErrorCode, ListOptions, ReadOptions, WriteOptions, WriteResult } from '@ferry/core';

/**
 * Writes `data` through openWrite and resolves with the write's result once
 * `done` resolves. The first failure wins: a rejection of `done` (the
 * backend's verdict) is preferred over the pipeline's own error.
 */
export async function writeFile(fs: Fs, path: string, data: Buffer | string | Readable, opts: WriteOptions = {}): Promise<WriteResult> {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  const size = Buffer.isBuffer(buf) ? buf.length : undefined;
  const handle = await fs.openWrite(path, { size, ...opts });
  const src = Buffer.isBuffer(buf) ? Readable.from(buf.length ? [buf] : [], { objectMode: false }) : buf;
  handle.done.catch(() => src.destroy());
  const [piped, done] = await Promise.allSettled([pipeline(src, handle.stream), handle.done]);
  if (done.status === 'rejected') throw done.reason;
  if (piped.status === 'rejected') throw piped.reason;
  return done.value;
}

/** Reads a whole (small) file or range into memory. */
export async function readFile(fs: Fs, path: string, opts?: ReadOptions): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await fs.openRead(path, opts)) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks);
}

/** Consumes a listing; returns every entry and the length of each page. */
/** Every byte of a stream, once it ends. */
export async function streamBytes(s: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** What stat() reports, without the fields a backend may leave out of one of two answers: for comparing two FileInfos. */
export function comparableInfo(i: FileInfo): Record<string, unknown> {
  return { name: i.name, path: i.path, isDir: i.isDir, size: i.size, mtime: i.mtime.getTime(), mode: i.mode, etag: i.etag };
}

export async function listAll(fs: Fs, path: string, opts?: ListOptions): Promise<{ entries: FileInfo[]; pages: number[] }> {
  const entries: FileInfo[] = [];
  const pages: number[] = [];
  for await (const page of fs.list(path, opts)) {
    pages.push(page.length);
    entries.push(...page);
  }
  return { entries, pages };
}

/** Sorted names in a directory. */
export async function namesIn(fs: Fs, path: string): Promise<string[]> {
  return (await listAll(fs, path)).entries.map((e) => e.name).sort();
}

/** Writes `bytes` (pseudo-random) into a writable, honouring backpressure. */
export async function writeSome(stream: Writable, bytes: number): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, 0x5a);
  let left = bytes;
  while (left > 0) {
    const n = Math.min(chunk.length, left);
    left -= n;
    if (!stream.write(chunk.subarray(0, n))) await once(stream, 'drain');
  }
}

/** Resolves with the rejection reason of `p`, or `undefined` when it fulfils. */
export async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return err ?? new Error(`rejected with ${String(err)}`);
  }
}

/** Rejects when `p` does not settle within `ms` (a backend that hangs must fail, not stall the run). */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** FsError check that also accepts an FsError from another copy of @ferry/core. */
export function isFsErrorLike(err: unknown): err is FsError {
  return err instanceof FsError || (err instanceof Error && err.name === 'FsError' && typeof (err as FsError).code === 'string');
}

function describe(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  return { name: err.name, code: (err as { code?: unknown }).code, message: err.message };
}

/** Asserts that `p` rejects with an FsError carrying one of `codes`. */
export async function expectFsError(t: Test, p: Promise<unknown>, codes: FsErrorCode | FsErrorCode[], message: string): Promise<unknown> {
  const list = Array.isArray(codes) ? codes : [codes];
  const err = await rejectionOf(p);
  if (err === undefined) {
    t.fail(`${message}: expected ${list.join(' or ')}, but the call succeeded`);
    return undefined;
  }
  t.ok(isFsErrorLike(err) && list.includes(err.code), `${message} (${list.join(' or ')})`, {
    found: describe(err),
    wanted: list,
  });
  return err;
}

/** Asserts that a path does not exist. */
export async function expectMissing(t: Test, fs: Fs, path: string, message = `${path} does not exist`): Promise<void> {
  await expectFsError(t, fs.stat(path), 'NOT_FOUND', message);
}

/** Mode-bit helpers (FileInfo.mode carries the file type bits). */
export const S_IFMT = 0o170000;
export const S_IFDIR = 0o040000;

/** Descriptors of this process open on `dir` or under it (what a test checks is closed again). */
export function openDescriptorsUnder(dir: string): number {
  const real = realpathSync(dir);
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target === real || target.startsWith(real + '/')) count++;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}
