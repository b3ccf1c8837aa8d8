import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AccountMount, EventAccounts, Fs } from '@ferry/core';
import { baseName, isSubPath, normalizeVirtualPath } from '@ferry/core';

/** A virtual path of a user resolved onto one of its storage roots. */
export interface ResolvedFile {
  vpath: string;
  fs: Fs;
  /** Path inside the mount's Fs. */
  fsPath: string;
  /** Virtual folder name, absent for the user's home. */
  folder?: string;
}

/**
 * A user's files as the core mounts them (home at '/', each virtual folder
 * at its virtual path; a path belongs to the deepest mount containing it),
 * reached through the host's accounts port. close() closes every backend.
 */
export class UserStorage {
  private constructor(
    readonly username: string,
    private readonly mounts: (AccountMount & { vpath: string })[],
  ) {}

  static async open(accounts: EventAccounts, username: string): Promise<UserStorage> {
    const mounts = await accounts.mounts(username);
    const norm: (AccountMount & { vpath: string })[] = [];
    for (const m of mounts) {
      try {
        norm.push({ ...m, vpath: normalizeVirtualPath(m.virtual_path) });
      } catch {
        await m.fs.close().catch(() => {});
      }
    }
    norm.sort((a, b) => b.vpath.length - a.vpath.length);
    return new UserStorage(username, norm);
  }

  resolve(vpath: string): ResolvedFile {
    const m = this.mounts.find((x) => isSubPath(x.vpath, vpath));
    if (!m) throw new Error(`${vpath} is not in the storage of user "${this.username}"`);
    const fsPath = m.vpath === '/' ? vpath : vpath.slice(m.vpath.length) || '/';
    return { vpath, fs: m.fs, fsPath, folder: m.folder };
  }

  async close(): Promise<void> {
    await Promise.all(this.mounts.map((m) => m.fs.close().catch(() => {})));
  }
}

/**
 * Replaces a file's content so that readers see the old bytes or the new
 * ones, never a mix: backends with atomic uploads publish a write only when
 * complete; otherwise the bytes go to a hidden sibling renamed over the file
 * (rename is atomic there). A backend with neither is refused.
 */
export async function overwriteAtomically(file: ResolvedFile, content: Readable, size: number, signal?: AbortSignal): Promise<void> {
  const caps = file.fs.capabilities;
  if (!caps.atomicUpload && !caps.atomicRename) {
    content.destroy();
    throw new Error('this storage backend can neither publish writes atomically nor rename atomically: the file is not overwritten');
  }
  const target = caps.atomicUpload ? file.fsPath : `${parentOf(file.fsPath)}/.${baseName(file.fsPath)}.icap-${crypto.randomBytes(6).toString('hex')}`;
  const w = await file.fs.openWrite(target, { overwrite: true, size, signal });
  try {
    await pipeline(content, w.stream);
    await w.done;
  } catch (err) {
    await w.abort(err).catch(() => {});
    throw err;
  }
  if (target !== file.fsPath) {
    try {
      await file.fs.rename(target, file.fsPath, { signal });
    } catch (err) {
      await file.fs.remove(target).catch(() => {});
      throw err;
    }
  }
}

const parentOf = (p: string) => p.slice(0, p.lastIndexOf('/'));
