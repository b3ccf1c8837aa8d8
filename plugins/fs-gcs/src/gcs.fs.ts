import type { Readable, Transform } from 'node:stream';
import type { Bucket, File, FileMetadata, GetFilesOptions } from '@google-cloud/storage';
import {
  FsError,
  FsErrorCode,
  baseName,
  emptyReadable,
  forEachConcurrently,
  isSubPath,
  moveKeyTree,
  normalizePrefix,
  normalizeVirtualPath,
  parentPath,
  prefixedKey,
  resolveReadRange,
  throwIfFsAborted,
  type FileInfo,
  type Fs,
  type ListOptions,
  type MkdirOptions,
  type OpOptions,
  type ReadOptions,
  type ReadWithInfo,
  type RemoveOptions,
  type RenameOptions,
  type UsedSpace,
  type WriteHandle,
  type WriteOptions,
} from '@ferry/core';
import { httpStatus, isNotFound, mapGcsError } from './gcs-errors.js';
import { GCS_CAPABILITIES, MTIME_META } from './constants.js';
import { startGcsUpload } from './gcs-upload.js';
import { crc32cCheck, crc32cOf, getMedia, type MediaAnswer } from './gcs-media.js';
import { bodyOf, drop, sameVersion, sliceOf, type Media } from './gcs-bodies.js';

const DIR_MODE = 0o040755;
const FILE_MODE = 0o100644;
const DIR_CONTENT_TYPE = 'application/x-directory';
/** Objects copied or deleted at once by rename()/remove() of a directory. */
const BATCH = 16;

export interface GcsSettings {
  keyPrefix: string;
  storageClass: string;
  acl: string;
  partSize: number;
  partMaxTimeMs: number;
  /** Attempts after a transient failure of one request of a resumable upload or a read (plugin config max_retries). */
  maxRetries: number;
  /** Whether reads of object bodies send the client's credentials (not to an emulator without endpoint_auth). */
  mediaAuth: boolean;
}

/** Endpoints whose media answers name no generation: their downloads ask the metadata first (openReadWithInfo). */
const WITHOUT_VERSION_HEADERS = new Set<string>();

/** An Fs over one bucket and key prefix. Directories are prefixes, made explicit by "dir/" marker objects. */
export class GcsFs implements Fs {
  readonly capabilities = GCS_CAPABILITIES;
  private readonly prefix: string;

  constructor(
    private readonly bucket: Bucket,
    private readonly s: GcsSettings,
  ) {
    this.prefix = normalizePrefix(s.keyPrefix);
  }

  /** Object key of a file path. */
  key(p: string): string {
    return prefixedKey(this.prefix, p);
  }
  /** Key prefix of a directory path ('' or 'a/b/' for the root). */
  private dirKey(p: string): string {
    return p === '/' ? this.prefix : this.key(p) + '/';
  }
  private pathOf(key: string): string {
    return '/' + key.slice(this.prefix.length).replace(/\/$/, '');
  }

  private fileInfo(path: string, md: FileMetadata): FileInfo {
    const custom = Number(md.metadata?.[MTIME_META]);
    const mtime = Number.isFinite(custom) && custom > 0 ? new Date(custom) : new Date(md.updated ?? md.timeCreated ?? 0);
    return { name: baseName(path), path, isDir: false, size: Number(md.size ?? 0), mtime, mode: FILE_MODE, ...(md.etag ? { etag: md.etag } : {}) };
  }
  private dirInfo(path: string, md?: FileMetadata): FileInfo {
    return { ...(md ? this.fileInfo(path, md) : { name: baseName(path), path, mtime: new Date(0) }), isDir: true, size: 0, mode: DIR_MODE };
  }

  /** Metadata of the object at `key`, or undefined when there is none. */
  private async head(key: string): Promise<FileMetadata | undefined> {
    try {
      const [md] = await this.bucket.file(key).getMetadata();
      return md;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Up to `n` objects under a key prefix (the directory marker included). */
  private async firstUnder(prefix: string, n = 1): Promise<File[]> {
    const [files] = await this.bucket.getFiles({ prefix, maxResults: n, autoPaginate: false });
    return files;
  }

  /** Every object under a key prefix, page by page. */
  private async *objectsUnder(prefix: string, signal?: AbortSignal): AsyncGenerator<File[]> {
    let query: GetFilesOptions | null = { prefix, maxResults: 1000, autoPaginate: false };
    while (query) {
      throwIfFsAborted(signal);
      const [files, next]: [File[], GetFilesOptions | null, unknown] = await this.bucket.getFiles(query);
      if (files.length > 0) yield files;
      query = next && next.pageToken ? next : null;
    }
  }

  private async dirExists(p: string): Promise<FileMetadata | boolean> {
    if (p === '/') return true;
    const [first] = await this.firstUnder(this.dirKey(p));
    if (!first) return false;
    return first.name === this.dirKey(p) ? first.metadata : true;
  }

  async stat(path: string, o: OpOptions = {}): Promise<FileInfo> {
    const p = normalizeVirtualPath(path);
    try {
      throwIfFsAborted(o.signal, p);
      if (p === '/') return this.dirInfo('/');
      const md = await this.head(this.key(p));
      if (md) return this.fileInfo(p, md);
      const dir = await this.dirExists(p);
      if (dir) return this.dirInfo(p, dir === true ? undefined : dir);
      throw FsError.notFound(p);
    } catch (err) {
      throw mapGcsError(err, 'stat', p);
    }
  }

  async *list(path: string, o: ListOptions = {}): AsyncIterable<FileInfo[]> {
    const p = normalizeVirtualPath(path);
    const pageSize = Math.max(1, o.pageSize ?? 1000);
    const prefix = this.dirKey(p);
    const seen = new Set<string>();
    const pending: FileInfo[] = [];
    let found = false;
    let query: GetFilesOptions | null = { prefix, delimiter: '/', maxResults: pageSize, autoPaginate: false };
    while (query) {
      throwIfFsAborted(o.signal, p);
      let files: File[];
      let next: GetFilesOptions | null;
      let resp: { prefixes?: string[] } | undefined;
      try {
        [files, next, resp] = (await this.bucket.getFiles(query)) as [File[], GetFilesOptions | null, { prefixes?: string[] }];
      } catch (err) {
        throw mapGcsError(err, 'list', p);
      }
      for (const f of files) {
        found = true;
        const name = f.name.slice(prefix.length);
        if (name === '' || name.includes('/')) continue; // the marker itself
        pending.push(this.fileInfo(this.pathOf(f.name), f.metadata));
      }
      for (const sub of resp?.prefixes ?? []) {
        found = true;
        const name = sub.slice(prefix.length, -1);
        if (name === '' || name.includes('/') || seen.has(sub)) continue; // some servers repeat prefixes on every page
        seen.add(sub);
        pending.push(this.dirInfo(this.pathOf(sub)));
      }
      while (pending.length >= pageSize) yield pending.splice(0, pageSize);
      query = next && next.pageToken ? next : null;
    }
    if (!found && p !== '/') {
      const file = await this.head(this.key(p)).catch((err: unknown) => {
        throw mapGcsError(err, 'list', p);
      });
      if (file) throw new FsError(FsErrorCode.NotDirectory, `${p}: not a directory`, { path: p });
      throw FsError.notFound(p);
    }
    if (pending.length > 0) yield pending;
  }

  /**
   * One request: the object's body, without asking its metadata first (a
   * download asked stat() already; a second round trip per read would only
   * add latency). A whole object is checked against its crc32c, a range
   * cannot be checked by the client. The promise settles once the answer's
   * headers arrived, so a missing object or a directory rejects here rather
   * than failing the stream later.
   */
  async openRead(path: string, o: ReadOptions = {}): Promise<Readable> {
    const p = normalizeVirtualPath(path);
    resolveReadRange(o, Number.MAX_SAFE_INTEGER, p); // validates the bounds before any request
    throwIfFsAborted(o.signal, p);
    if (p === '/') throw new FsError(FsErrorCode.IsDirectory, `${p}: is a directory`, { path: p });
    const key = this.key(p);
    const start = o.start ?? 0;
    const ranged = start > 0 || o.end !== undefined;
    const src = await this.request(key, p, ranged ? { start, end: o.end } : undefined, o.signal);
    if (src === null) return emptyReadable(); // 416: the range starts at or after the end (an empty object included)
    let slice: Transform | undefined;
    if (ranged && src.status === 200) {
      // A server that ignores a range it cannot satisfy (the emulator) sends the whole object: its size
      // says whether anything is left to read. The body is read to its end rather than cut, so the
      // connection stays usable (a small object: Cloud Storage itself answers 416).
      const size = Number(src.headers['x-goog-stored-content-length'] ?? src.headers['content-length']);
      if (!(start < size)) {
        src.stream.resume();
        return emptyReadable();
      }
      slice = sliceOf(start, o.end);
    }
    return bodyOf(src, slice, p, o.signal);
  }

  /**
   * A whole object's body and its FileInfo. The media answer carries no
   * modification time (neither `updated` nor the ferry-mtime metadata), so
   * the metadata is still asked, but at the same time as the body rather
   * than before it: one round trip instead of two. The two answers belong
   * together when the body's generation and metageneration are the
   * metadata's; otherwise (the object was replaced or its metadata changed
   * in between, or a server that names neither) the body is dropped and the
   * object read as openRead() after stat() would.
   */
  async openReadWithInfo(path: string, o: OpOptions = {}): Promise<ReadWithInfo> {
    const p = normalizeVirtualPath(path);
    throwIfFsAborted(o.signal, p);
    if (p === '/') throw new FsError(FsErrorCode.IsDirectory, `${p}: is a directory`, { path: p });
    const endpoint = this.bucket.storage.apiEndpoint;
    if (!WITHOUT_VERSION_HEADERS.has(endpoint)) {
      const key = this.key(p);
      const [meta, body] = await Promise.allSettled([this.head(key), this.request(key, p, undefined, o.signal)]);
      if (body.status === 'rejected') throw body.reason; // NOT_FOUND, IS_DIRECTORY, ABORTED, or the backend's error
      const src = body.value;
      if (meta.status === 'rejected') {
        if (src) drop(src);
        throw mapGcsError(meta.reason, 'stat', p);
      }
      const md = meta.value;
      if (src && md && sameVersion(src.headers, md)) return { info: this.fileInfo(p, md), stream: bodyOf(src, undefined, p, o.signal) };
      if (src) {
        // a server that does not name versions: its downloads ask the metadata first from now on
        if (src.headers['x-goog-generation'] === undefined) WITHOUT_VERSION_HEADERS.add(endpoint);
        drop(src);
      }
    }
    const info = await this.stat(p, o);
    return { info, stream: await this.openRead(p, o) };
  }

  /**
   * Requests the object's bytes (a range when given) and waits for the
   * answer's headers: its status and body, or null for 416 (nothing to read).
   * A missing object is NOT_FOUND, or IS_DIRECTORY when `p` is a directory.
   */
  private async request(key: string, p: string, range: { start: number; end?: number } | undefined, signal: AbortSignal | undefined): Promise<Media | null> {
    let answer: MediaAnswer;
    try {
      answer = await getMedia(this.bucket, key, { range, signal, auth: this.s.mediaAuth, maxRetries: this.s.maxRetries });
    } catch (err) {
      throw signal?.aborted ? FsError.aborted(p) : mapGcsError(err, 'open', p);
    }
    const { status, headers } = answer;
    if (status === 404 || status === 416) {
      if (status === 416) return null;
      let dir: unknown;
      try {
        dir = await this.dirExists(p);
      } catch (err) {
        throw mapGcsError(err, 'open', p);
      }
      if (dir) throw new FsError(FsErrorCode.IsDirectory, `${p}: is a directory`, { path: p });
      throw FsError.notFound(p);
    }
    // a whole body is checked against the object's CRC-32C (a range cannot be)
    const crc = range ? undefined : crc32cOf(headers);
    return { status, headers, stream: answer.body, transforms: crc ? [crc32cCheck(crc)] : [] };
  }

  async openWrite(path: string, o: WriteOptions = {}): Promise<WriteHandle> {
    const p = normalizeVirtualPath(path);
    try {
      throwIfFsAborted(o.signal, p);
      if (p === '/' || (await this.dirExists(p))) throw new FsError(FsErrorCode.IsDirectory, `${p}: is a directory`, { path: p });
      if (o.overwrite === false && (await this.head(this.key(p)))) throw FsError.exists(p);
    } catch (err) {
      throw mapGcsError(err, 'open for writing', p);
    }
    return startGcsUpload({ bucket: this.bucket, key: this.key(p), path: p, ...this.s, o });
  }

  async copy(from: string, to: string, o: OpOptions = {}): Promise<void> {
    return this.copyObjects(this, from, to, o);
  }

  /** Server-side copy from another mount of the same bucket (the provider's sameResource matched). */
  async copyFrom(source: Fs, from: string, to: string, o: OpOptions = {}): Promise<void> {
    return this.copyObjects(this.peer(source), from, to, o);
  }

  async rename(from: string, to: string, o: RenameOptions = {}): Promise<void> {
    return this.moveObjects(this, from, to, o);
  }

  /** Server-side move from another mount of the same bucket: copy + delete of each object. */
  async renameFrom(source: Fs, from: string, to: string, o: RenameOptions = {}): Promise<void> {
    return this.moveObjects(this.peer(source), from, to, o);
  }

  /** Another GcsFs on the same bucket through the same client (same identity). */
  private peer(source: Fs): GcsFs {
    if (!(source instanceof GcsFs) || source.bucket.storage !== this.bucket.storage || source.bucket.name !== this.bucket.name) {
      throw FsError.notSupported('a server-side copy from another bucket or backend');
    }
    return source;
  }

  private async copyObjects(srcFs: GcsFs, from: string, to: string, o: OpOptions): Promise<void> {
    const [src, dst] = [normalizeVirtualPath(from), normalizeVirtualPath(to)];
    try {
      throwIfFsAborted(o.signal, src);
      if (srcFs.key(src) === this.key(dst)) return void (await this.stat(dst));
      if (await this.dirExists(dst)) throw new FsError(FsErrorCode.IsDirectory, `${dst}: is a directory`, { path: dst });
      await this.bucket.file(srcFs.key(src)).copy(this.bucket.file(this.key(dst)));
    } catch (err) {
      if (isNotFound(err) && src !== '/' && (await srcFs.dirExists(src).catch(() => false))) {
        throw new FsError(FsErrorCode.IsDirectory, `${src}: is a directory (copy copies files)`, { path: src });
      }
      throw mapGcsError(err, 'copy', src);
    }
  }

  private async moveObjects(srcFs: GcsFs, from: string, to: string, o: RenameOptions): Promise<void> {
    const [src, dst] = [normalizeVirtualPath(from), normalizeVirtualPath(to)];
    if (src === '/' || dst === '/') throw new FsError(FsErrorCode.Invalid, 'the root cannot be renamed', { path: src });
    // the same key (also when two mounts share a key prefix): nothing to move
    const same = srcFs.key(src) === this.key(dst);
    try {
      throwIfFsAborted(o.signal, src);
      if (await srcFs.head(srcFs.key(src))) {
        if (same) return;
        if (await this.dirExists(dst)) throw new FsError(FsErrorCode.IsDirectory, `${dst}: is a directory`, { path: dst });
        await this.bucket.file(srcFs.key(src)).copy(this.bucket.file(this.key(dst)));
        await this.bucket.file(srcFs.key(src)).delete({ ignoreNotFound: true });
        o.onProgress?.(1);
        return;
      }
      if (!(await srcFs.dirExists(src))) throw FsError.notFound(src);
      if (same) return;
      if ((srcFs === this && isSubPath(src, dst)) || this.dirKey(dst).startsWith(srcFs.dirKey(src))) {
        throw new FsError(FsErrorCode.Invalid, `cannot move ${src} into itself`, { path: dst });
      }
      if (await this.head(this.key(dst))) throw new FsError(FsErrorCode.NotDirectory, `${dst}: not a directory`, { path: dst });
      if ((await this.firstUnder(this.dirKey(dst), 2)).some((f) => f.name !== this.dirKey(dst))) {
        throw new FsError(FsErrorCode.NotEmpty, `${dst}: directory not empty`, { path: dst });
      }
      await this.moveTree(srcFs.dirKey(src), this.dirKey(dst), o);
    } catch (err) {
      throw mapGcsError(err, 'rename', src);
    }
  }

  /** Copies every object under one key prefix to another, BATCH at a time, then deletes each page's originals. */
  private async moveTree(fromPrefix: string, toPrefix: string, o: RenameOptions): Promise<void> {
    await moveKeyTree({
      pages: this.objectsUnder(fromPrefix, o.signal),
      keyOf: (f) => f.name,
      from: fromPrefix,
      to: toPrefix,
      copy: async (f, toKey) => void (await f.copy(this.bucket.file(toKey))),
      deleteSources: (files) => deleteFiles(files, o.signal),
      concurrency: BATCH,
      signal: o.signal,
      onProgress: o.onProgress,
    });
  }

  async remove(path: string, o: RemoveOptions = {}): Promise<void> {
    const p = normalizeVirtualPath(path);
    if (p === '/') throw new FsError(FsErrorCode.Permission, 'the root directory cannot be removed', { path: p });
    try {
      throwIfFsAborted(o.signal, p);
      try {
        await this.bucket.file(this.key(p)).delete();
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const dirKey = this.dirKey(p);
      const first = await this.firstUnder(dirKey, 2);
      if (first.length === 0) throw FsError.notFound(p);
      if (first.some((f) => f.name !== dirKey) && !o.recursive) {
        throw new FsError(FsErrorCode.NotEmpty, `${p}: directory not empty`, { path: p });
      }
      for await (const files of this.objectsUnder(dirKey, o.signal)) await deleteFiles(files, o.signal);
    } catch (err) {
      throw mapGcsError(err, 'remove', p);
    }
  }

  async mkdir(path: string, o: MkdirOptions = {}): Promise<void> {
    const p = normalizeVirtualPath(path);
    try {
      throwIfFsAborted(o.signal, p);
      if (p !== '/' && (await this.head(this.key(p)))) throw FsError.exists(p);
      if (await this.dirExists(p)) {
        if (o.recursive) return;
        throw FsError.exists(p);
      }
      const parent = parentPath(p);
      if (parent !== '/' && (await this.head(this.key(parent)))) {
        throw new FsError(FsErrorCode.NotDirectory, `${parent}: not a directory`, { path: p });
      }
      await this.bucket
        .file(this.dirKey(p))
        .save('', { resumable: false, metadata: { contentType: DIR_CONTENT_TYPE }, preconditionOpts: { ifGenerationMatch: 0 } })
        .catch((err: unknown) => {
          if (o.recursive && httpStatus(err) === 412) return; // raced with another mkdir
          throw err;
        });
    } catch (err) {
      throw mapGcsError(err, 'mkdir', p);
    }
  }

  async chtimes(path: string, mtime: Date, o: OpOptions = {}): Promise<void> {
    const p = normalizeVirtualPath(path);
    const metadata = { metadata: { [MTIME_META]: String(mtime.getTime()) } };
    try {
      throwIfFsAborted(o.signal, p);
      if (p !== '/' && (await this.head(this.key(p)))) return void (await this.bucket.file(this.key(p)).setMetadata(metadata));
      const dir = await this.dirExists(p);
      if (!dir) throw FsError.notFound(p);
      if (dir !== true) return void (await this.bucket.file(this.dirKey(p)).setMetadata(metadata));
      // A directory implied by its children only: give it a marker carrying the time.
      await this.bucket.file(this.dirKey(p)).save('', { resumable: false, metadata: { contentType: DIR_CONTENT_TYPE, ...metadata } });
    } catch (err) {
      throw mapGcsError(err, 'chtimes', p);
    }
  }

  async usedSpace(path = '/', o: OpOptions = {}): Promise<UsedSpace> {
    const p = normalizeVirtualPath(path);
    const total: UsedSpace = { size: 0, files: 0 };
    try {
      const md = p === '/' ? undefined : await this.head(this.key(p));
      if (md) return { size: Number(md.size ?? 0), files: 1 };
      let any = false;
      for await (const files of this.objectsUnder(this.dirKey(p), o.signal)) {
        any = true;
        for (const f of files) {
          if (f.name.endsWith('/')) continue; // directory markers
          total.size += Number(f.metadata.size ?? 0);
          total.files++;
        }
        await new Promise((r) => setImmediate(r));
      }
      if (!any && p !== '/') throw FsError.notFound(p);
      return total;
    } catch (err) {
      throw mapGcsError(err, 'usedSpace', p);
    }
  }

  async close(): Promise<void> {
    // The Storage client is shared (see gcs-client.ts); nothing per instance.
  }
}

/** Deletes objects, BATCH at a time; one already gone is fine. */
function deleteFiles(files: File[], signal: AbortSignal | undefined): Promise<void> {
  return forEachConcurrently(files, BATCH, async (f) => void (await f.delete({ ignoreNotFound: true })), signal);
}
