import archiver from 'archiver';
import type { FileInfo } from '../fs/fs.contract.js';
import { FsError, FsErrorCode, isFsError } from '../fs/fs-error.js';
import { baseName, parentPath } from '../fs/path.js';
import type { FileSession } from './file-session.js';
import { STAGE_HWM, meteredDownload, type DownloadStream } from './transfers.js';

/** True for a regular file's mode, or a mode without type bits (backends that do not report one). */
function isRegularMode(mode: number): boolean {
  const type = mode & 0o170000;
  return type === 0 || type === 0o100000;
}

interface ZipItem {
  vpath: string;
  info: FileInfo;
  /** Name inside the archive. */
  name: string;
}

/**
 * Streams a zip of several files and directories (recursively). Every
 * requested path is checked (and every requested file through the
 * pre-download hooks) before the first byte; inside directories,
 * names hidden or denied by the file patterns, or without download
 * permission, are left out. Entries are read one at a time.
 */
export async function streamZip(s: FileSession, paths: string[]): Promise<DownloadStream> {
  const items: ZipItem[] = [];
  for (const vpath of paths) {
    s.checkName(vpath, 'read');
    const info = await s.vfs.stat(vpath, { signal: s.signal });
    if (info.isDir) s.requirePerm(vpath, `listing ${vpath}`, 'list');
    else s.requirePerm(parentPath(vpath), `downloading ${vpath}`, 'download');
    items.push({ vpath, info, name: baseName(vpath) || 'root' });
  }
  // the files asked for by name (not those found inside requested directories)
  for (const it of items) if (!it.info.isDir) await s.before('pre-download', s.vfs.resolve(it.vpath), it.info.size);
  const label = paths.length === 1 ? paths[0]! : parentPath(paths[0]!);
  const target = s.vfs.resolve(paths[0]!);
  return meteredDownload(s, target, label, 0, async (signal) => {
    const archive = archiver('zip', { zlib: { level: 1 }, highWaterMark: STAGE_HWM });
    const fail = (err: unknown) => {
      if (!archive.destroyed) archive.destroy(err instanceof Error ? err : new Error(String(err)));
    };
    signal.addEventListener('abort', () => fail(FsError.aborted()), { once: true });
    const addFile = async (vpath: string, name: string, info: FileInfo) => {
      const r = s.vfs.resolve(vpath);
      const fs = await s.vfs.fs(r.mount);
      const rs = info.size > 0 ? await fs.openRead(r.fsPath, { signal }) : null;
      const entry = new Promise<void>((resolve, reject) => {
        const onEntry = () => {
          archive.off('error', onError);
          resolve();
        };
        const onError = (e: unknown) => {
          archive.off('entry', onEntry);
          reject(e);
        };
        archive.once('entry', onEntry);
        archive.once('error', onError);
        rs?.once('error', onError);
      });
      archive.append(rs ?? Buffer.alloc(0), { name, date: info.mtime });
      await entry;
    };
    /** An entry met inside a requested directory that cannot be read is left out of the archive, with a log line. */
    const skip = (vpath: string, reason: string) => s.deps.logger.warn({ path: vpath, user: s.user.username, reason }, 'left out of a zip');
    /**
     * Once the answer has started, an entry that cannot be read any more (a
     * link leading outside, a directory swapped or removed since it was
     * checked) can no longer turn into an error answer: it is left out, with
     * a log line, and the archive stays complete and valid. Only an abort
     * (or a failure that is not the storage's refusal) ends the archive.
     */
    const leftOut = (vpath: string, err: unknown): void => {
      if (!isFsError(err) || err.code === FsErrorCode.Aborted) throw err;
      skip(vpath, err.message);
    };
    const addFoundFile = async (vpath: string, name: string, info: FileInfo) => {
      if (!isRegularMode(info.mode)) return skip(vpath, 'not a regular file');
      try {
        await addFile(vpath, name, info);
      } catch (err) {
        // Refused or gone before its first byte was added (a link leading outside, a concurrent removal).
        leftOut(vpath, err);
      }
    };
    const addDir = async (vpath: string, name: string, info: FileInfo): Promise<void> => {
      archive.append(Buffer.alloc(0), { name: `${name}/`, type: 'directory', date: info.mtime } as archiver.EntryData);
      try {
        for await (const page of s.vfs.list(vpath, { signal })) {
          for (const e of page) {
            if (!s.patterns.check(e.path).allowed) continue;
            if (e.isDir) {
              if (s.perms.has(e.path, 'list')) await addDir(e.path, `${name}/${e.name}`, e);
            } else if (s.perms.has(vpath, 'download')) {
              await addFoundFile(e.path, `${name}/${e.name}`, e);
            }
          }
        }
      } catch (err) {
        leftOut(vpath, err);
      }
    };
    void (async () => {
      for (const it of items) {
        if (it.info.isDir) await addDir(it.vpath, it.name, it.info);
        else await addFoundFile(it.vpath, it.name, it.info);
      }
      await archive.finalize();
    })().catch(fail);
    return archive;
  });
}
