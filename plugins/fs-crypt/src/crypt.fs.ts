import type { FileHandle } from 'node:fs/promises';
import { pipeline, type Readable } from 'node:stream';
import {
  destroyOnAbort,
  emptyReadable,
  resolveReadRange,
  throwIfFsAborted,
  type FsCapabilities,
  type PendingUpload,
  type ReadOptions,
  type WriteHandle,
  type WriteOptions,
} from '@ferry/core';
import { LOCAL_CAPABILITIES, LocalFs, type LocalFsOptions } from '@ferry/fs-local';
import { DecryptStream, DecryptingReader } from './decrypt.js';
import { RecordEncoder } from './records.js';
import { FsCryptError } from './errors.js';
import {
  CHUNK_SIZE,
  HEADER_SIZE,
  RECORD_SIZE,
  cipherSize,
  decodeHeader,
  layoutOf,
  reportedPlainSize,
  type Header,
  type Layout,
  type ScryptParams,
} from './format.js';
import { KeyRing } from './keys.js';

/**
 * The local capabilities, less writing at an offset and truncation: the
 * stored file is a header and authenticated records of a whole stream, which
 * cannot be changed in place.
 */
export const CRYPT_CAPABILITIES: FsCapabilities = Object.freeze({ ...LOCAL_CAPABILITIES, writeAtOffset: false, truncate: false });

export interface CryptFsOptions extends LocalFsOptions {
  /** The passphrase, in clear (the core decrypts the stored Secret before create()). */
  passphrase: string;
  /** scrypt cost for new files (default N=2^15, r=8, p=1); files record theirs in the header. */
  scrypt?: ScryptParams;
}

/** A read buffer size in whole records (at least one), so stored reads line up with records. */
function recordsIn(bytes: number): number {
  return Math.max(1, Math.round(bytes / RECORD_SIZE));
}

/**
 * Defaults when the options say 0: stored reads of 16 records (~1 MiB) and a
 * 1 MiB write buffer. Every record is two buffers (ciphertext, tag), so
 * fewer, larger I/O calls matter more here than for fs-local.
 */
const DEFAULT_READ_RECORDS = 16;
const DEFAULT_WRITE_BUFFER = 1024 * 1024;

/**
 * Provider 4: LocalFs with every file encrypted at rest (format in
 * format.ts and the README). Only reads and writes differ from LocalFs:
 * rename, copy, remove, mkdir and chtimes work on the stored files as they
 * are, and stat, list and usedSpace report plaintext sizes computed from the
 * stored size, without opening the files.
 */
export class CryptFs extends LocalFs {
  override readonly capabilities: FsCapabilities = CRYPT_CAPABILITIES;
  /** Exposed for tests: counts scrypt runs (one per instance and parameter set). */
  readonly keys: KeyRing;
  private readonly recordsPerRead: number;

  constructor(opts: CryptFsOptions) {
    super({ ...opts, writeBufferSize: opts.writeBufferSize || DEFAULT_WRITE_BUFFER });
    if (typeof opts.passphrase !== 'string' || opts.passphrase === '') throw new TypeError('fs-crypt needs a passphrase');
    this.keys = new KeyRing(opts.passphrase, opts.scrypt);
    this.recordsPerRead = opts.readBufferSize ? recordsIn(opts.readBufferSize) : DEFAULT_READ_RECORDS;
  }

  protected override reportedSize(rawSize: number): number {
    return reportedPlainSize(rawSize);
  }

  override async openRead(p: string, o: ReadOptions = {}): Promise<Readable> {
    const file = await this.openFile(p, o.signal, o.batch);
    const { fh, vpath } = file;
    let handedOver = false;
    try {
      const header = await readHeader(fh, vpath);
      const key = await this.keys.fileKey(header, vpath);
      const layout = layoutOf(file.size);
      if (!layout) throw FsCryptError.integrity(vpath, `a stored size of ${file.size} bytes is impossible (truncated or extended)`);
      throwIfFsAborted(o.signal, vpath);
      const range = resolveReadRange(o, layout.plainSize, vpath);
      if (!range) return emptyReadable();
      const first = Math.floor(range.start / CHUNK_SIZE);
      const last = Math.floor(range.end / CHUNK_SIZE);
      const plain = new DecryptingReader(
        fh,
        {
          key,
          header,
          path: vpath,
          firstIndex: first,
          lastIndex: last,
          finalIndex: layout.finalIndex,
          finalRecordLength: layout.finalRecordLength,
          skip: range.start - first * CHUNK_SIZE,
          length: range.end - range.start + 1,
        },
        this.recordsPerRead,
      );
      handedOver = true;
      return destroyOnAbort(plain, o.signal, vpath);
    } finally {
      if (!handedOver) await fh.close().catch(() => undefined);
    }
  }

  override async openWrite(p: string, o: WriteOptions = {}): Promise<WriteHandle> {
    throwIfFsAborted(o.signal, p);
    const { key, header } = await this.keys.newFile();
    const { beforePublish } = o;
    const options: WriteOptions = {
      ...o,
      size: o.size === undefined ? undefined : cipherSize(o.size),
      beforePublish: beforePublish && ((pending) => beforePublish(plainPending(pending, key, header, p))),
    };
    return this.openEncodedWrite(p, options, new RecordEncoder(key, header));
  }
}

async function readHeader(fh: FileHandle, path: string): Promise<Header> {
  const buf = Buffer.alloc(HEADER_SIZE);
  const { bytesRead } = await fh.read(buf, 0, HEADER_SIZE, 0);
  return decodeHeader(buf.subarray(0, bytesRead), path);
}

/** The plaintext view of a pending (stored, not yet published) upload, for beforePublish hooks. */
function plainPending(pending: PendingUpload, key: Buffer, header: Header, path: string): PendingUpload {
  const layout: Layout | undefined = layoutOf(pending.size);
  return {
    size: layout?.plainSize ?? reportedPlainSize(pending.size),
    async openRead() {
      if (!layout) throw FsCryptError.integrity(path, 'the pending upload has an impossible size');
      const plain = new DecryptStream(
        {
          key,
          header,
          path,
          firstIndex: 0,
          lastIndex: layout.finalIndex,
          finalIndex: layout.finalIndex,
          finalRecordLength: layout.finalRecordLength,
          length: layout.plainSize,
        },
        HEADER_SIZE,
      );
      pipeline(await pending.openRead(), plain, () => undefined);
      return plain;
    },
  };
}
