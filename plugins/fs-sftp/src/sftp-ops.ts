import type { FileEntryWithStats, SFTPWrapper, Stats } from 'ssh2';
import { channelClosedError, channelOpen } from './sftp-streams.js';
import { SftpStatus, sftpStatus } from './sftp-errors.js';

/** Promise wrappers over ssh2's callback SFTP requests (fail fast on a closed channel). */
function call<T>(sftp: SFTPWrapper, fn: (cb: (err: Error | undefined | null, v?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (!channelOpen(sftp)) return reject(channelClosedError());
    try {
      fn((err, v) => (err ? reject(err) : resolve(v as T)));
    } catch (err) {
      reject(err);
    }
  });
}

export const S_IFMT = 0o170000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;

export const isDirMode = (mode: number): boolean => (mode & S_IFMT) === S_IFDIR;
export const isLinkMode = (mode: number): boolean => (mode & S_IFMT) === S_IFLNK;

export const stat = (s: SFTPWrapper, p: string): Promise<Stats> => call(s, (cb) => s.stat(p, cb));
export const lstat = (s: SFTPWrapper, p: string): Promise<Stats> => call(s, (cb) => s.lstat(p, cb));
export const fstat = (s: SFTPWrapper, h: Buffer): Promise<Stats> => call(s, (cb) => s.fstat(h, cb));
export const open = (s: SFTPWrapper, p: string, flags: 'r' | 'w' | 'r+', mode?: number): Promise<Buffer> =>
  call(s, (cb) => (mode === undefined ? s.open(p, flags, cb) : s.open(p, flags, { mode }, cb)));
export const opendir = (s: SFTPWrapper, p: string): Promise<Buffer> => call(s, (cb) => s.opendir(p, cb));
export const mkdir = (s: SFTPWrapper, p: string): Promise<void> => call(s, (cb) => s.mkdir(p, cb));
export const rmdir = (s: SFTPWrapper, p: string): Promise<void> => call(s, (cb) => s.rmdir(p, cb));
export const unlink = (s: SFTPWrapper, p: string): Promise<void> => call(s, (cb) => s.unlink(p, cb));
export const rename = (s: SFTPWrapper, from: string, to: string): Promise<void> => call(s, (cb) => s.rename(from, to, cb));
export const realpath = (s: SFTPWrapper, p: string): Promise<string> => call(s, (cb) => s.realpath(p, cb));
/** Sets the size of a remote file (SFTP setstat with a size: truncates or extends). */
export const setSize = (s: SFTPWrapper, p: string, size: number): Promise<void> => call(s, (cb) => s.setstat(p, { size }, cb));
export const utimes = (s: SFTPWrapper, p: string, mtime: Date): Promise<void> => call(s, (cb) => s.utimes(p, mtime, mtime, cb));

/** One batch of entries of an open directory ('.' and '..' removed), or null at the end. */
export async function readdirBatch(s: SFTPWrapper, h: Buffer): Promise<FileEntryWithStats[] | null> {
  try {
    const list = await call<FileEntryWithStats[] | false>(s, (cb) => s.readdir(h, cb));
    return list === false ? null : list;
  } catch (err) {
    if (sftpStatus(err) === SftpStatus.Eof) return null;
    throw err;
  }
}

/** Every entry of a directory, '.' and '..' removed. */
export const readdirAll = (s: SFTPWrapper, p: string): Promise<FileEntryWithStats[]> => call(s, (cb) => s.readdir(p, cb));

/**
 * Atomic rename that replaces the destination (posix-rename@openssh.com).
 * Servers without the extension get a plain SFTPv3 rename after removing the
 * destination: not atomic (documented as a quirk).
 */
export async function replaceRename(s: SFTPWrapper, from: string, to: string): Promise<void> {
  try {
    await call(s, (cb) => s.ext_openssh_rename(from, to, cb));
    return;
  } catch (err) {
    if (!/not support/i.test(String((err as Error).message)) && sftpStatus(err) !== SftpStatus.OpUnsupported) throw err;
  }
  try {
    await rename(s, from, to);
  } catch (err) {
    const dest = await stat(s, to).catch(() => undefined);
    if (!dest || isDirMode(dest.mode)) throw err;
    await unlink(s, to);
    await rename(s, from, to);
  }
}

/** stat() that answers undefined for a missing path. */
export async function statOrNull(s: SFTPWrapper, p: string): Promise<Stats | undefined> {
  try {
    return await stat(s, p);
  } catch (err) {
    if (sftpStatus(err) === SftpStatus.NoSuchFile) return undefined;
    throw err;
  }
}
