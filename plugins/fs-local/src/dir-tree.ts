import type { Dir, Dirent, Stats } from 'node:fs';
import { lstat, opendir, rmdir, unlink } from 'node:fs/promises';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { FsError, FsErrorCode, fsErrorFromNode, hasNodeCode, throwIfFsAborted, type FileInfo, type FsLogger, type UsedSpace } from '@ferry/core';
import { refuseReserved, type DirHandle, type LocalRoot, type Located } from './confine.js';
import { batchIo, WorkerEntryStats, type EntryStats, type WorkerStat, type WorkerSweep } from './batch-io.js';
import { rethrowFor, statLocated } from './locate.js';
import { isReservedName, sweepHiddenTmp } from './temp-area.js';

const childPath = (dir: string, name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);
const LIST_STAT_CONCURRENCY = 64;
/** From this many entries, a page is stat'ed by the batch I/O worker in one go. */
const WORKER_MIN = 32;
/** Entries of a removed directory taken per request to the worker (each message some 10 ms of its time: a deletion does not hold the small reads of other requests up for long). */
const SWEEP_GROUP = 1024;
/** Files stat'ed per request to the worker when the space used under a directory is counted. */
const STAT_GROUP = 1024;
const YIELD_EVERY = 512;
/**
 * A directory of at most this many entries is listed by one request to the
 * batch I/O worker (read and stat'ed there); a larger one is read in pages.
 */
export const WHOLE_DIR_MAX = 1024;

/** What the directory walks of one LocalFs need from it. */
export interface DirTreeSettings {
  /** The FileInfo of an entry (the LocalFs's, which a subclass may change). */
  toInfo: (vpath: string, st: EntryStats) => FileInfo;
  /** Size reported for a regular file stored with `rawSize` bytes. */
  reportedSize: (rawSize: number) => number;
  /** Age after which a hidden `.ferry-tmp-*` file met on the way is a crash leftover (see temp-area.ts). */
  hiddenTmpMaxAgeMs: number;
  /** Where refused entries (links leading outside the root) are logged. */
  logger?: FsLogger;
}

/**
 * The directory walks of one LocalFs, all on descriptors: listings, the
 * removal of a tree, and the used-space count. Entries of the reserved
 * `.ferry-tmp-` namespace are never shown or counted; crash leftovers among
 * them are swept on the way.
 */
export class DirTree {
  constructor(
    private readonly confine: LocalRoot,
    private readonly s: DirTreeSettings,
  ) {}

  /** The entries of the directory `vpath` (normalised), in pages of `pageSize`. */
  async *list(vpath: string, pageSize: number, signal?: AbortSignal): AsyncIterable<FileInfo[]> {
    const quick = await this.quickList(vpath, pageSize);
    if (quick) {
      for (const page of quick) {
        throwIfFsAborted(signal, vpath);
        yield page;
      }
      return;
    }
    const handle = await this.confine.openDir(vpath);
    try {
      // a small directory: read and stat'ed by the worker in one go (a failure: read in pages, which reports it)
      const whole = await batchIo.list(handle.path, WHOLE_DIR_MAX).catch(() => undefined);
      if (whole) {
        yield* this.wholeDir(handle, vpath, whole.names, whole.stats, pageSize, signal);
        return;
      }
      const dir: Dir = await opendir(handle.path, { bufferSize: Math.min(pageSize, 1024) }).catch(rethrowFor(vpath));
      try {
        let batch: Dirent[] = [];
        let reserved: string[] = [];
        for (;;) {
          throwIfFsAborted(signal, vpath);
          const entry = await dir.read().catch(rethrowFor(vpath));
          // Entries in the reserved namespace are never listed; leftovers among them are swept.
          if (entry && isReservedName(entry.name)) reserved.push(entry.name);
          else if (entry) batch.push(entry);
          if (batch.length === pageSize || (!entry && batch.length > 0)) {
            const page = await this.pageOf(handle, vpath, batch);
            batch = [];
            if (page.length) yield page;
          }
          if (reserved.length >= LIST_STAT_CONCURRENCY || (!entry && reserved.length > 0)) {
            await this.sweep(handle.path, reserved);
            reserved = [];
          }
          if (!entry) break;
        }
      } finally {
        await dir.close().catch(() => undefined);
      }
    } finally {
      await handle.close();
    }
  }

  /**
   * A small subdirectory of plain entries in one message to the worker
   * (batchIo.listAt: opened, located and listed there), used only when the
   * directory it opened is inside the root (the check openDir makes on its
   * fast path). Anything else (the root, a directory the worker could not
   * open, a large one, links or reserved names among the entries) is
   * undefined: list() then takes its usual path, which gives the precise
   * answer.
   */
  private async quickList(vpath: string, pageSize: number): Promise<FileInfo[][] | undefined> {
    if (vpath === '/') return undefined;
    refuseReserved(vpath);
    const comps = vpath.slice(1).split('/');
    const got = await batchIo.listAt(`${this.confine.root}/${comps.join('/')}`, WHOLE_DIR_MAX).catch(() => undefined);
    if (!got) return undefined;
    await this.confine.verifiedComps(comps, got.real, vpath);
    const pages: FileInfo[][] = [];
    let page: FileInfo[] = [];
    for (let i = 0; i < got.names.length; i++) {
      const name = got.names[i]!;
      const st = got.stats[i]!;
      if (isReservedName(name)) return undefined;
      if (st.k === 'error') continue; // gone since it was read (as the lstat of pageOf)
      const entry = new WorkerEntryStats(st);
      if (entry.isSymbolicLink()) return undefined;
      page.push(this.s.toInfo(childPath(vpath, name), entry));
      if (page.length === pageSize) {
        pages.push(page);
        page = [];
      }
    }
    if (page.length) pages.push(page);
    return pages;
  }

  /**
   * The pages of a whole directory the worker read (`names` and their
   * `stats`): the same pages, with the same entries, as the listing read in
   * pages gives; reserved names are left out and their leftovers swept.
   */
  private async *wholeDir(
    dir: DirHandle,
    vdir: string,
    names: string[],
    stats: WorkerStat[],
    pageSize: number,
    signal?: AbortSignal,
  ): AsyncIterable<FileInfo[]> {
    const reserved = names.filter(isReservedName);
    if (reserved.length) await this.sweep(dir.path, reserved);
    const shown = reserved.length ? names.flatMap((name, i) => (isReservedName(name) ? [] : [i])) : names.map((_, i) => i);
    for (let i = 0; i < shown.length; i += pageSize) {
      throwIfFsAborted(signal, vdir);
      const page = shown.slice(i, i + pageSize);
      const infos = await this.infosOf(
        dir,
        vdir,
        page.map((j) => names[j]!),
        page.map((j) => stats[j]!),
      );
      if (infos.length) yield infos;
    }
  }

  /**
   * FileInfo for a page of entries. A symlink is reported as its target when
   * that stays inside the root; a link leading outside, dangling or looping
   * is left out of the listing (and logged), as zips and scans leave it out.
   */
  private async pageOf(dir: DirHandle, vdir: string, entries: Dirent[]): Promise<FileInfo[]> {
    const out: (FileInfo | undefined)[] = [];
    const names = entries.map((d) => d.name);
    const stats = entries.length >= WORKER_MIN ? await batchIo.lstat(dir.path, names).catch(() => undefined) : undefined;
    if (stats) return this.infosOf(dir, vdir, names, stats);
    for (let i = 0; i < entries.length; i += LIST_STAT_CONCURRENCY) {
      const slice = entries.slice(i, i + LIST_STAT_CONCURRENCY);
      out.push(
        ...(await Promise.all(
          slice.map(async (d) => {
            const vpath = childPath(vdir, d.name);
            const st = await lstat(dir.entry(d.name)).catch(() => undefined);
            if (!st?.isSymbolicLink()) return st && this.s.toInfo(vpath, st);
            const target = await this.followLink(dir, d.name, vpath);
            return target && this.s.toInfo(vpath, target);
          }),
        )),
      );
    }
    return out.filter((i): i is FileInfo => i !== undefined);
  }

  /** FileInfo for the entries `names` of `dir` from the lstat the worker answered for each (see pageOf). */
  private async infosOf(dir: DirHandle, vdir: string, names: readonly string[], stats: readonly WorkerStat[]): Promise<FileInfo[]> {
    const out: FileInfo[] = [];
    for (let i = 0; i < names.length; i++) {
      const st = stats[i]!;
      const vpath = childPath(vdir, names[i]!);
      if (st.k === 'error') continue; // gone since it was read (as the lstat of pageOf)
      const entry = new WorkerEntryStats(st);
      if (!entry.isSymbolicLink()) out.push(this.s.toInfo(vpath, entry));
      else {
        const target = await this.followLink(dir, names[i]!, vpath);
        if (target) out.push(this.s.toInfo(vpath, target));
      }
    }
    return out;
  }

  /** Removes crash leftovers among the reserved `names` of the directory `dir` (never fails). */
  private async sweep(dir: string, names: string[]): Promise<void> {
    await sweepHiddenTmp(dir, names, this.s.hiddenTmpMaxAgeMs).catch(() => undefined);
  }

  /** Stats what the link `name` of `dir` leads to, when that is inside the root; undefined (logged) otherwise. */
  private async followLink(dir: DirHandle, name: string, vpath: string): Promise<Stats | undefined> {
    let loc: Located | undefined;
    try {
      loc = await this.confine.locateComps([...dir.comps, name], 'follow', vpath);
      return await statLocated(loc);
    } catch (err) {
      this.s.logger?.warn({ path: vpath, reason: err instanceof Error ? err.message : String(err) }, 'symbolic link left out of a listing');
      return undefined;
    } finally {
      await loc?.dir.close();
    }
  }

  /**
   * Removes the directory `name` of `parent` and everything in it, on
   * descriptors: each subdirectory is opened through its parent without
   * following links, so a directory swapped for a link meanwhile is unlinked
   * as a link, never entered. Adds each regular file it removes to
   * `removed` as usedSpace() counts them (none of the reserved namespace),
   * so the caller knows what went even when it fails midway.
   */
  async removeTree(parent: DirHandle, name: string, vpath: string, signal?: AbortSignal, removed?: UsedSpace): Promise<void> {
    const dir = await this.confine.openChild(parent, name).catch(rethrowFor(vpath));
    if (!dir) {
      // No longer a directory (or gone): remove whatever entry is there now.
      await unlink(parent.entry(name)).catch((err: unknown) => {
        if (!hasNodeCode(err, 'ENOENT')) throw fsErrorFromNode(err, vpath);
      });
      return;
    }
    // what a reserved directory holds is not counted (usedSpace does not enter it)
    const tally = removed && !isReservedName(name) ? removed : undefined;
    const count = (file: string, size: number): void => {
      if (!tally || isReservedName(file)) return;
      tally.size += this.s.reportedSize(size);
      tally.files++;
    };
    try {
      const subdirs = (await this.sweepFiles(dir, vpath, count, !!tally, signal)) ?? (await this.unlinkFiles(dir, vpath, count, !!tally, signal));
      for (const sub of subdirs) {
        throwIfFsAborted(signal, vpath);
        await this.removeTree(dir, sub, vpath, signal, tally);
      }
    } finally {
      await dir.close();
    }
    await rmdir(parent.entry(name)).catch((err: unknown) => {
      if (!hasNodeCode(err, 'ENOENT')) throw fsErrorFromNode(err, vpath, { EEXIST: FsErrorCode.NotEmpty });
    });
  }

  /**
   * The files of a removed directory, unlinked by the batch I/O workers a
   * group at a time (each lstat'ed first when counted: one message per
   * group for what took a round trip to the thread pool per call). The
   * first group is taken from the whole directory, so a small one is done
   * in one message; what is left past it is split in as many parts as there
   * are workers, swept at once. Answers the subdirectories, or undefined
   * when a worker failed (the caller then removes what is left with
   * promises).
   */
  private async sweepFiles(
    dir: DirHandle,
    vpath: string,
    count: (file: string, size: number) => void,
    counted: boolean,
    signal?: AbortSignal,
  ): Promise<string[] | undefined> {
    /** Sweeps `part` of the directory (all of it when undefined), at most `groups` groups; `skip` and `subdirs` grow as it goes. */
    const sweepPart = async (
      part: readonly [number, number] | undefined,
      skip: string[],
      subdirs: string[],
      groups = Infinity,
    ): Promise<'done' | 'more' | 'failed'> => {
      for (let g = 0; g < groups; g++) {
        throwIfFsAborted(signal, vpath);
        let group: WorkerSweep;
        try {
          group = await batchIo.sweep(dir.path, skip, SWEEP_GROUP, counted, part);
        } catch (err) {
          // the directory went (done), or the worker failed or cannot read it: the promise path reads what is left (or fails with the reason)
          return hasNodeCode(err, 'ENOENT') ? 'done' : 'failed';
        }
        for (const f of group.files) count(f.name, f.size);
        skip.push(...group.dirs);
        subdirs.push(...group.dirs);
        for (const f of group.failed) {
          skip.push(f.name);
          if (hasNodeCode(f, 'ENOENT')) continue;
          // a directory whose type the listing did not give
          if (hasNodeCode(f, 'EISDIR', 'EPERM')) subdirs.push(f.name);
          else throw fsErrorFromNode(Object.assign(new Error(f.message), { code: f.code }), vpath);
        }
        if (!group.more) return 'done';
      }
      return 'more';
    };
    const parts = batchIo.parallelism;
    const skip: string[] = [];
    const subdirs: string[] = [];
    const first = await sweepPart(undefined, skip, subdirs, parts > 1 ? 1 : Infinity);
    if (first !== 'more') return first === 'done' ? subdirs : undefined;
    // every part runs to its end (none is left running when one fails), then the first failure counts
    const done = await Promise.allSettled(
      Array.from({ length: parts }, async (_, k) => {
        const found: string[] = [];
        return { state: await sweepPart([k, parts], [...skip], found), found };
      }),
    );
    for (const d of done) {
      if (d.status === 'rejected') throw d.reason;
      if (d.value.state !== 'done') return undefined;
      subdirs.push(...d.value.found);
    }
    return subdirs;
  }

  /** sweepFiles() with promises, one call at a time: the files of `dir` unlinked (lstat'ed first when counted), its subdirectories answered. */
  private async unlinkFiles(
    dir: DirHandle,
    vpath: string,
    count: (file: string, size: number) => void,
    counted: boolean,
    signal?: AbortSignal,
  ): Promise<string[]> {
    const subdirs: string[] = [];
    for await (const d of await opendir(dir.path, { bufferSize: 256 }).catch(rethrowFor(vpath))) {
      throwIfFsAborted(signal, vpath);
      if (d.isDirectory()) {
        subdirs.push(d.name);
        continue;
      }
      const st = counted ? await lstat(dir.entry(d.name)).catch(() => undefined) : undefined;
      if (st?.isDirectory()) {
        subdirs.push(d.name);
        continue;
      }
      try {
        await unlink(dir.entry(d.name));
        if (st?.isFile()) count(d.name, st.size);
      } catch (err) {
        if (hasNodeCode(err, 'EISDIR', 'EPERM')) subdirs.push(d.name);
        else if (!hasNodeCode(err, 'ENOENT')) throw fsErrorFromNode(err, vpath);
      }
    }
    return subdirs;
  }

  /**
   * For rmdir: when the directory `name` of `parent` holds nothing but
   * reserved entries, removes the leftovers among them and returns true.
   * Stops reading at the first entry a user could see, so a full directory
   * costs one read.
   */
  async clearLeftovers(parent: DirHandle, name: string): Promise<boolean> {
    const dir = await this.confine.openChild(parent, name).catch(() => undefined);
    if (!dir) return false;
    try {
      const names: string[] = [];
      const reader = await opendir(dir.path, { bufferSize: 32 }).catch(() => undefined);
      if (!reader) return false;
      try {
        for await (const d of reader) {
          if (!isReservedName(d.name)) return false;
          names.push(d.name);
          if (names.length > 1024) return false;
        }
      } catch {
        return false;
      }
      return (await sweepHiddenTmp(dir.path, names, 0)) > 0;
    } finally {
      await dir.close();
    }
  }

  /**
   * The space used under `vpath` (normalised). Walks on descriptors (each
   * subdirectory opened through its parent without following links), reads
   * entries as they stream in, stats files in small concurrent batches and
   * yields to the event loop every few hundred entries. Symlinks are not
   * followed or counted (what they lead to inside the root is counted where
   * it is).
   */
  async usedSpace(vpath: string, signal?: AbortSignal): Promise<UsedSpace> {
    const loc = await this.confine.locate(vpath, 'follow');
    let top: DirHandle;
    try {
      if (loc.name) {
        const st = await statLocated(loc).catch(rethrowFor(vpath));
        if (!st.isDirectory()) return st.isFile() ? { size: this.s.reportedSize(st.size), files: 1 } : { size: 0, files: 0 };
        const child = await this.confine.openChild(loc.dir, loc.name).catch(rethrowFor(vpath));
        if (!child) throw FsError.notFound(vpath);
        top = child;
      } else {
        top = loc.dir;
      }
    } catch (err) {
      await loc.dir.close();
      throw err;
    }
    if (top !== loc.dir) await loc.dir.close();
    const total: UsedSpace = { size: 0, files: 0 };
    let seen = 0;
    const walk = async (dir: DirHandle): Promise<void> => {
      const add = (st: { isFile(): boolean; size: number } | undefined): void => {
        if (st?.isFile()) {
          total.size += this.s.reportedSize(st.size);
          total.files++;
        }
      };
      // many files: stat'ed by the batch I/O worker in one go (one by one, a few at once, when it fails)
      const count = async (files: string[]): Promise<void> => {
        const stats = files.length >= WORKER_MIN ? await batchIo.lstat(dir.path, files).catch(() => undefined) : undefined;
        if (stats) {
          for (const st of stats) if (st.k === 'stat') add(new WorkerEntryStats(st));
          return;
        }
        for (let i = 0; i < files.length; i += LIST_STAT_CONCURRENCY) {
          const slice = files.slice(i, i + LIST_STAT_CONCURRENCY);
          for (const st of await Promise.all(slice.map((f) => lstat(dir.entry(f)).catch(() => undefined)))) add(st);
        }
      };
      const reader = await opendir(dir.path, { bufferSize: 256 }).catch((err: unknown) => {
        if (hasNodeCode(err, 'ENOENT') && dir !== top) return undefined;
        throw fsErrorFromNode(err, vpath);
      });
      if (!reader) return;
      const subdirs: string[] = [];
      let files: string[] = [];
      let reserved: string[] = [];
      for await (const d of reader) {
        if (isReservedName(d.name)) reserved.push(d.name);
        else if (d.isDirectory()) subdirs.push(d.name);
        else if (d.isFile()) files.push(d.name);
        if (files.length >= STAT_GROUP) {
          await count(files);
          files = [];
        }
        if (reserved.length >= LIST_STAT_CONCURRENCY) {
          await this.sweep(dir.path, reserved);
          reserved = [];
        }
        if (++seen % YIELD_EVERY === 0) {
          throwIfFsAborted(signal, vpath);
          await yieldToLoop();
        }
      }
      await count(files);
      if (reserved.length) await this.sweep(dir.path, reserved);
      for (const name of subdirs) {
        const child = await this.confine.openChild(dir, name).catch(() => undefined);
        if (!child) continue;
        try {
          await walk(child);
        } finally {
          await child.close();
        }
      }
    };
    try {
      await walk(top);
    } finally {
      await top.close();
    }
    return total;
  }
}
