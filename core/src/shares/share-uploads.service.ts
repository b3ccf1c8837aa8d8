import { ConflictError, DomainError, NotFoundError, TooLargeError } from '../errors.js';
import crypto from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rm, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { inject, Lifecycle, scoped } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';

/** Incomplete uploads are dropped after this long without a chunk. */
const UPLOAD_TTL = 24 * 3600_000;

/** A resumable (TUS) upload to a share, its bytes kept in a local temporary file until complete. */
export interface ShareUpload {
  id: string;
  shareId: string;
  /** The target inside the share's directory, as the client sent it (normalised later). */
  path: string;
  length: number;
  offset: number;
  mtime?: Date;
  mkdirParents: boolean;
  file: string;
  lastActivity: number;
  /** A chunk is being received. */
  busy: boolean;
}

/**
 * State of the TUS uploads to shares on this node: an in-memory table and
 * one temporary file per upload under `<temp_dir>/share-uploads`. A chunk
 * is appended as it streams in; when the last byte arrives the file is
 * uploaded into the share like any other upload (permissions, quotas,
 * atomic publication, events), then removed. Uploads idle for a day, and
 * files left by a previous process, are removed.
 */
@scoped(Lifecycle.ContainerScoped)
export class ShareUploads {
  private readonly uploads = new Map<string, ShareUpload>();
  private readonly dir: string;
  private ready?: Promise<void>;

  constructor(
    @inject(TOKENS.Config) config: FerryConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {
    this.dir = path.resolve(config.common.temp_dir, 'share-uploads');
  }

  /** Creates the directory and removes stale files (once), then drops idle uploads. */
  private async prepare(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const now = Date.now();
      for (const name of await readdir(this.dir)) {
        const f = path.join(this.dir, name);
        const st = await stat(f).catch(() => null);
        if (st && now - st.mtimeMs > UPLOAD_TTL) await rm(f, { force: true });
      }
    })();
    await this.ready;
    const now = Date.now();
    for (const u of this.uploads.values()) {
      if (!u.busy && now - u.lastActivity > UPLOAD_TTL) await this.drop(u);
    }
  }

  async create(o: { shareId: string; path: string; length: number; mtime?: Date; mkdirParents: boolean }): Promise<ShareUpload> {
    await this.prepare();
    const id = crypto.randomBytes(16).toString('base64url');
    const file = path.join(this.dir, id);
    const fh = await open(file, 'wx', 0o600);
    await fh.close();
    const u: ShareUpload = { id, file, offset: 0, busy: false, lastActivity: Date.now(), ...o };
    this.uploads.set(id, u);
    return u;
  }

  /** The upload with this id (404 when unknown or expired). */
  async get(id: string): Promise<ShareUpload> {
    await this.prepare();
    const u = this.uploads.get(id);
    if (!u) throw new NotFoundError('unknown or expired upload');
    return u;
  }

  /**
   * Appends a request body at the upload's offset. Refused (413, nothing
   * kept) when it would pass the declared length or `maxChunk` bytes; a body
   * cut short keeps what arrived, as TUS allows.
   */
  async append(u: ShareUpload, body: Readable, maxChunk: number): Promise<void> {
    if (u.busy) throw new ConflictError('another chunk of this upload is being received');
    u.busy = true;
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
    const done = pipeline(meter, createWriteStream(u.file, { flags: 'r+', start }));
    const gone = () => {
      if (!body.readableEnded) meter.destroy(new Error('the client went away'));
    };
    body.once('error', gone);
    body.once('aborted', gone);
    body.once('close', gone);
    body.pipe(meter);
    try {
      await done;
    } catch (err) {
      if (tooLarge) {
        body.unpipe(meter);
        body.resume();
        await truncate(u.file, start).catch(() => undefined);
        throw tooLarge;
      }
      this.logger.debug({ err, upload: u.id }, 'share upload chunk cut short');
    } finally {
      body.off('error', gone);
      body.off('aborted', gone);
      body.off('close', gone);
      u.busy = false;
      u.lastActivity = Date.now();
    }
    // what reached the file counts, also when the client went away mid-chunk
    const size = (await stat(u.file)).size;
    u.offset = Math.min(size, u.length);
  }

  /** The complete upload's bytes. */
  read(u: ShareUpload): Readable {
    return createReadStream(u.file);
  }

  async drop(u: ShareUpload): Promise<void> {
    this.uploads.delete(u.id);
    await rm(u.file, { force: true });
  }
}
