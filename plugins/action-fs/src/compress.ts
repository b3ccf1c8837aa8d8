import path from 'node:path';
import { fillZip, ZipWriter } from '@ferry/zip-writer';
import { FsError, FsErrorCode, isSubPath, normalizeVirtualPath, parentPath, type FileInfo } from '@ferry/core';
import { ensureParent, type FsRun } from './ops.js';
import type { CompressConfig } from './schema.js';

/**
 * Deflate level of the archives. 6, as archiver wrote them before: the
 * archive is kept on the user's storage and counted against the quota, so
 * it keeps the sizes it had. Level 1 (the zip writer's default, right for a
 * download someone waits for) took 0.34-0.65x the CPU time but wrote
 * archives 9% (a binary) to 27% (JavaScript source) larger (README, 5 compress).
 */
export const COMPRESS_LEVEL = 6;

/** The deepest directory containing every path (the archive's entry names are relative to it). */
export function commonDir(paths: string[]): string {
  let base = parentPath(paths[0]!);
  for (const p of paths.slice(1)) while (!isSubPath(base, p) || base === p) base = parentPath(base);
  return base;
}

/**
 * The name inside the archive of `vpath` (`''` for `base` itself): its path
 * relative to `base`, normalised as the core normalises virtual paths (a
 * backslash separates, as archiver made it do in names), so that no name is
 * absolute or holds a `..` segment. A path holding one, or outside `base`,
 * is refused (FsError ESCAPE) rather than written under another name.
 */
export function entryName(base: string, vpath: string): string {
  const vp = normalizeVirtualPath(vpath);
  if (!isSubPath(base, vp)) throw new FsError(FsErrorCode.Escape, `${vpath} is not inside ${base}`, { path: vpath });
  return path.posix.relative(base, vp);
}

/**
 * 5: a zip of files and directory trees, written to `name`. Entries are
 * named relative to the deepest directory holding every path; files are
 * streamed one at a time from their backend into the archive and the
 * archive into the target (storage quota counted as it is written), so
 * neither the set nor one file is ever held in memory. A failure (a path
 * that cannot be read, a read failing midway, the quota, an abort) ends
 * the write, which leaves no archive behind.
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

  const zip = new ZipWriter({ level: COMPRESS_LEVEL });
  // failures are read from the calls' promises and from the write; the archive
  // may be destroyed before the write reads it, so its error event needs a listener
  zip.on('error', () => undefined);
  // the write ends with an error when the archive is destroyed (by fillZip,
  // on a failure), and destroys the archive when it fails itself (quota, storage,
  // abort): the entry being added then fails too
  const writing = r.files.write(target, zip, { signal: r.signal });
  let entries = 0;

  const add = async (vp: string, info: FileInfo): Promise<void> => {
    if (r.signal.aborted) throw FsError.aborted(vp);
    const name = entryName(base, vp);
    if (info.isDir) {
      if (name) {
        await zip.addDirectory(name, { mtime: info.mtime });
        entries++;
      }
      const children: FileInfo[] = [];
      for await (const page of r.files.list(vp, { signal: r.signal })) children.push(...page);
      children.sort((a, b) => a.path.localeCompare(b.path));
      for (const c of children) await add(c.path, c);
      return;
    }
    const rs = await r.files.openRead(vp, { signal: r.signal });
    try {
      // a source failing midway rejects this call (the writer would leave the entry out and go on: here the whole run fails)
      await zip.addStream(name, rs, { mtime: info.mtime, size: info.size });
    } finally {
      if (!rs.destroyed) rs.destroy();
    }
    entries++;
  };

  // a write failing first (the quota...) is reported as the cause
  const { size } = await fillZip(zip, writing, async () => {
    for (const s of sources) await add(s, infos.get(s)!);
  });
  return { size, entries };
}
