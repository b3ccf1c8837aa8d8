import { ConflictError, DomainError, NotFoundError, TooLargeError } from '../errors.js';
import crypto from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { inject, Lifecycle, scoped } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';

/** Incomplete uploads are dropped after this long without a chunk. */
const UPLOAD_TTL = 24 * 3600_000;

/** A lock older than this is left by a node that died while it held it. */
const LOCK_STALE = 3600_000;
/** Upload ids: 16 random bytes in base64url (they name files). */
const ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

/** Who may continue an upload: `share:<share id>` or `user:<username>`. */
export type UploadOwner = `share:${string}` | `user:${string}`;

/** A resumable (TUS) upload, its bytes kept in a temporary file until complete. */
export interface ChunkedUpload {
  id: string;
  owner: UploadOwner;
  /** The target (inside the share's directory, or the user's path), as the client sent it (normalised later). */
  path: string;
  length: number;
  /** Bytes received: the size of the file (any node may have appended to it). */
  offset: number;
  mtime?: Date;
  mkdirParents: boolean;
  file: string;
}

interface StoredUpload {
  owner: UploadOwner;
  path: string;
  length: number;
  mtime?: number;
  mkdirParents: boolean;
}

/**
 * State of the TUS uploads (to shares and of signed-in users): under `<dir>/chunked-uploads`, one file
 * of bytes per upload (`<id>`), its description (`<id>.json`) and, while a
 * chunk is written or the complete file is stored, a lock (`<id>.lock`,
 * created exclusively). Nothing is held in memory, so with
 * `common.shared_dir` on storage every node sees, any node continues an
 * upload another node started (docs/cluster.md); without it the directory is
 * under `temp_dir`. A chunk is appended as it streams in; when the last byte
 * arrives the file is uploaded into its place like any other upload
 * (permissions, quotas, atomic publication, events), then removed. Uploads
 * idle for a day are removed.
 */
@scoped(Lifecycle.ContainerScoped)
export class ChunkedUploads {
  private readonly dir: string;
  private ready?: Promise<void>;
  private lastSweep = 0;

  constructor(
    @inject(TOKENS.Config) config: FerryConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {
    this.dir = path.resolve(config.common.shared_dir || config.common.temp_dir, 'chunked-uploads');
  }

  private paths(id: string) {
    const file = path.join(this.dir, id);
    return { file, meta: `${file}.json`, lock: `${file}.lock` };
  }

  /** Creates the directory, then removes idle uploads (at most once an hour). */
  private async prepare(): Promise<void> {
    this.ready ??= mkdir(this.dir, { recursive: true, mode: 0o700 }).then(() => undefined);
    await this.ready;
    const now = Date.now();
    if (now - this.lastSweep < 3600_000) return;
    this.lastSweep = now;
    for (const name of await readdir(this.dir)) {
      const f = path.join(this.dir, name);
      const st = await stat(f).catch(() => null);
      if (!st) continue;
      // an upload's age is its bytes' (the description is written once); a lock its own
      const bytes = name.endsWith('.json') ? await stat(f.slice(0, -5)).catch(() => null) : st;
      const age = now - (bytes ?? st).mtimeMs;
      if (age > (name.endsWith('.lock') ? LOCK_STALE : UPLOAD_TTL)) await rm(f, { force: true });
    }
  }

  async create(o: { owner: UploadOwner; path: string; length: number; mtime?: Date; mkdirParents: boolean }): Promise<ChunkedUpload> {
    await this.prepare();
    const id = crypto.randomBytes(16).toString('base64url');
    const p = this.paths(id);
    const fh = await open(p.file, 'wx', 0o600);
    await fh.close();
    const stored: StoredUpload = { owner: o.owner, path: o.path, length: o.length, mtime: o.mtime?.getTime(), mkdirParents: o.mkdirParents };
    await writeFile(p.meta, JSON.stringify(stored), { mode: 0o600, flag: 'wx' });
    return { id, file: p.file, offset: 0, ...o };
  }

  /** The upload with this id as stored now (404 when unknown or expired). */
  async get(id: string): Promise<ChunkedUpload> {
    await this.prepare();
    if (!ID_PATTERN.test(id)) throw new NotFoundError('unknown or expired upload');
    const p = this.paths(id);
    let stored: StoredUpload;
    let size: number;
    try {
      stored = JSON.parse(await readFile(p.meta, 'utf8')) as StoredUpload;
      size = (await stat(p.file)).size;
    } catch {
      throw new NotFoundError('unknown or expired upload');
    }
    return {
      id,
      file: p.file,
      owner: stored.owner,
      path: stored.path,
      length: stored.length,
      offset: Math.min(size, stored.length),
      mtime: stored.mtime === undefined ? undefined : new Date(stored.mtime),
      mkdirParents: stored.mkdirParents,
    };
  }

  /** Takes the upload's lock (409 while a chunk of it is received, on any node). */
  async lock(u: ChunkedUpload): Promise<void> {
    const { lock } = this.paths(u.id);
    for (let attempt = 0; ; attempt++) {
      try {
        await writeFile(lock, '', { flag: 'wx', mode: 0o600 });
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw new ConflictError('another chunk of this upload is being received');
        const st = await stat(lock).catch(() => null);
        if (st && Date.now() - st.mtimeMs < LOCK_STALE) throw new ConflictError('another chunk of this upload is being received');
        await rm(lock, { force: true });
      }
    }
  }

  async unlock(u: ChunkedUpload): Promise<void> {
    await rm(this.paths(u.id).lock, { force: true });
  }

  /**
   * Appends a request body at the upload's offset. Refused (413, nothing
   * kept) when it would pass the declared length or `maxChunk` bytes; a body
   * cut short keeps what arrived, as TUS allows.
   */
  async append(u: ChunkedUpload, body: Readable, maxChunk: number): Promise<void> {
    await this.lock(u);
    try {
      // what another node appended before the lock was taken
      const now = await this.get(u.id);
      if (now.offset !== u.offset) throw new ConflictError(`the upload is at ${now.offset}, not ${u.offset}`);
      await this.write(u, body, maxChunk);
    } finally {
      await this.unlock(u);
    }
  }

  private async write(u: ChunkedUpload, body: Readable, maxChunk: number): Promise<void> {
    const start = u.offset;
    let tooLarge: DomainError | undefined;
    let n = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, cb: TransformCallback) {
        n += chunk.length;
        if (start + n > u.length) tooLarge = new TooLargeError(`the upload is ${u.length} bytes long: this chunk goes past its end`);
        else if (maxChunk > 0 && n > maxChunk) tooLarge = new TooLargeError(`a chunk may hold at most ${maxChunk} bytes`);
        cb(tooLarge ?? null, tooLarge ? undefined : chunk);
      },
    });
    // the body is piped, not part of the pipeline: a refused chunk must not destroy the request (the client gets the 413)
    // a queue of 256 KiB: the socket's chunks are written in batches (one writev each), not one write per 64 KiB
    const done = pipeline(meter, createWriteStream(u.file, { flags: 'r+', start, highWaterMark: 256 * 1024 }));
    const gone = () => {
      if (!body.readableEnded) meter.destroy(new Error('the client went away'));
    };
    body.once('error', gone);
    body.once('aborted', gone);
    body.once('close', gone);
    body.pipe(meter);
    // cut while the lock was taken: its abort and close were sent before anyone listened
    if (body.destroyed && !body.readableEnded) gone();
    try {
      await done;
    } catch (err) {
      if (tooLarge) {
        body.unpipe(meter);
        body.resume();
        await truncate(u.file, start).catch(() => undefined);
        throw tooLarge;
      }
      this.logger.debug({ err, upload: u.id }, 'upload chunk cut short');
    } finally {
      body.off('error', gone);
      body.off('aborted', gone);
      body.off('close', gone);
    }
    // what reached the file counts, also when the client went away mid-chunk
    const size = (await stat(u.file)).size;
    u.offset = Math.min(size, u.length);
  }

  /** The complete upload's bytes. */
  read(u: ChunkedUpload): Readable {
    return createReadStream(u.file);
  }

  /** Forgets the upload on every node (its description first: from then on it is unknown). */
  async drop(u: ChunkedUpload): Promise<void> {
    const p = this.paths(u.id);
    await rm(p.meta, { force: true });
    await rm(p.file, { force: true });
  }
}
