import type { BlobItem, BlobGetPropertiesResponse, ContainerClient } from '@azure/storage-blob';
import { FsError, FsErrorCode, baseName, forEachConcurrently, normalizePrefix, parentPath, prefixedKey, type FileInfo } from '@ferry/core';
import type { AzBlobSettings } from './config.schema.js';
import { DIR_MODE, FILE_MODE, MTIME_META } from './constants.js';
import { isNotFound, mapAzError } from './errors.js';

/**
 * What describes a blob as a file, in a Get Blob Properties answer, a Get Blob
 * answer (contentLength then the whole size) or a listed item's properties.
 */
export interface BlobHead {
  contentLength?: number;
  lastModified?: Date;
  etag?: string;
  metadata?: Record<string, string>;
}

/** Blob-name mapping and the small requests every AzBlobFs operation builds on. */
export abstract class AzBlobBase {
  /** Normalised key prefix: '' or 'a/b/'. Every blob this Fs touches starts with it. */
  readonly prefix: string;

  constructor(
    readonly container: ContainerClient,
    protected readonly s: AzBlobSettings,
    /** Gives `container` back when it is lent by acquireContainerClient(); close() calls it once. */
    protected release?: () => void,
  ) {
    this.prefix = normalizePrefix(s.keyPrefix);
  }

  /** The blob name of a path (the prefix for the root). */
  key(path: string): string {
    const k = prefixedKey(this.prefix, path);
    if (!k.startsWith(this.prefix)) throw new FsError(FsErrorCode.Escape, 'path escapes the key prefix', { path });
    return k;
  }

  /** The name prefix of the blobs inside a directory. */
  dirKey(path: string): string {
    return path === '/' ? this.prefix : this.key(path) + '/';
  }

  protected err(e: unknown, path: string): FsError {
    return mapAzError(e, path, this.s.container);
  }

  protected async props(name: string, signal?: AbortSignal): Promise<BlobGetPropertiesResponse | undefined> {
    try {
      return await this.container.getBlobClient(name).getProperties({ abortSignal: signal });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Up to `max` blobs whose names start with `prefix`. */
  protected async firstBlobs(prefix: string, max: number, signal?: AbortSignal): Promise<BlobItem[]> {
    const pages = this.container.listBlobsFlat({ prefix, abortSignal: signal }).byPage({ maxPageSize: max });
    const first = await pages.next();
    return first.done ? [] : first.value.segment.blobItems;
  }

  /** Every blob under `prefix`, page by page. */
  protected async *blobs(prefix: string, signal?: AbortSignal): AsyncGenerator<BlobItem[]> {
    for await (const page of this.container.listBlobsFlat({ prefix, abortSignal: signal }).byPage({ maxPageSize: 1000 })) {
      if (page.segment.blobItems.length) yield page.segment.blobItems;
    }
  }

  protected async dirExists(path: string, signal?: AbortSignal): Promise<boolean> {
    if (path === '/') return true;
    return (await this.firstBlobs(this.dirKey(path), 1, signal)).length > 0;
  }

  protected mtimeOf(meta: Record<string, string> | undefined, fallback: Date | undefined): Date {
    const ms = Number(meta?.[MTIME_META]);
    return Number.isFinite(ms) && ms > 0 ? new Date(ms) : (fallback ?? new Date(0));
  }

  protected fileInfo(path: string, p: BlobHead): FileInfo {
    return {
      name: baseName(path),
      path,
      isDir: false,
      size: p.contentLength ?? 0,
      mtime: this.mtimeOf(p.metadata, p.lastModified),
      mode: FILE_MODE,
      ...(p.etag ? { etag: p.etag.replace(/"/g, '') } : {}),
    };
  }

  protected dirInfo(path: string, mtime?: Date): FileInfo {
    return { name: baseName(path), path, isDir: true, size: 0, mtime: mtime ?? new Date(0), mode: DIR_MODE };
  }

  abstract stat(path: string, o?: { signal?: AbortSignal }): Promise<FileInfo>;

  /** Fails unless the parent of `path` is an existing directory. */
  protected async requireParentDir(path: string, signal?: AbortSignal): Promise<void> {
    const parent = parentPath(path);
    if (parent === '/') return;
    const st = await this.stat(parent, { signal });
    if (!st.isDir) throw new FsError(FsErrorCode.NotDirectory, `${parent}: not a directory`, { path: parent });
  }

  /** A file may be written at `to`: its parent is a directory and `to` is not one. */
  protected async checkFileTarget(to: string, signal?: AbortSignal): Promise<void> {
    if (to === '/') throw new FsError(FsErrorCode.IsDirectory, '/: is a directory', { path: to });
    await this.requireParentDir(to, signal);
    if (await this.dirExists(to, signal)) throw new FsError(FsErrorCode.IsDirectory, `${to}: is a directory`, { path: to });
  }

  /** Server-side copy (Copy Blob + poll), optionally replacing the metadata. */
  protected async copyBlob(from: string, to: string, metadata?: Record<string, string>, signal?: AbortSignal) {
    const src = this.container.getBlobClient(from);
    const poller = await this.container.getBlobClient(to).beginCopyFromURL(src.url, {
      abortSignal: signal,
      ...(metadata ? { metadata } : {}),
      ...(this.s.accessTier ? { tier: this.s.accessTier } : {}),
      intervalInMs: 50,
    });
    const res = await poller.pollUntilDone();
    if (res.copyStatus && res.copyStatus !== 'success') {
      throw new FsError(FsErrorCode.Unavailable, `copy of ${from} ended with status ${res.copyStatus}`);
    }
  }

  /** Deletes blobs, 16 at a time; a blob already gone is fine. */
  protected async deleteBlobs(names: string[], signal?: AbortSignal): Promise<void> {
    await forEachConcurrently(
      names,
      16,
      async (name) => {
        await this.container.getBlobClient(name).deleteIfExists({ abortSignal: signal });
      },
      signal,
    );
  }
}
