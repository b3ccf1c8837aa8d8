import type { FsEvent } from './event-types.js';
import type { Fs, PendingUpload } from '../fs/fs.contract.js';

/**
 * Seams through which the event manager takes part in file operations.
 *
 * - `sync` hooks run after an operation completed but before the client gets
 *   its answer; throwing aborts the operation (for an upload the file is
 *   removed and the client gets an error).
 * - `beforePublish` hooks run while an atomic upload still sits at its
 *   temporary path; throwing rejects the upload and removes the temporary file.
 *   `pending.openRead()` reads the bytes before they become visible.
 */
export interface FsHookContext {
  event: FsEvent;
  /** Backend and backend path of the file concerned. */
  fs?: Fs;
  fsPath?: string;
}

export interface BeforePublishContext extends FsHookContext {
  pending: PendingUpload;
}

export type SyncFsHook = (ctx: FsHookContext) => Promise<void>;
/** Whether a sync hook may act on an event action ('pre-download', ...): false lets the core skip what only a hook would need. */
export type SyncFsHookFilter = (action: FsEvent['action']) => Promise<boolean>;
export type BeforePublishHook = (ctx: BeforePublishContext) => Promise<void>;

export class FsHooks {
  private readonly syncHooks: { hook: SyncFsHook; handles?: SyncFsHookFilter }[] = [];
  private readonly publishHooks: BeforePublishHook[] = [];

  /** `handles` tells which actions the hook may act on (without it: any). */
  addSync(hook: SyncFsHook, handles?: SyncFsHookFilter): void {
    this.syncHooks.push({ hook, handles });
  }

  /** True when some sync hook may act on `action`. */
  async handlesSync(action: FsEvent['action']): Promise<boolean> {
    for (const h of this.syncHooks) if (!h.handles || (await h.handles(action))) return true;
    return false;
  }
  addBeforePublish(hook: BeforePublishHook): void {
    this.publishHooks.push(hook);
  }
  get hasBeforePublish(): boolean {
    return this.publishHooks.length > 0;
  }

  async runSync(ctx: FsHookContext): Promise<void> {
    for (const h of this.syncHooks) await h.hook(ctx);
  }
  async runBeforePublish(ctx: BeforePublishContext): Promise<void> {
    for (const h of this.publishHooks) await h(ctx);
  }
}
