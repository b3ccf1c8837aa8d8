import { HeadObjectCommand, type HeadObjectCommandOutput, type S3Client } from '@aws-sdk/client-s3';
import { FsError, FsErrorCode, baseName, normalizePrefix, parentPath, prefixedKey, type ClientLease, type FileInfo } from '@ferry/core';
import type { S3Settings } from './config.schema.js';
import { DIR_MODE, FILE_MODE, MTIME_META } from './constants.js';
import { isNotFound, mapS3Error } from './errors.js';
import type { S3ObjectMeta } from './s3-read.js';
import { S3Tree } from './s3-tree.js';

/** Key mapping and the small requests every S3Fs operation builds on. */
export abstract class S3Base {
  /** Normalised key prefix: '' or 'a/b/'. Every key this Fs touches starts with it. */
  readonly prefix: string;
  protected readonly tree: S3Tree;
  private released = false;

  /**
   * `lease`: the client, lent by the provider's ClientCache (shared with the
   * other Fs of the same identity) and given back by close(). To build an Fs
   * by hand, lend it `{ client, release: () => client.destroy() }`.
   */
  constructor(
    private readonly lease: ClientLease<S3Client>,
    protected readonly s: S3Settings,
  ) {
    this.prefix = normalizePrefix(s.keyPrefix);
    this.tree = new S3Tree(() => this.client, s.bucket);
  }

  /**
   * The S3 client, for each request. Once the Fs is closed its lease is given
   * back and the client may be destroyed (or serve another session): every
   * request fails instead.
   */
  get client(): S3Client {
    if (this.released) throw new FsError(FsErrorCode.Unavailable, 'this S3 filesystem is closed');
    return this.lease.client;
  }

  /** Gives the client back to the cache; later calls (and requests) do nothing (fail). */
  async close(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.lease.release();
  }

  abstract stat(path: string, o?: { signal?: AbortSignal }): Promise<FileInfo>;

  /** The object key of a path ('' or the prefix for the root). */
  key(path: string): string {
    const k = prefixedKey(this.prefix, path);
    if (!k.startsWith(this.prefix)) throw new FsError(FsErrorCode.Escape, 'path escapes the key prefix', { path });
    return k;
  }

  /** The key prefix of the objects inside a directory. */
  dirKey(path: string): string {
    return path === '/' ? this.prefix : this.key(path) + '/';
  }

  protected get sse(): Record<string, string> {
    return this.s.sseCustomerKey ? { SSECustomerAlgorithm: 'AES256', SSECustomerKey: this.s.sseCustomerKey } : {};
  }

  protected get copySse(): Record<string, string> {
    if (!this.s.sseCustomerKey) return {};
    return {
      ...this.sse,
      CopySourceSSECustomerAlgorithm: 'AES256',
      CopySourceSSECustomerKey: this.s.sseCustomerKey,
    };
  }

  protected copySource(key: string): string {
    return `${this.s.bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }

  protected err(e: unknown, path: string): FsError {
    return mapS3Error(e, path, this.s.bucket);
  }

  protected async head(key: string, signal?: AbortSignal): Promise<HeadObjectCommandOutput | undefined> {
    try {
      return await this.client.send(new HeadObjectCommand({ Bucket: this.s.bucket, Key: key, ...this.sse }), {
        abortSignal: signal,
      });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** True when something exists under the directory key (a marker or any object). */
  protected async dirExists(path: string, signal?: AbortSignal): Promise<boolean> {
    if (path === '/') return true;
    return (await this.tree.firstObjects(this.dirKey(path), 1, signal)).length > 0;
  }

  /** A file's info from a HeadObject answer, or a read's first GetObject answer (s3-read.ts). */
  protected fileInfo(path: string, h: S3ObjectMeta): FileInfo {
    const meta = Number(h.Metadata?.[MTIME_META]);
    return {
      name: baseName(path),
      path,
      isDir: false,
      size: h.ContentLength ?? 0,
      mtime: Number.isFinite(meta) && meta > 0 ? new Date(meta) : (h.LastModified ?? new Date(0)),
      mode: FILE_MODE,
      ...(h.ETag ? { etag: h.ETag.replace(/"/g, '') } : {}),
    };
  }

  protected dirInfo(path: string, mtime?: Date): FileInfo {
    return { name: baseName(path), path, isDir: true, size: 0, mtime: mtime ?? new Date(0), mode: DIR_MODE };
  }

  /** Storage class, ACL and SSE-C parameters for new objects. */
  protected objectParams(): Record<string, string> {
    return {
      ...(this.s.storageClass ? { StorageClass: this.s.storageClass } : {}),
      ...(this.s.acl ? { ACL: this.s.acl } : {}),
      ...this.sse,
    };
  }

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
}
