import { QuotaBatch } from './quota-guard.js';
import type { Mount } from './vfs.js';

/** How long the counters of a finished deferred upload wait for those of the next ones before they are stored. */
export const UPLOAD_COUNTERS_FLUSH_MS = 100;

/**
 * The quota and transfer counters of a session's deferred uploads
 * (SessionWriteOptions.deferCounters: SFTP, where a `put -r` sends one file
 * after the other and each paid a database commit of its own): each upload
 * gathers its changes in a QuotaBatch of its own; once it is over they join
 * (join()) the session's pending batch of its mount (the user's storage or a virtual
 * folder: their counters are written differently), stored together within
 * UPLOAD_COUNTERS_FLUSH_MS, by flush() (FileSession.quota(), close()).
 *
 * Until then the quota tracker keeps the uploads' reservations (quota checks
 * see them, as with a multipart request's batch) and their upload journal
 * entries stay (a crash meanwhile leaves the storage counters to the rescan
 * at start-up); the transfer counters of those uploads are what a crash in
 * that window loses.
 */
export class UploadCounters {
  private pending = new Map<string, QuotaBatch>();
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Set<Promise<void>>();

  constructor(
    /** A failed write of the counters (logged: the counters stay as they were, a quota scan repairs them). */
    private readonly onError: (err: unknown) => void,
    private readonly delayMs = UPLOAD_COUNTERS_FLUSH_MS,
  ) {}

  /** The changes of a finished upload into `mount`, stored with the others at the next flush. */
  join(mount: Mount, batch: QuotaBatch): void {
    const key = mount.folder ? `f:${mount.folder.folder_id}` : 'u';
    let into = this.pending.get(key);
    if (!into) this.pending.set(key, (into = new QuotaBatch()));
    into.absorb(batch);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.delayMs);
    this.timer.unref();
  }

  /** Stores every pending change; resolves once they (and the flushes already running) are over. Never rejects. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batches = [...this.pending.values()];
    this.pending = new Map();
    for (const b of batches) {
      const run = b.flush().catch(this.onError);
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }
    return Promise.all([...this.running]).then(() => undefined);
  }
}
