import path from 'node:path';
import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import yauzl from 'yauzl';
import { FsError, FsErrorCode, isSubPath, normalizeVirtualPath, parentPath, type UserFiles } from '@ferry/core';
import type { FsRun } from './ops.js';
import { Overwrite, type DecompressConfig } from './schema.js';

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;

/** Reads byte ranges of an archive from the user's storage (any backend) for yauzl. */
class StorageReader extends yauzl.RandomAccessReader {
  constructor(
    private readonly files: UserFiles,
    private readonly vpath: string,
    private readonly signal: AbortSignal,
  ) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const out = new PassThrough();
    if (end <= start) {
      out.end();
      return out;
    }
    this.files
      .openRead(this.vpath, { start, end: end - 1, signal: this.signal })
      .then((rs) => {
        rs.on('error', (err) => out.destroy(err));
        out.on('close', () => rs.destroy());
        rs.pipe(out);
      })
      .catch((err: Error) => out.destroy(err));
    return out;
  }
}

/** One archive entry that passed the checks. */
interface Planned {
  entry: yauzl.Entry;
  /** Virtual path under the target. */
  vpath: string;
  isDir: boolean;
  skip: boolean;
}

/** Why a zip is refused (nothing is written when this is thrown before extraction). */
export class ZipRefused extends FsError {
  constructor(message: string) {
    super(FsErrorCode.Invalid, `archive refused: ${message}`);
  }
}

function openZip(reader: StorageReader, size: number): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.fromRandomAccessReader(reader, size, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true }, (err, zf) =>
      err ? reject(new ZipRefused(err.message)) : resolve(zf),
    ),
  );
}

/** Every entry of the central directory, checked against the limits as it is read. */
function readEntries(zf: yauzl.ZipFile, check: (e: yauzl.Entry) => void): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const out: yauzl.Entry[] = [];
    const fail = (err: Error) => {
      zf.removeAllListeners('entry');
      zf.removeAllListeners('end');
      reject(err instanceof FsError ? err : new ZipRefused(err.message));
    };
    zf.on('error', fail);
    zf.on('entry', (e: yauzl.Entry) => {
      try {
        check(e);
      } catch (err) {
        return fail(err as Error);
      }
      out.push(e);
      zf.readEntry();
    });
    zf.on('end', () => resolve(out));
    zf.readEntry();
  });
}

function entryStream(zf: yauzl.ZipFile, e: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zf.openReadStream(e, (err, rs) => (err ? reject(new ZipRefused(`${e.fileName}: ${err.message}`)) : resolve(rs))));
}

/** Counts the bytes really inflated against the total limit (declared sizes may lie; yauzl checks each entry's own). */
class Inflated extends Transform {
  constructor(private readonly add: (n: number) => Error | null) {
    super();
  }
  override _transform(chunk: Buffer, _e: BufferEncoding, cb: TransformCallback): void {
    cb(this.add(chunk.length), chunk);
  }
}

/**
 * 9: extracts a zip archive into a directory, streamed entry by entry from
 * the archive's backend to the target's. The whole central directory is
 * checked before anything is written: entries escaping the target (`..`,
 * absolute paths, backslashes, names that do not normalise), symbolic links
 * and other special entries, encrypted entries, duplicate names, more than
 * max_entries entries, a declared total above max_size, and a compression
 * ratio above max_ratio (per entry and for the whole archive) refuse the
 * archive. While extracting, the bytes really inflated are held to the same
 * limits (an archive lying about its sizes fails), the storage quota is
 * counted, and any failure removes every file and directory the run
 * created, so a refused archive leaves nothing behind.
 */
export async function decompress(r: FsRun, cfg: DecompressConfig): Promise<{ files: number; bytes: number }> {
  const archive = r.files.path(cfg.name);
  const target = r.files.path(cfg.target);
  if (isSubPath(target, archive) && cfg.overwrite === Overwrite.Replace) {
    // extraction could replace the archive being read
    throw new FsError(FsErrorCode.Invalid, `the archive ${archive} lies inside the target ${target}: overwrite 2 (replace) is not allowed there`);
  }
  const info = await r.files.stat(archive, { signal: r.signal });
  if (info.isDir) throw new FsError(FsErrorCode.IsDirectory, `${archive} is a directory`, { path: archive });
  const targetInfo = await r.files.statOrNull(target, { signal: r.signal });
  if (targetInfo && !targetInfo.isDir) throw new FsError(FsErrorCode.NotDirectory, `${target} exists and is not a directory`, { path: target });

  const reader = new StorageReader(r.files, archive, r.signal);
  const zf = await openZip(reader, info.size);
  try {
    let declared = 0;
    let compressed = 0;
    const names = new Set<string>();
    const entries = await readEntries(zf, (e) => {
      if (names.size + 1 > cfg.max_entries) throw new ZipRefused(`more than max_entries (${cfg.max_entries}) entries`);
      const name = e.fileName;
      const mode = (e.externalFileAttributes >>> 16) & S_IFMT;
      const madeByUnix = e.versionMadeBy >> 8 === 3;
      if (madeByUnix && mode === S_IFLNK) throw new ZipRefused(`${name}: symbolic links are not extracted`);
      if (madeByUnix && mode !== 0 && mode !== S_IFDIR && mode !== S_IFREG) throw new ZipRefused(`${name}: not a regular file or directory`);
      if (e.isEncrypted()) throw new ZipRefused(`${name}: encrypted entries are not supported`);
      let vp: string;
      try {
        vp = normalizeVirtualPath(`${target}/${name}`);
      } catch (err) {
        throw new ZipRefused(`${name}: ${(err as Error).message}`);
      }
      if (vp === target || !isSubPath(target, vp)) throw new ZipRefused(`${name}: escapes the target directory`);
      if (names.has(vp)) throw new ZipRefused(`${name}: appears twice`);
      names.add(vp);
      declared += e.uncompressedSize;
      compressed += e.compressedSize;
      if (declared > cfg.max_size) throw new ZipRefused(`uncompressed size above max_size (${cfg.max_size} bytes)`);
      if (e.uncompressedSize > Math.max(e.compressedSize, 1) * cfg.max_ratio) {
        throw new ZipRefused(`${name}: compression ratio above max_ratio (${cfg.max_ratio})`);
      }
    });
    if (declared > Math.max(compressed, info.size, 1) * cfg.max_ratio) throw new ZipRefused(`compression ratio above max_ratio (${cfg.max_ratio})`);

    // a file entry must not sit where another entry needs a directory
    const plan: Planned[] = entries.map((e) => {
      const vp = normalizeVirtualPath(`${target}/${e.fileName}`);
      return { entry: e, vpath: vp, isDir: e.fileName.endsWith('/'), skip: false };
    });
    const fileSet = new Set(plan.filter((p) => !p.isDir).map((p) => p.vpath));
    for (const p of plan) {
      for (let d = parentPath(p.vpath); d !== target && d !== '/'; d = parentPath(d)) {
        if (fileSet.has(d)) throw new ZipRefused(`${p.entry.fileName}: ${path.posix.relative(target, d)} is both a file and a directory`);
      }
    }
    // the overwrite policy, decided before anything is written
    for (const p of plan) {
      const existing = await r.files.statOrNull(p.vpath, { signal: r.signal });
      if (!existing) continue;
      if (p.isDir) {
        if (!existing.isDir) throw new FsError(FsErrorCode.Exists, `${p.vpath} exists and is not a directory`, { path: p.vpath });
        continue;
      }
      if (existing.isDir) throw new FsError(FsErrorCode.Exists, `${p.vpath} exists and is a directory`, { path: p.vpath });
      if (cfg.overwrite === Overwrite.Fail) throw new FsError(FsErrorCode.Exists, `${p.vpath} already exists (overwrite 1: fail)`, { path: p.vpath });
      if (cfg.overwrite === Overwrite.Skip) p.skip = true;
    }
    return await extract(r, zf, plan, target, cfg);
  } finally {
    zf.close();
  }
}

async function extract(r: FsRun, zf: yauzl.ZipFile, plan: Planned[], target: string, cfg: DecompressConfig): Promise<{ files: number; bytes: number }> {
  const createdDirs: string[] = [];
  const createdFiles: string[] = [];
  const known = new Set<string>();
  /** Creates a directory and its missing parents, remembering those it created. */
  const mkdirs = async (dir: string) => {
    const missing: string[] = [];
    for (let d = dir; d !== '/' && !known.has(d); d = parentPath(d)) {
      const st = await r.files.statOrNull(d, { signal: r.signal });
      if (st) {
        if (!st.isDir) throw new FsError(FsErrorCode.NotDirectory, `${d} is not a directory`, { path: d });
        known.add(d);
        break;
      }
      missing.unshift(d);
    }
    for (const d of missing) {
      await r.files.mkdir(d, { signal: r.signal });
      createdDirs.push(d);
      known.add(d);
    }
  };
  let inflated = 0;
  let files = 0;
  try {
    await mkdirs(target);
    for (const p of plan) {
      if (r.signal.aborted) throw FsError.aborted(p.vpath);
      if (p.isDir) {
        await mkdirs(p.vpath);
        continue;
      }
      if (p.skip) continue;
      await mkdirs(parentPath(p.vpath));
      const rs = await entryStream(zf, p.entry);
      const counted = new Inflated((n) => {
        inflated += n;
        return inflated > cfg.max_size ? new ZipRefused(`uncompressed size above max_size (${cfg.max_size} bytes)`) : null;
      });
      rs.on('error', (err) => counted.destroy(err instanceof FsError ? err : new ZipRefused(`${p.entry.fileName}: ${err.message}`)));
      // an entry can fail (sizes that lie) before the write below consumes it: the error is kept for the write
      counted.on('error', () => undefined);
      // a write that fails before the end stops reading the entry (and the archive's byte range)
      counted.once('close', () => {
        if (!rs.readableEnded) rs.destroy();
      });
      rs.pipe(counted);
      const existed = cfg.overwrite === Overwrite.Replace && !!(await r.files.statOrNull(p.vpath, { signal: r.signal }));
      await r.files.write(p.vpath, counted, { size: p.entry.uncompressedSize, mtime: p.entry.getLastModDate(), signal: r.signal });
      if (!existed) createdFiles.push(p.vpath);
      files++;
    }
    return { files, bytes: inflated };
  } catch (err) {
    for (const f of createdFiles.reverse()) await r.files.remove(f).catch(() => undefined);
    for (const d of createdDirs.reverse()) await r.files.remove(d).catch(() => undefined);
    throw err;
  }
}
