import type { Readable } from 'node:stream';
import { ONE_SHOT_MAX, ZipWriter } from '@ferry/zip-writer';
import type { FileInfo, Fs, SmallFileRead } from '../fs/fs.contract.js';
import { FsError, FsErrorCode, isFsError } from '../fs/fs-error.js';
import { RequestFsBatch } from '../fs/fs-batch.js';
import { baseName, parentPath } from '../fs/path.js';
import type { FileSession } from './file-session.js';
import { STAGE_HWM } from './transfers.js';
import { meteredDownload, type DownloadStream } from './downloads.js';
import { settleAfterBulkWork } from './gc-pacer.js';
import { consumeAhead } from '../util/consume-ahead.js';

/** True for a regular file's mode, or a mode without type bits (backends that do not report one). */
function isRegularMode(mode: number): boolean {
  const type = mode & 0o170000;
  return type === 0 || type === 0o100000;
}

/** Files up to this size are read whole before their entry is written (and read ahead). */
const SMALL_FILE = ONE_SHOT_MAX;
/** Entries prepared ahead of the one being written (small files read in the meantime). */
const PREFETCH = 8;
/**
 * On a backend that reads small files in groups (Fs.readSmallFiles), the
 * small files of one directory are read this many at a time...
 */
const GROUP_FILES = 64;
/** ...or fewer, about this many bytes (as listed). */
const GROUP_BYTES = 512 * 1024;
/** Entries prepared ahead when they are read in groups: two groups, one read while the other is written. */
const GROUPED_AHEAD = 2 * GROUP_FILES;

/**
 * A small file's bytes (`head`), or, for a file that turned out larger than
 * listed or was too large to read ahead, its first bytes and the open stream
 * of the rest.
 */
interface SmallBody {
  head: Buffer[];
  rest?: Readable;
}

type Settled<T> = { ok: T } | { err: unknown };

/** A promise that never rejects (one read ahead may fail long before it is awaited). */
function settle<T>(p: Promise<T>): Promise<Settled<T>> {
  return p.then(
    (ok) => ({ ok }),
    (err: unknown) => ({ err }),
  );
}

/**
 * Reads an opened file whole, up to SMALL_FILE bytes; a larger one (grown
 * since it was listed) keeps its first chunks and the (paused) stream of the
 * rest. Events, not an async iterator: this runs for every small file.
 */
async function readSmall(opening: Promise<Readable>): Promise<SmallBody> {
  const rs = await opening;
  return new Promise<SmallBody>((resolve, reject) => {
    const head: Buffer[] = [];
    let n = 0;
    // (the error listener stays: a stream handed on, or closing after its end, may still fail; the reader of the rest sees that too)
    const done = () => {
      rs.off('data', onData);
      rs.off('end', onEnd);
    };
    const onData = (chunk: Buffer) => {
      head.push(chunk);
      n += chunk.length;
      if (n <= SMALL_FILE) return;
      done();
      rs.pause();
      resolve({ head, rest: rs });
    };
    const onEnd = () => {
      done();
      resolve({ head });
    };
    const onError = (err: unknown) => {
      done();
      rs.destroy();
      reject(err);
    };
    rs.on('data', onData);
    rs.once('end', onEnd);
    rs.on('error', onError);
  });
}

/** The chunks of `head`, then those of `rest`. */
async function* prepend(head: Buffer[], rest: Readable): AsyncGenerator<Buffer> {
  yield* head;
  for await (const chunk of rest) yield chunk as Buffer;
}

interface ZipJob {
  vpath: string;
  info: FileInfo;
  /** Name inside the archive (without the trailing slash of a directory). */
  name: string;
  isDir: boolean;
  /** A small file's bytes, read ahead. */
  body?: Promise<Settled<SmallBody>>;
  /** The batch of the file's directory, while the file is still to be opened. */
  dir?: DirBatch;
  /** Read with others of its directory (Fs.readSmallFiles). */
  grouped?: boolean;
}

/**
 * The files of one directory are opened through one descriptor of it, opened
 * and checked once (local backends, see OpOptions.batch), held while any of
 * them is still to be opened: at most the directories of the entries read
 * ahead, whatever the size of the tree.
 */
class DirBatch {
  readonly batch = new RequestFsBatch();
  private pending = 0;
  private listed = false;
  constructor(private readonly all: Set<DirBatch>) {
    all.add(this);
  }
  acquire(): void {
    this.pending++;
  }
  /** One file of the directory is opened (or failed, or will not be). */
  release(): void {
    this.pending--;
    this.closeIfDone();
  }
  /** Every entry of the directory was listed. */
  done(): void {
    this.listed = true;
    this.closeIfDone();
  }
  private closeIfDone(): void {
    if (this.listed && this.pending === 0) {
      this.all.delete(this);
      void this.batch.close();
    }
  }
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
 * permission, are left out. Entries are written in order, one at a time;
 * small files are read whole, up to PREFETCH of them ahead of the one
 * being written (GROUPED_AHEAD when read in groups); larger ones are
 * streamed when their turn comes. The walk goes on while entries are
 * written (util/consume-ahead.ts).
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
    const zip = new ZipWriter({ level: 1, highWaterMark: STAGE_HWM });
    const fail = (err: unknown) => {
      if (!zip.destroyed) zip.destroy(err instanceof Error ? err : new Error(String(err)));
    };
    signal.addEventListener('abort', () => fail(FsError.aborted()), { once: true });
    /** An entry met inside a requested directory that cannot be read is left out of the archive, with a log line. */
    const skip = (vpath: string, reason: string) => s.deps.logger.warn({ path: vpath, user: s.user.username, reason }, 'left out of a zip');
    /**
     * Once the answer has started, an entry that cannot be read any more (a
     * link leading outside, a directory swapped or removed since it was
     * checked, a read failing midway) can no longer turn into an error
     * answer: it is left out, with a log line, and the archive stays
     * complete and valid. Only an abort (or a failure that is not the
     * storage's refusal) ends the archive.
     */
    const leftOut = (vpath: string, err: unknown): void => {
      if (!isFsError(err) || err.code === FsErrorCode.Aborted) throw err;
      skip(vpath, err.message);
    };
    const dirBatches = new Set<DirBatch>();
    /** Opens a file (in its directory's batch, which it then releases). */
    const open = async (vpath: string, dir?: DirBatch): Promise<Readable> => {
      try {
        const r = s.vfs.resolve(vpath);
        const fs = await s.vfs.fs(r.mount);
        return await fs.openRead(r.fsPath, { signal, batch: dir?.batch });
      } finally {
        dir?.release();
      }
    };
    const fileJob = (vpath: string, name: string, info: FileInfo, dir?: DirBatch): ZipJob | null => {
      if (!isRegularMode(info.mode)) {
        skip(vpath, 'not a regular file');
        return null;
      }
      const job: ZipJob = { vpath, name, info, isDir: false };
      if (info.size === 0) job.body = settle(Promise.resolve({ head: [] }));
      else {
        dir?.acquire();
        // small files are read whole, ahead of their turn (PREFETCH at a time); larger ones are opened at their turn
        if (info.size <= SMALL_FILE) job.body = settle(readSmall(open(vpath, dir)));
        else job.dir = dir;
      }
      return job;
    };
    /**
     * Reads the small files `group` of one directory together, when their
     * backend can (Fs.readSmallFiles); each file it answers undefined for, or
     * all when the group read itself fails (not the storage's refusal), is
     * read the usual way. Each file holds the directory's batch until read.
     */
    const readGroup = async (group: ZipJob[], dir: DirBatch): Promise<void> => {
      const resolved = group.map((j) => s.vfs.resolve(j.vpath));
      const { mount } = resolved[0]!;
      const fsDir = parentPath(resolved[0]!.fsPath);
      let fs: Fs | undefined;
      if (resolved.every((r) => r.mount === mount && parentPath(r.fsPath) === fsDir)) fs = await s.vfs.fs(mount).catch(() => undefined);
      const reading: Promise<SmallFileRead[]> | undefined = fs?.readSmallFiles?.(
        fsDir,
        resolved.map((r) => baseName(r.fsPath)),
        SMALL_FILE,
        { signal, batch: dir.batch },
      );
      group.forEach((job, i) => {
        dir.acquire();
        job.grouped = reading !== undefined;
        const body = async (): Promise<SmallBody> => {
          let got: SmallFileRead;
          try {
            got = reading ? (await reading)[i] : undefined;
          } catch (err) {
            if (isFsError(err)) {
              dir.release();
              throw err;
            }
            got = undefined;
          }
          if (got === undefined) return readSmall(open(job.vpath, dir));
          dir.release();
          if ('error' in got) throw got.error;
          job.info = { ...job.info, mtime: got.info.mtime };
          return { head: got.data.length > 0 ? [got.data] : [] };
        };
        job.body = settle(body());
      });
    };
    /** The entries of a requested directory, depth first; names hidden or not permitted are left out. */
    async function* walk(vpath: string, name: string, info: FileInfo): AsyncGenerator<ZipJob> {
      yield { vpath, name, info, isDir: true };
      const dir = new DirBatch(dirBatches);
      /** Small files waiting to be read together (in order, before any later entry). */
      let group: ZipJob[] = [];
      let groupBytes = 0;
      const flush = async function* (): AsyncGenerator<ZipJob> {
        if (group.length === 0) return;
        const jobs = group;
        group = [];
        groupBytes = 0;
        await readGroup(jobs, dir);
        yield* jobs;
      };
      try {
        for await (const page of s.vfs.list(vpath, { signal })) {
          for (const e of page) {
            if (!s.patterns.check(e.path).allowed) continue;
            if (e.isDir) {
              if (s.perms.has(e.path, 'list')) {
                yield* flush();
                yield* walk(e.path, `${name}/${e.name}`, e);
              }
            } else if (s.perms.has(vpath, 'download')) {
              if (isRegularMode(e.mode) && e.size > 0 && e.size <= SMALL_FILE) {
                group.push({ vpath: e.path, name: `${name}/${e.name}`, info: e, isDir: false });
                groupBytes += e.size;
                if (group.length >= GROUP_FILES || groupBytes >= GROUP_BYTES) yield* flush();
                continue;
              }
              yield* flush();
              const job = fileJob(e.path, `${name}/${e.name}`, e, dir);
              if (job) yield job;
            }
          }
        }
        yield* flush();
      } catch (err) {
        leftOut(vpath, err);
      } finally {
        dir.done();
      }
    }
    async function* jobs(): AsyncGenerator<ZipJob> {
      for (const it of items) {
        if (it.info.isDir) yield* walk(it.vpath, it.name, it.info);
        else {
          const job = fileJob(it.vpath, it.name, it.info);
          if (job) yield job;
        }
      }
    }
    const write = async (job: ZipJob): Promise<void> => {
      const { vpath, name, info } = job;
      if (job.isDir) return zip.addDirectory(name, { mtime: info.mtime });
      let body: SmallBody;
      if (job.body) {
        const got = await job.body;
        // refused or gone before its first byte was added (a link leading outside, a concurrent removal)
        if ('err' in got) return leftOut(vpath, got.err);
        body = got.ok;
      } else {
        const dir = job.dir;
        job.dir = undefined;
        try {
          body = { head: [], rest: await open(vpath, dir) };
        } catch (err) {
          return leftOut(vpath, err);
        }
      }
      const { head, rest } = body;
      if (!rest) return zip.addBuffer(name, head.length === 1 ? head[0]! : Buffer.concat(head), { mtime: info.mtime });
      try {
        await zip.addStream(name, head.length > 0 ? prepend(head, rest) : rest, { mtime: info.mtime, size: info.size });
      } catch (err) {
        if (zip.destroyed) throw err;
        leftOut(vpath, err);
      } finally {
        rest.destroy();
      }
    };
    void (async () => {
      const ahead: ZipJob[] = [];
      let entries = 0;
      try {
        // entries are written while the walk lists the next directory (a zip of 10,000 files waited 155-177 ms of ~600 for its next entry)
        await consumeAhead(
          jobs(),
          (job) => (job.grouped ? GROUPED_AHEAD : PREFETCH),
          (job) => {
            entries++;
            return write(job);
          },
          ahead,
        );
        await zip.finalize();
      } finally {
        // files read ahead and never written: close what is still open
        for (const job of ahead) void job.body?.then((got) => ('ok' in got ? got.ok.rest?.destroy() : undefined));
        // the directories of files never opened (files already open keep their own descriptors)
        for (const job of ahead) job.dir?.release();
        await Promise.all([...dirBatches].map((d) => d.batch.close()));
        settleAfterBulkWork(entries);
      }
    })().catch(fail);
    return zip;
  });
}
