import type { Readable } from 'node:stream';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import {
  FsError,
  FsErrorCode,
  isSubPath,
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
import { openS3ReadWithMeta, type S3ReadWithMeta } from './s3-read.js';
import { startS3Upload } from './s3-write.js';
import { FILE_MODE, MTIME_META, S3_CAPABILITIES } from './constants.js';
import { S3Base } from './s3-base.js';

/**
 * An S3 bucket (or any S3-compatible server) seen as a filesystem under a key
 * prefix. Directories are emulated on the flat key space: `dir/` marker
 * objects written by mkdir, and any key under `dir/`.
 */
export class S3Fs extends S3Base implements Fs {
  readonly capabilities = S3_CAPABILITIES;

  async stat(path: string, o: OpOptions = {}): Promise<FileInfo> {
    try {
      if (path === '/') return this.dirInfo('/');
      const h = await this.head(this.key(path), o.signal);
      if (h) return this.fileInfo(path, h);
      const [first] = await this.tree.firstObjects(this.dirKey(path), 1, o.signal);
      if (first) return this.dirInfo(path, first.Key === this.dirKey(path) ? first.LastModified : undefined);
    } catch (e) {
      throw this.err(e, path);
    }
    throw FsError.notFound(path);
  }

  /** The object's user metadata (`x-amz-meta-*`, keys in lower case), Ferry's own modification time key left out. */
  async metadata(path: string, o: OpOptions = {}): Promise<Record<string, string>> {
    let h;
    try {
      h = path === '/' ? undefined : await this.head(this.key(path), o.signal);
    } catch (e) {
      throw this.err(e, path);
    }
    if (!h) throw FsError.notFound(path);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(h.Metadata ?? {})) if (k.toLowerCase() !== MTIME_META) out[k.toLowerCase()] = v;
    return out;
  }

  async *list(path: string, o: ListOptions = {}): AsyncIterable<FileInfo[]> {
    const prefix = this.dirKey(path);
    const max = Math.min(Math.max(Math.floor(o.pageSize ?? 1000), 1), 1000);
    const base = path === '/' ? '' : path;
    let token: string | undefined;
    let seen = false;
    do {
      let out;
      try {
        out = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.s.bucket,
            Prefix: prefix,
            Delimiter: '/',
            MaxKeys: max,
            ContinuationToken: token,
          }),
          { abortSignal: o.signal },
        );
      } catch (e) {
        throw this.err(e, path);
      }
      const page: FileInfo[] = [];
      for (const cp of out.CommonPrefixes ?? []) {
        const name = (cp.Prefix ?? '').slice(prefix.length, -1);
        if (name && !name.includes('/')) page.push(this.dirInfo(`${base}/${name}`));
      }
      for (const obj of out.Contents ?? []) {
        const key = obj.Key ?? '';
        if (key === prefix) {
          seen = true; // the directory's own marker
          continue;
        }
        const name = key.slice(prefix.length);
        if (!key.startsWith(prefix) || !name || name.includes('/')) continue;
        page.push({
          name,
          path: `${base}/${name}`,
          isDir: false,
          size: obj.Size ?? 0,
          mtime: obj.LastModified ?? new Date(0),
          mode: FILE_MODE,
          ...(obj.ETag ? { etag: obj.ETag.replace(/"/g, '') } : {}),
        });
      }
      if (page.length) seen = true;
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
      if (!seen && !token && path !== '/') {
        const h = await this.head(this.key(path), o.signal).catch((e) => Promise.reject(this.err(e, path)));
        throw h ? new FsError(FsErrorCode.NotDirectory, `${path}: not a directory`, { path }) : FsError.notFound(path);
      }
      if (page.length) yield page;
    } while (token);
  }

  async openRead(path: string, o: ReadOptions = {}): Promise<Readable> {
    return (await this.read(path, o)).stream;
  }

  /**
   * A whole-file read whose info is the first GetObject's answer (size,
   * LastModified, ETag, the ferry-mtime metadata): one request where stat()
   * then openRead() send a HeadObject first.
   */
  async openReadWithInfo(path: string, o: OpOptions = {}): Promise<ReadWithInfo> {
    if (o.signal?.aborted) throw FsError.aborted(path);
    if (path === '/') throw new FsError(FsErrorCode.IsDirectory, '/: is a directory', { path });
    const { stream, meta } = await this.read(path, { signal: o.signal });
    return { info: this.fileInfo(path, meta), stream };
  }

  private read(path: string, o: ReadOptions): Promise<S3ReadWithMeta> {
    const key = this.key(path);
    return openS3ReadWithMeta({
      path,
      start: o.start ?? 0,
      end: o.end,
      signal: o.signal,
      partSize: this.s.downloadPartSize,
      concurrency: this.s.downloadConcurrency,
      partTimeoutMs: this.s.downloadPartMaxTimeMs,
      get: (range, _e, signal) =>
        this.client.send(new GetObjectCommand({ Bucket: this.s.bucket, Key: key, Range: range, ...this.sse }), {
          abortSignal: signal,
        }),
      head: () => this.head(key, o.signal),
      isDir: () => this.dirExists(path, o.signal),
      mapError: (e) => this.err(e, path),
    });
  }

  async openWrite(path: string, o: WriteOptions = {}): Promise<WriteHandle> {
    if (path === '/') throw new FsError(FsErrorCode.IsDirectory, '/: is a directory', { path });
    const key = this.key(path);
    const parent = parentPath(path);
    try {
      const [isDir, existing, parentFile] = await Promise.all([
        this.dirExists(path, o.signal),
        o.overwrite === false ? this.head(key, o.signal) : undefined,
        parent === '/' ? undefined : this.head(this.key(parent), o.signal),
      ]);
      if (isDir) throw new FsError(FsErrorCode.IsDirectory, `${path}: is a directory`, { path });
      if (existing) throw FsError.exists(path);
      if (parentFile) throw new FsError(FsErrorCode.NotDirectory, `${parent}: not a directory`, { path: parent });
    } catch (e) {
      throw this.err(e, path);
    }
    return startS3Upload({
      client: this.client,
      bucket: this.s.bucket,
      key,
      path,
      partSize: this.s.uploadPartSize,
      concurrency: this.s.uploadConcurrency,
      partMaxTimeMs: this.s.uploadPartMaxTimeMs,
      size: o.size,
      signal: o.signal,
      params: {
        ContentType: o.contentType || 'application/octet-stream',
        ...(o.mtime ? { Metadata: { [MTIME_META]: String(o.mtime.getTime()) } } : {}),
        ...(o.overwrite === false ? { IfNoneMatch: '*' } : {}),
        ...this.objectParams(),
      },
    });
  }

  async mkdir(path: string, o: MkdirOptions = {}): Promise<void> {
    try {
      if (path === '/') {
        if (o.recursive) return;
        throw FsError.exists(path);
      }
      const [file, dir] = await Promise.all([this.head(this.key(path), o.signal), this.dirExists(path, o.signal)]);
      if (file) throw FsError.exists(path);
      if (dir) {
        if (o.recursive) return;
        throw FsError.exists(path);
      }
      if (!o.recursive) await this.requireParentDir(path, o.signal);
      else {
        const ancestors: string[] = [];
        for (let p = parentPath(path); p !== '/'; p = parentPath(p)) ancestors.push(p);
        const files = await Promise.all(ancestors.map((p) => this.head(this.key(p), o.signal)));
        const i = files.findIndex(Boolean);
        if (i >= 0) throw new FsError(FsErrorCode.NotDirectory, `${ancestors[i]}: not a directory`, { path: ancestors[i] });
      }
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.s.bucket,
          Key: this.dirKey(path),
          Body: new Uint8Array(0),
          ContentLength: 0,
          ContentType: 'application/x-directory',
          Metadata: { [MTIME_META]: String(Date.now()) },
          ...this.objectParams(),
        }),
        { abortSignal: o.signal },
      );
    } catch (e) {
      throw this.err(e, path);
    }
  }

  async remove(path: string, o: RemoveOptions = {}): Promise<void> {
    if (path === '/') throw new FsError(FsErrorCode.Permission, 'the root directory cannot be removed', { path });
    try {
      const key = this.key(path);
      if (await this.head(key, o.signal)) {
        await this.client.send(new DeleteObjectCommand({ Bucket: this.s.bucket, Key: key }), { abortSignal: o.signal });
        return;
      }
      const dirKey = this.dirKey(path);
      const under = await this.tree.firstObjects(dirKey, 2, o.signal);
      if (under.length === 0) throw FsError.notFound(path);
      const children = under.some((x) => x.Key !== dirKey);
      if (children && !o.recursive) {
        throw new FsError(FsErrorCode.NotEmpty, `${path}: directory not empty`, { path });
      }
      if (o.recursive) await this.tree.deleteTree(dirKey, o.signal);
      else await this.tree.deleteKeys([dirKey], o.signal);
    } catch (e) {
      throw this.err(e, path);
    }
  }

  async copy(from: string, to: string, o: OpOptions = {}): Promise<void> {
    return this.copyKeys(this, from, to, o);
  }

  /**
   * Server-side copy from another mount in the same bucket (the provider's
   * sameResource matched: same endpoint, bucket, credentials and SSE-C key).
   */
  async copyFrom(source: Fs, from: string, to: string, o: OpOptions = {}): Promise<void> {
    return this.copyKeys(this.peer(source), from, to, o);
  }

  async rename(from: string, to: string, o: RenameOptions = {}): Promise<void> {
    return this.moveKeys(this, from, to, o);
  }

  /** Server-side move from another mount in the same bucket: CopyObject + delete of each key. */
  async renameFrom(source: Fs, from: string, to: string, o: RenameOptions = {}): Promise<void> {
    return this.moveKeys(this.peer(source), from, to, o);
  }

  /** Another S3Fs of the same bucket, reachable with this Fs's client. */
  private peer(source: Fs): S3Fs {
    if (!(source instanceof S3Fs) || source.s.bucket !== this.s.bucket) {
      throw FsError.notSupported('a server-side copy from another bucket or backend');
    }
    return source;
  }

  private async copyKeys(src: S3Fs, from: string, to: string, o: OpOptions): Promise<void> {
    try {
      const head = await src.head(src.key(from), o.signal);
      if (!head) {
        if (await src.dirExists(from, o.signal)) throw new FsError(FsErrorCode.IsDirectory, `${from}: is a directory`);
        throw FsError.notFound(from);
      }
      await this.checkFileTarget(to, o.signal);
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.s.bucket,
          Key: this.key(to),
          CopySource: this.copySource(src.key(from)),
          ...this.objectParams(),
          ...this.copySse,
        }),
        { abortSignal: o.signal },
      );
    } catch (e) {
      throw this.err(e, from);
    }
  }

  private async moveKeys(src: S3Fs, from: string, to: string, o: RenameOptions): Promise<void> {
    try {
      if (from === '/' || to === '/') throw new FsError(FsErrorCode.Permission, 'the root directory cannot be renamed');
      const head = await src.head(src.key(from), o.signal);
      // the same key (also when two mounts share a key prefix): nothing to move
      if (src.key(from) === this.key(to)) {
        if (head || (await src.dirExists(from, o.signal))) return;
        throw FsError.notFound(from);
      }
      if (head) {
        await this.checkFileTarget(to, o.signal);
        // Keep the modification time across the copy (LastModified changes).
        const mtime = head.Metadata?.[MTIME_META] ?? String((head.LastModified ?? new Date()).getTime());
        await this.client.send(
          new CopyObjectCommand({
            Bucket: this.s.bucket,
            Key: this.key(to),
            CopySource: this.copySource(src.key(from)),
            MetadataDirective: 'REPLACE',
            Metadata: { ...head.Metadata, [MTIME_META]: mtime },
            ContentType: head.ContentType,
            ...this.objectParams(),
            ...this.copySse,
          }),
          { abortSignal: o.signal },
        );
        await this.client.send(new DeleteObjectCommand({ Bucket: this.s.bucket, Key: src.key(from) }), {
          abortSignal: o.signal,
        });
        o.onProgress?.(1);
        return;
      }
      if (!(await src.dirExists(from, o.signal))) throw FsError.notFound(from);
      if ((src === this && isSubPath(from, to)) || this.dirKey(to).startsWith(src.dirKey(from))) {
        throw new FsError(FsErrorCode.Invalid, `cannot move ${from} into itself (${to})`, { path: to });
      }
      await this.requireParentDir(to, o.signal);
      if (await this.head(this.key(to), o.signal)) {
        throw new FsError(FsErrorCode.NotDirectory, `${to}: not a directory`, { path: to });
      }
      const toDir = this.dirKey(to);
      const existing = await this.tree.firstObjects(toDir, 2, o.signal);
      if (existing.some((x) => x.Key !== toDir)) {
        throw new FsError(FsErrorCode.NotEmpty, `${to}: directory not empty`, { path: to });
      }
      const extra = { ...this.objectParams(), ...this.copySse };
      await this.tree.moveTree(src.dirKey(from), toDir, (k) => this.copySource(k), extra, o.signal, o.onProgress);
    } catch (e) {
      throw this.err(e, from);
    }
  }

  async usedSpace(path = '/', o: OpOptions = {}): Promise<UsedSpace> {
    const used: UsedSpace = { size: 0, files: 0 };
    try {
      for await (const page of this.tree.objects(this.dirKey(path), o.signal)) {
        for (const obj of page) {
          if (obj.Key!.endsWith('/')) continue; // directory markers
          used.files++;
          used.size += obj.Size ?? 0;
        }
        await new Promise((r) => setImmediate(r));
      }
      if (used.files === 0 && path !== '/') {
        const h = await this.head(this.key(path), o.signal);
        if (h) return { size: h.ContentLength ?? 0, files: 1 };
        if (!(await this.dirExists(path, o.signal))) throw FsError.notFound(path);
      }
    } catch (e) {
      throw this.err(e, path);
    }
    return used;
  }
}
