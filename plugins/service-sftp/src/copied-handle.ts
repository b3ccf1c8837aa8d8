import type { FileSession } from '@ferry/core';
import { STATUS, SftpStatusError } from './status.js';

/**
 * A file opened for writing whose content came from copy-data (a copy done
 * by the storage): no more WRITEs; CLOSE applies a modification time set
 * meanwhile and answers the copy's failure, if any.
 */
export class CopiedHandle {
  readonly kind = 'write';
  readonly untouched = false;
  mtime: Date | null = null;
  private error: unknown = null;

  constructor(
    private readonly session: FileSession,
    readonly path: string,
    public size: number,
  ) {}

  writeAt(): Promise<void> {
    return Promise.reject(new SftpStatusError(STATUS.OP_UNSUPPORTED, 'the file was written by copy-data: no more writes on this handle'));
  }

  failed(err: unknown): void {
    this.error = err;
  }

  flush(): Promise<void> {
    return this.error ? Promise.reject(this.error as Error) : Promise.resolve();
  }

  discard(): Promise<void> {
    return Promise.resolve();
  }

  abort(): void {}

  async close(): Promise<void> {
    if (this.error) throw this.error;
    if (this.mtime) await this.session.setMtime(this.path, this.mtime).catch(() => undefined);
  }
}
