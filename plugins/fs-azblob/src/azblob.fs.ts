import type { Readable } from 'node:stream';
import {
  FsError,
  FsErrorCode,
  isSubPath,
  moveKeyTree,
  parentPath,
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
import { AzBlobBase } from './azblob-base.js';
import { AZBLOB_CAPABILITIES, MTIME_META } from './constants.js';
import { openAzRead, openAzReadWithHead, type AzReadParams } from './azblob-read.js';
import { startAzUpload } from './azblob-write.js';

/**
 * An Azure Blob Storage container seen as a filesystem under a key prefix.
 * Directories are emulated on the flat namespace: `dir/` marker blobs written
 * by mkdir, and any blob under `dir/`.
 */
export class AzBlobFs extends AzBlobBase implements Fs {
  readonly capabilities = AZBLOB_CAPABILITIES;

  async stat(path: string, o: OpOptions = {}): Promise<FileInfo> {
    try {
      if (path === '/') return this.dirInfo('/');
      const p = await this.props(this.key(path), o.signal);
      if (p) return this.fileInfo(path, p);
      const [first] = await this.firstBlobs(this.dirKey(path), 1, o.signal);
      if (first) {
        const own = first.name === this.dirKey(path);
        return this.dirInfo(path, own ? this.mtimeOf(first.metadata, first.properties.lastModified) : undefined);
      }
    } catch (e) {
      throw this.err(e, path);
    }
    throw FsError.notFound(path);
  }

  async *list(path: string, o: ListOptions = {}): AsyncIterable<FileInfo[]> {
    const prefix = this.dirKey(path);
    const max = Math.min(Math.max(Math.floor(o.pageSize ?? 1000), 1), 5000);
    const base = path === '/' ? '' : path;
    const pages = this.container.listBlobsByHierarchy('/', { prefix, includeMetadata: true, abortSignal: o.signal }).byPage({ maxPageSize: max });
    let seen = false;
    while (true) {
      let res;
      try {
        res = await pages.next();
      } catch (e) {
        throw this.err(e, path);
      }
      if (res.done) break;
      const seg = res.value.segment;
      const page: FileInfo[] = [];
      for (const bp of seg.blobPrefixes ?? []) {
        const name = bp.name.slice(prefix.length, -1);
        if (name && !name.includes('/')) page.push(this.dirInfo(`${base}/${name}`));
      }
      for (const b of seg.blobItems) {
        if (b.name === prefix) {
          seen = true; // the directory's own marker
          continue;
        }
        const name = b.name.slice(prefix.length);
        if (!b.name.startsWith(prefix) || !name || name.includes('/')) continue;
        page.push(this.fileInfo(`${base}/${name}`, { ...b.properties, metadata: b.metadata }));
      }
      if (page.length) {
        seen = true;
        yield page;
      }
    }
    if (!seen && path !== '/') {
      const p = await this.props(this.key(path), o.signal).catch((e) => Promise.reject(this.err(e, path)));
      throw p ? new FsError(FsErrorCode.NotDirectory, `${path}: not a directory`, { path }) : FsError.notFound(path);
    }
  }

  async openRead(path: string, o: ReadOptions = {}): Promise<Readable> {
    return openAzRead(this.readParams(path, o));
  }

  /** One Get Blob: the first answer's headers are what stat() reads from Get Blob Properties. */
  async openReadWithInfo(path: string, o: OpOptions = {}): Promise<ReadWithInfo> {
    const { stream, head } = await openAzReadWithHead(this.readParams(path, { signal: o.signal }));
    return { stream, info: this.fileInfo(path, head) };
  }

  private readParams(path: string, o: ReadOptions): AzReadParams {
    return {
      blob: this.container.getBlobClient(this.key(path)),
      path,
      start: o.start ?? 0,
      end: o.end,
      signal: o.signal,
      partSize: this.s.downloadPartSize,
      concurrency: this.s.downloadConcurrency,
      idleTimeoutMs: this.s.idleTimeoutMs,
      isDir: () => this.dirExists(path, o.signal),
      mapError: (e) => this.err(e, path),
    };
  }

  async openWrite(path: string, o: WriteOptions = {}): Promise<WriteHandle> {
    if (path === '/') throw new FsError(FsErrorCode.IsDirectory, '/: is a directory', { path });
    const key = this.key(path);
    const parent = parentPath(path);
    try {
      const [isDir, parentFile] = await Promise.all([this.dirExists(path, o.signal), parent === '/' ? undefined : this.props(this.key(parent), o.signal)]);
      if (isDir) throw new FsError(FsErrorCode.IsDirectory, `${path}: is a directory`, { path });
      if (parentFile) throw new FsError(FsErrorCode.NotDirectory, `${parent}: not a directory`, { path: parent });
      if (o.overwrite === false && (await this.props(key, o.signal))) throw FsError.exists(path);
    } catch (e) {
      throw this.err(e, path);
    }
    return startAzUpload(
      {
        blob: this.container.getBlockBlobClient(key),
        container: this.s.container,
        path,
        partSize: this.s.uploadPartSize,
        concurrency: this.s.uploadConcurrency,
        signal: o.signal,
        options: {
          blobHTTPHeaders: { blobContentType: o.contentType || 'application/octet-stream' },
          ...(o.mtime ? { metadata: { [MTIME_META]: String(o.mtime.getTime()) } } : {}),
          // Atomic "create only": the commit fails when a blob appeared meanwhile.
          ...(o.overwrite === false ? { conditions: { ifNoneMatch: '*' } } : {}),
          ...(this.s.accessTier ? { tier: this.s.accessTier } : {}),
        },
      },
      o.size,
    );
  }

  async mkdir(path: string, o: MkdirOptions = {}): Promise<void> {
    try {
      if (path === '/') {
        if (o.recursive) return;
        throw FsError.exists(path);
      }
      const [file, dir] = await Promise.all([this.props(this.key(path), o.signal), this.dirExists(path, o.signal)]);
      if (file) throw FsError.exists(path);
      if (dir) {
        if (o.recursive) return;
        throw FsError.exists(path);
      }
      if (!o.recursive) await this.requireParentDir(path, o.signal);
      else {
        const ancestors: string[] = [];
        for (let p = parentPath(path); p !== '/'; p = parentPath(p)) ancestors.push(p);
        const files = await Promise.all(ancestors.map((p) => this.props(this.key(p), o.signal)));
        const i = files.findIndex(Boolean);
        if (i >= 0) throw new FsError(FsErrorCode.NotDirectory, `${ancestors[i]}: not a directory`, { path: ancestors[i] });
      }
      await this.container.getBlockBlobClient(this.dirKey(path)).upload('', 0, {
        abortSignal: o.signal,
        blobHTTPHeaders: { blobContentType: 'application/x-directory' },
        metadata: { [MTIME_META]: String(Date.now()) },
      });
    } catch (e) {
      throw this.err(e, path);
    }
  }

  async remove(path: string, o: RemoveOptions = {}): Promise<void> {
    if (path === '/') throw new FsError(FsErrorCode.Permission, 'the root directory cannot be removed', { path });
    try {
      const key = this.key(path);
      if (await this.props(key, o.signal)) {
        await this.container.getBlobClient(key).delete({ abortSignal: o.signal });
        return;
      }
      const dirKey = this.dirKey(path);
      const under = await this.firstBlobs(dirKey, 2, o.signal);
      if (under.length === 0) throw FsError.notFound(path);
      if (under.some((b) => b.name !== dirKey) && !o.recursive) {
        throw new FsError(FsErrorCode.NotEmpty, `${path}: directory not empty`, { path });
      }
      if (!o.recursive) return await this.deleteBlobs([dirKey], o.signal);
      for await (const page of this.blobs(dirKey, o.signal)) {
        await this.deleteBlobs(
          page.map((b) => b.name),
          o.signal,
        );
      }
    } catch (e) {
      throw this.err(e, path);
    }
  }

  async copy(from: string, to: string, o: OpOptions = {}): Promise<void> {
    return this.copyBlobs(this, from, to, o);
  }

  /** Server-side copy from another mount of the same container (the provider's sameResource matched). */
  async copyFrom(source: Fs, from: string, to: string, o: OpOptions = {}): Promise<void> {
    return this.copyBlobs(this.peer(source), from, to, o);
  }

  async rename(from: string, to: string, o: RenameOptions = {}): Promise<void> {
    return this.moveBlobs(this, from, to, o);
  }

  /** Server-side move from another mount of the same container: blob copy + delete of each blob. */
  async renameFrom(source: Fs, from: string, to: string, o: RenameOptions = {}): Promise<void> {
    return this.moveBlobs(this.peer(source), from, to, o);
  }

  /** Another AzBlobFs of the same container, reachable with this Fs's client. */
  private peer(source: Fs): AzBlobFs {
    if (!(source instanceof AzBlobFs) || source.container.url !== this.container.url) {
      throw FsError.notSupported('a server-side copy from another container or backend');
    }
    return source;
  }

  private async copyBlobs(srcFs: AzBlobFs, from: string, to: string, o: OpOptions): Promise<void> {
    try {
      const src = await srcFs.props(srcFs.key(from), o.signal);
      if (!src) {
        if (await srcFs.dirExists(from, o.signal)) throw new FsError(FsErrorCode.IsDirectory, `${from}: is a directory`);
        throw FsError.notFound(from);
      }
      if (srcFs.key(from) === this.key(to)) return;
      await this.checkFileTarget(to, o.signal);
      await this.copyBlob(srcFs.key(from), this.key(to), undefined, o.signal);
    } catch (e) {
      throw this.err(e, from);
    }
  }

  private async moveBlobs(srcFs: AzBlobFs, from: string, to: string, o: RenameOptions): Promise<void> {
    try {
      if (from === '/' || to === '/') throw new FsError(FsErrorCode.Permission, 'the root directory cannot be renamed');
      const src = await srcFs.props(srcFs.key(from), o.signal);
      // the same blob name (also when two mounts share a key prefix): nothing to move
      if (srcFs.key(from) === this.key(to)) {
        if (src || (await srcFs.dirExists(from, o.signal))) return;
        throw FsError.notFound(from);
      }
      if (src) {
        await this.checkFileTarget(to, o.signal);
        // Keep the modification time across the copy (Last-Modified changes).
        const mtime = this.mtimeOf(src.metadata, src.lastModified).getTime();
        await this.copyBlob(srcFs.key(from), this.key(to), { ...src.metadata, [MTIME_META]: String(mtime) }, o.signal);
        await this.container.getBlobClient(srcFs.key(from)).deleteIfExists({ abortSignal: o.signal });
        o.onProgress?.(1);
        return;
      }
      if (!(await srcFs.dirExists(from, o.signal))) throw FsError.notFound(from);
      if ((srcFs === this && isSubPath(from, to)) || this.dirKey(to).startsWith(srcFs.dirKey(from))) {
        throw new FsError(FsErrorCode.Invalid, `cannot move ${from} into itself (${to})`, { path: to });
      }
      await this.requireParentDir(to, o.signal);
      if (await this.props(this.key(to), o.signal)) {
        throw new FsError(FsErrorCode.NotDirectory, `${to}: not a directory`, { path: to });
      }
      const fromDir = srcFs.dirKey(from);
      const toDir = this.dirKey(to);
      if ((await this.firstBlobs(toDir, 2, o.signal)).some((b) => b.name !== toDir)) {
        throw new FsError(FsErrorCode.NotEmpty, `${to}: directory not empty`, { path: to });
      }
      await moveKeyTree({
        pages: srcFs.blobs(fromDir, o.signal),
        keyOf: (b) => b.name,
        from: fromDir,
        to: toDir,
        copy: (b, toKey) => this.copyBlob(b.name, toKey, undefined, o.signal),
        deleteSources: (page) =>
          this.deleteBlobs(
            page.map((b) => b.name),
            o.signal,
          ),
        signal: o.signal,
        onProgress: o.onProgress,
      });
    } catch (e) {
      throw this.err(e, from);
    }
  }

  async usedSpace(path = '/', o: OpOptions = {}): Promise<UsedSpace> {
    const used: UsedSpace = { size: 0, files: 0 };
    try {
      for await (const page of this.blobs(this.dirKey(path), o.signal)) {
        for (const b of page) {
          if (b.name.endsWith('/')) continue; // directory markers
          used.files++;
          used.size += b.properties.contentLength ?? 0;
        }
        await new Promise((r) => setImmediate(r));
      }
      if (used.files === 0 && path !== '/') {
        const p = await this.props(this.key(path), o.signal);
        if (p) return { size: p.contentLength ?? 0, files: 1 };
        if (!(await this.dirExists(path, o.signal))) throw FsError.notFound(path);
      }
    } catch (e) {
      throw this.err(e, path);
    }
    return used;
  }

  /** Gives the shared container client back (once; later calls do nothing). */
  async close(): Promise<void> {
    const release = this.release;
    this.release = undefined;
    release?.();
  }
}
