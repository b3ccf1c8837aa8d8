import path from 'node:path';
import archiver, { type Archiver } from 'archiver';
import { FsError, FsErrorCode, isSubPath, parentPath, type FileInfo } from '@ferry/core';
import { ensureParent, type FsRun } from './ops.js';
import type { CompressConfig } from './schema.js';

/** The deepest directory containing every path (the archive's entry names are relative to it). */
export function commonDir(paths: string[]): string {
  let base = parentPath(paths[0]!);
  for (const p of paths.slice(1)) while (!isSubPath(base, p) || base === p) base = parentPath(base);
  return base;
}

/** Waits for the entry just appended to be written into the archive (or for the archive to fail). */
function entryWritten(zip: Archiver, failed: Promise<never>): Promise<void> {
  return Promise.race([new Promise<void>((resolve) => zip.once('entry', () => resolve())), failed]);
}

/**
 * 5: a zip of files and directory trees, written to `name`. Entries are
 * named relative to the deepest directory holding every path; files are
 * streamed one at a time from their backend into the archive and the
 * archive into the target (storage quota counted as it is written), so
 * neither the set nor one file is ever held in memory. A failure leaves no
 * archive behind.
 */
export async function compress(r: FsRun, cfg: CompressConfig): Promise<{ size: number; entries: number }> {
  const target = r.files.path(cfg.name);
  const sources = [...new Set(cfg.paths.map((p) => r.files.path(p)))];
  for (const s of sources) {
    if (isSubPath(s, target)) throw new FsError(FsErrorCode.Invalid, `the archive ${target} cannot be written inside ${s}, a path it compresses`);
  }
  const infos = new Map<string, FileInfo>();
  for (const s of sources) infos.set(s, await r.files.stat(s, { signal: r.signal }));
  const base = sources.length === 1 && sources[0] === '/' ? '/' : commonDir(sources);
  await ensureParent(r, target);

  const zip = archiver('zip', { zlib: { level: 6 } });
  let fail!: (err: Error) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => undefined);
  zip.on('error', (err: Error) => fail(err));
  zip.on('warning', (err: Error) => fail(err));
  const writing = r.files.write(target, zip, { signal: r.signal });
  writing.catch((err: Error) => fail(err));
  let entries = 0;

  const add = async (vp: string, info: FileInfo): Promise<void> => {
    if (r.signal.aborted) throw FsError.aborted(vp);
    const name = path.posix.relative(base, vp);
    if (info.isDir) {
      if (name) {
        zip.append(Buffer.alloc(0), { name: `${name}/`, date: info.mtime });
        await entryWritten(zip, failed);
        entries++;
      }
      const children: FileInfo[] = [];
      for await (const page of r.files.list(vp, { signal: r.signal })) children.push(...page);
      children.sort((a, b) => a.path.localeCompare(b.path));
      for (const c of children) await add(c.path, c);
      return;
    }
    const rs = await r.files.openRead(vp, { signal: r.signal });
    zip.append(rs, { name, date: info.mtime });
    try {
      await entryWritten(zip, failed);
    } finally {
      if (!rs.destroyed) rs.destroy();
    }
    entries++;
  };

  try {
    for (const s of sources) await add(s, infos.get(s)!);
    await Promise.race([zip.finalize(), failed]);
    const { size } = await writing;
    return { size, entries };
  } catch (err) {
    zip.abort();
    if (!zip.destroyed) zip.destroy(err as Error);
    await writing.catch(() => undefined);
    throw err;
  }
}
