import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import {
  FsError,
  FsErrorCode,
  isFsError,
  normalizeVirtualPath,
  parentPath,
  throwIfFsAborted,
  type FileInfo,
  type Fs,
  type ListOptions,
  type MkdirOptions,
  type OpOptions,
  type ReadOptions,
  type RemoveOptions,
  type RenameOptions,
  type UsedSpace,
  type WriteHandle,
  type WriteOptions,
} from '@ferry/core';
import { HttpFsClient, MAX_JSON_BYTES } from './client.js';
import type { HttpFsSettings } from './config.schema.js';
import { HTTP_CAPABILITIES } from './constants.js';
import { openRange } from './read.js';
import { startUpload } from './upload.js';
import { childPath, TEMP_NAME, tempPathFor, toFileInfo, type WireFileInfo } from './wire.js';

/**
 * Declared capabilities (see README, "Capabilities"):
 * - rangeRead: `open` takes an offset; the end is enforced client side.
 * - atomicRename: the protocol's rename is POSIX rename(2) (the reference
 *   server uses it); a server that cannot rename atomically is not compliant.
 * - atomicUpload: temporary sibling + rename, see upload.ts.
 * - settableMtime: `chtimes`. No copy route, so no serverSideCopy.
 * - truncate: the truncate route. No writeAtOffset: uploads are written whole.
 */
/** statvfs answer, as the protocol defines it. */
export interface StatVfs {
  bsize: number;
  frsize: number;
  blocks: number;
  bfree: number;
  bavail: number;
  files: number;
  ffree: number;
  favail: number;
  fsid: number;
  flag: number;
  namemax: number;
}

const REMOVE_CONCURRENCY = 8;

/** An Fs over one httpfs endpoint. Cheap: connections live in the shared AgentPool. */
export class HttpFs implements Fs {
  readonly capabilities = HTTP_CAPABILITIES;
  private readonly lifetime = new AbortController();
  readonly client: HttpFsClient;

  constructor(settings: HttpFsSettings, dispatcher: Dispatcher) {
    this.client = new HttpFsClient(settings, dispatcher, this.lifetime.signal);
  }

  private check(path: string): string {
    if (this.lifetime.signal.aborted) throw new FsError(FsErrorCode.Unavailable, `${path}: this Fs is closed`, { path });
    return normalizeVirtualPath(path);
  }

  async stat(path: string, o: OpOptions = {}): Promise<FileInfo> {
    const p = this.check(path);
    const w = await this.client.json<WireFileInfo>({ method: 'GET', op: 'stat', path: p, signal: o.signal });
    return toFileInfo(w, p);
  }

  async exists(path: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.stat(path, { signal });
      return true;
    } catch (err) {
      if (isFsError(err, FsErrorCode.NotFound)) return false;
      throw err;
    }
  }

  /** One readdir call: the protocol has no paging, so pages are cut here. */
  private async readdir(p: string, signal: AbortSignal | undefined, withTemp: boolean): Promise<FileInfo[]> {
    const wire = await this.client.json<unknown>({ method: 'GET', op: 'readdir', path: p, signal }, MAX_JSON_BYTES);
    if (!Array.isArray(wire)) {
      throw new FsError(FsErrorCode.Unavailable, `${p}: httpfs server sent a malformed listing`, { path: p });
    }
    const out: FileInfo[] = [];
    for (const w of wire as WireFileInfo[]) {
      const child = childPath(p, (w as WireFileInfo | null)?.name);
      if (child === undefined) continue;
      if (!withTemp && TEMP_NAME.test(w.name as string)) continue;
      out.push(toFileInfo(w, child));
    }
    return out;
  }

  async *list(path: string, o: ListOptions = {}): AsyncIterable<FileInfo[]> {
    const p = this.check(path);
    const pageSize = o.pageSize ?? 1000;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      throw new FsError(FsErrorCode.Invalid, `${p}: pageSize must be a positive integer`, { path: p });
    }
    const entries = await this.readdir(p, o.signal, false);
    for (let i = 0; i < entries.length; i += pageSize) {
      throwIfFsAborted(o.signal, p);
      yield entries.slice(i, i + pageSize);
    }
  }

  async openRead(path: string, o: ReadOptions = {}): Promise<Readable> {
    return openRange(this.client, this.check(path), o);
  }

  async openWrite(path: string, o: WriteOptions = {}): Promise<WriteHandle> {
    const p = this.check(path);
    throwIfFsAborted(o.signal, p);
    if (p === '/') throw new FsError(FsErrorCode.IsDirectory, '/: is a directory', { path: p });
    // One cheap round trip spares uploading a whole file only to fail at publish.
    const existing = await this.stat(p, { signal: o.signal }).catch((err: unknown) => {
      if (isFsError(err, FsErrorCode.NotFound)) return undefined;
      throw err;
    });
    if (existing?.isDir) throw new FsError(FsErrorCode.IsDirectory, `${p}: is a directory`, { path: p });
    if (existing && o.overwrite === false) throw FsError.exists(p);
    return startUpload(this.client, this, p, tempPathFor(p), o);
  }

  async rename(from: string, to: string, o: RenameOptions = {}): Promise<void> {
    const src = this.check(from);
    const dst = this.check(to);
    if (src === '/' || dst === '/') {
      throw new FsError(FsErrorCode.Permission, '/: the root cannot be renamed or replaced', { path: '/' });
    }
    if (src === dst) {
      await this.stat(src, o);
      return;
    }
    await this.client.call({ method: 'PATCH', op: 'rename', path: src, query: { target: dst }, signal: o.signal });
    o.onProgress?.(1);
  }

  /**
   * Cross-mount move on the same httpfs endpoint (the provider's sameResource matched,
   * see equality_check_mode): both mounts share the endpoint's root, so this is one
   * rename on the server, sent with this (the destination's) credentials.
   */
  async renameFrom(source: Fs, from: string, to: string, o: RenameOptions = {}): Promise<void> {
    if (!(source instanceof HttpFs) || source.client.settings.endpoint !== this.client.settings.endpoint) {
      throw FsError.notSupported('a server-side move from another storage');
    }
    await this.rename(from, to, o);
  }

  private async removeOne(p: string, signal?: AbortSignal): Promise<void> {
    await this.client.call({ method: 'DELETE', op: 'remove', path: p, signal });
  }

  async remove(path: string, o: RemoveOptions = {}): Promise<void> {
    const p = this.check(path);
    if (p === '/') throw new FsError(FsErrorCode.Permission, '/: the root cannot be removed', { path: p });
    try {
      await this.removeOne(p, o.signal);
    } catch (err) {
      if (!o.recursive || !isFsError(err, FsErrorCode.NotEmpty)) throw err;
      await this.removeTree(p, o.signal);
    }
  }

  /** Depth first: files in parallel, subdirectories one at a time, then the directory. */
  private async removeTree(p: string, signal?: AbortSignal): Promise<void> {
    const entries = await this.readdir(p, signal, true);
    const files = entries.filter((e) => !e.isDir);
    for (let i = 0; i < files.length; i += REMOVE_CONCURRENCY) {
      throwIfFsAborted(signal, p);
      await Promise.all(files.slice(i, i + REMOVE_CONCURRENCY).map((f) => this.removeGone(f.path, signal)));
    }
    for (const d of entries.filter((e) => e.isDir)) await this.removeTree(d.path, signal);
    await this.removeGone(p, signal);
  }

  /** Removes, tolerating a concurrent removal. */
  private async removeGone(p: string, signal?: AbortSignal): Promise<void> {
    await this.removeOne(p, signal).catch((err: unknown) => {
      if (!isFsError(err, FsErrorCode.NotFound)) throw err;
    });
  }

  /** Best effort (cleanup paths): never throws, never waits on a caller's signal. */
  async removeQuietly(p: string): Promise<void> {
    if (this.lifetime.signal.aborted) return;
    await this.removeOne(p).catch(() => undefined);
  }

  async mkdir(path: string, o: MkdirOptions = {}): Promise<void> {
    const p = this.check(path);
    if (p === '/') {
      if (o.recursive) return;
      throw FsError.exists(p);
    }
    try {
      await this.client.call({ method: 'POST', op: 'mkdir', path: p, signal: o.signal });
    } catch (err) {
      if (!o.recursive) throw err;
      if (isFsError(err, FsErrorCode.NotFound)) {
        await this.mkdir(parentPath(p), o);
        await this.mkdir(p, { signal: o.signal }).catch((e: unknown) => this.existingDir(p, e, o.signal));
        return;
      }
      await this.existingDir(p, err, o.signal);
    }
  }

  /** mkdir -p: EXISTS is fine when the path is a directory (created meanwhile or before). */
  private async existingDir(p: string, err: unknown, signal?: AbortSignal): Promise<void> {
    if (!isFsError(err, FsErrorCode.Exists)) throw err;
    if (!(await this.stat(p, { signal })).isDir) throw FsError.exists(p);
  }

  /** Sets the modification time (the access time becomes now). */
  async chtimes(path: string, mtime: Date, o: OpOptions = {}): Promise<void> {
    await this.setMtime(this.check(path), mtime, o.signal);
  }

  async setMtime(p: string, mtime: Date, signal?: AbortSignal): Promise<void> {
    if (Number.isNaN(mtime.getTime())) throw new FsError(FsErrorCode.Invalid, `${p}: invalid mtime`, { path: p });
    await this.client.call({
      method: 'PATCH',
      op: 'chtimes',
      path: p,
      query: { access_time: new Date().toISOString(), modification_time: mtime.toISOString() },
      signal,
    });
  }

  /**
   * Totals with `dirsize` (one request, the server walks); servers that answer
   * 501 get a client-side walk instead.
   */
  async usedSpace(path = '/', o: OpOptions = {}): Promise<UsedSpace> {
    const p = this.check(path);
    try {
      const r = await this.client.json<{ files?: unknown; size?: unknown }>({
        method: 'GET',
        op: 'dirsize',
        path: p,
        signal: o.signal,
      });
      const ok = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
      if (!ok(r?.files) || !ok(r?.size)) {
        throw new FsError(FsErrorCode.Unavailable, `${p}: httpfs server sent a malformed dirsize`, { path: p });
      }
      return { files: r.files, size: r.size };
    } catch (err) {
      if (!isFsError(err, FsErrorCode.NotSupported)) throw err;
      return this.walkSize(p, o.signal);
    }
  }

  private async walkSize(p: string, signal?: AbortSignal): Promise<UsedSpace> {
    const info = await this.stat(p, { signal });
    if (!info.isDir) return { files: 1, size: info.size };
    const total: UsedSpace = { files: 0, size: 0 };
    const stack = [p];
    while (stack.length > 0) {
      const dir = stack.pop() as string;
      for (const e of await this.readdir(dir, signal, false)) {
        if (e.isDir) stack.push(e.path);
        else {
          total.files += 1;
          total.size += e.size;
        }
      }
      await new Promise((r) => setImmediate(r));
    }
    return total;
  }

  /** Protocol extras, outside the Fs contract. */
  async statVfs(path = '/', o: OpOptions = {}): Promise<StatVfs> {
    return this.client.json<StatVfs>({ method: 'GET', op: 'statvfs', path: this.check(path), signal: o.signal });
  }

  async mimeType(path: string, o: OpOptions = {}): Promise<string> {
    const p = this.check(path);
    const r = await this.client.json<{ mime?: unknown }>({ method: 'GET', op: 'mimetype', path: p, signal: o.signal });
    if (typeof r?.mime !== 'string') {
      throw new FsError(FsErrorCode.Unavailable, `${p}: httpfs server sent a malformed mimetype`, { path: p });
    }
    return r.mime;
  }

  async chmod(path: string, mode: number, o: OpOptions = {}): Promise<void> {
    const p = this.check(path);
    await this.client.call({ method: 'PATCH', op: 'chmod', path: p, query: { mode: mode & 0o7777 }, signal: o.signal });
  }

  async truncate(path: string, size: number, o: OpOptions = {}): Promise<void> {
    const p = this.check(path);
    if (!Number.isSafeInteger(size) || size < 0) {
      throw new FsError(FsErrorCode.Invalid, `${p}: size must be a non-negative integer`, { path: p });
    }
    await this.client.call({ method: 'PATCH', op: 'truncate', path: p, query: { size }, signal: o.signal });
  }

  /** Cancels this instance's in-flight requests; the shared connection pool stays open. */
  async close(): Promise<void> {
    this.lifetime.abort(FsError.aborted());
  }
}
