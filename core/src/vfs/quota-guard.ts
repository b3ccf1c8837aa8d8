import { FsError, FsErrorCode } from '../fs/fs-error.js';
import type { EffectiveUser } from '../accounts/effective-user.js';
import type { Mount } from './vfs.js';
import type { CommitItem, Pair, QuotaTracker } from './quota-tracker.js';
import type { UsageStore } from './usage-store.js';
import type { QuotaService } from './quota.service.js';

const MB = 1024 * 1024;

/** Where a mount's usage is counted and which limits apply. */
export interface QuotaScope {
  /** Tracker key whose limits are checked. */
  key: string;
  /** [size, files] limits; 0 (or less) is unlimited. */
  limits: Pair;
  read(): Promise<Pair>;
  /** Stores a change of the used counters (every counter this mount moves). */
  write(size: number, files: number): Promise<void>;
  /** Human name for messages. */
  label: string;
}

/**
 * The quota scope of a mount: the user's own filesystem and virtual folders
 * with quota -1 count against the user's quota (a folder's own counters move
 * too); a folder with its own quota counts against that quota only.
 */
export function quotaScope(user: EffectiveUser, mount: Mount, usage: UsageStore, quota: QuotaService): QuotaScope {
  const f = mount.folder;
  const write = (size: number, files: number) => quota.addUsage(user, f ?? null, size, files);
  if (!f) {
    return {
      key: `u:${user.id}`,
      limits: [user.quota_size, user.quota_files],
      read: async () => {
        const u = await usage.userUsage(user.id);
        return [u.size, u.files];
      },
      write,
      label: 'the user quota',
    };
  }
  if (f.quota_size === -1 && f.quota_files === -1) {
    return {
      key: `u:${user.id}`,
      limits: [user.quota_size, user.quota_files],
      read: async () => {
        const u = await usage.userUsage(user.id);
        return [u.size, u.files];
      },
      write,
      label: 'the user quota',
    };
  }
  return {
    key: `f:${f.folder_id}`,
    limits: [f.quota_size, f.quota_files],
    read: async () => {
      const u = await usage.folderUsage(f.folder_id);
      return [u.size, u.files];
    },
    write,
    label: `the quota of the virtual folder "${f.name}"`,
  };
}

function hasLimits(limits: Pair): boolean {
  return limits[0] > 0 || limits[1] > 0;
}

export function quotaError(message: string): FsError {
  return new FsError(FsErrorCode.Quota, message);
}

/**
 * Storage quota of one write (upload, copy, cross-folder move): reserves the
 * files and bytes it adds before they are stored. An overwrite is credited
 * with the size of the file it replaces.
 */
export class StorageReservation {
  private reserved: Pair = [0, 0];
  private credit: number;
  private done = false;
  private readonly limited: boolean;

  constructor(
    private readonly tracker: QuotaTracker,
    readonly scope: QuotaScope,
    /** Size of the file being replaced (0 for a new file). */
    private readonly replacedSize: number,
    /** Files added (1 for a new file, 0 for an overwrite; more for a directory copy). */
    private readonly newFiles: number,
  ) {
    this.credit = replacedSize;
    this.limited = hasLimits(scope.limits);
  }

  private fits = (t: Pair): boolean =>
    (this.scope.limits[0] <= 0 || t[0] <= this.scope.limits[0]) && (this.scope.limits[1] <= 0 || t[1] <= this.scope.limits[1]);

  /** Loads the stored usage and reserves the files and the declared size; throws QUOTA when they do not fit. */
  async begin(declaredSize?: number): Promise<void> {
    if (!this.limited) return;
    await this.tracker.refresh(this.scope.key, () => this.scope.read());
    const bytes = Math.max(0, (declaredSize ?? 0) - this.credit);
    if (!this.tracker.tryReserve(this.scope.key, [bytes, this.newFiles], this.fits)) {
      const [size, files] = this.tracker.current(this.scope.key);
      const [maxSize, maxFiles] = this.scope.limits;
      if (maxFiles > 0 && files + this.newFiles > maxFiles) throw quotaError(`file quota exceeded: ${this.scope.label} allows ${maxFiles} files`);
      throw quotaError(`size quota exceeded: ${this.scope.label} allows ${maxSize} bytes, ${size} in use, ${bytes} more needed`);
    }
    this.reserved = [bytes, this.newFiles];
    this.credit = Math.max(0, this.credit - (declaredSize ?? 0));
    this.covered = declaredSize ?? 0;
  }

  /** Bytes already reserved or credited. */
  private covered = 0;
  private taken = 0;

  /** Accounts `n` more bytes as they arrive; false (nothing accounted) when they exceed the quota. */
  take(n: number): boolean {
    if (!this.limited) return true;
    const after = this.taken + n;
    if (after > this.covered) {
      let need = after - this.covered;
      const free = Math.min(this.credit, need);
      need -= free;
      if (need > 0 && !this.tracker.tryReserve(this.scope.key, [need, 0], this.fits)) return false;
      this.credit -= free;
      this.reserved[0] += need;
      this.covered = after;
    }
    this.taken = after;
    return true;
  }

  /**
   * Stores the final change (`finalSize` bytes now in place of `replacedSize`,
   * `files` more files) and frees the reservation.
   */
  async commit(finalSize: number, files = this.newFiles, replacedSize = this.replacedSize, batch?: QuotaBatch): Promise<void> {
    if (this.done) return;
    this.done = true;
    const applied: Pair = [finalSize - replacedSize, files];
    const item = { key: this.scope.key, reserved: this.reserved, applied };
    if (batch) return batch.add(this.tracker, item, (size, n) => this.scope.write(size, n));
    await this.tracker.commit([item], () => this.scope.write(applied[0], applied[1]));
  }

  /** Frees the reservation without storing anything. */
  release(): void {
    if (this.done) return;
    this.done = true;
    this.tracker.release(this.scope.key, this.reserved);
  }
}

/** Upload/download/total transfer quotas of a user (limits in MB, usage in bytes). */
export class TransferReservation {
  private reserved: Pair = [0, 0];
  private moved = 0;
  private done = false;
  private readonly key: string;
  private readonly limits: { up: number; down: number; total: number };
  private readonly limited: boolean;

  constructor(
    private readonly tracker: QuotaTracker,
    private readonly usage: UsageStore,
    private readonly quota: QuotaService,
    private readonly user: EffectiveUser,
    private readonly direction: 'upload' | 'download',
  ) {
    this.key = `t:${user.id}`;
    this.limits = {
      up: (user.upload_data_transfer ?? 0) * MB,
      down: (user.download_data_transfer ?? 0) * MB,
      total: (user.total_data_transfer ?? 0) * MB,
    };
    this.limited = this.limits.total > 0 || (direction === 'upload' ? this.limits.up > 0 : this.limits.down > 0);
  }

  private fits = (t: Pair): boolean =>
    (this.limits.up <= 0 || t[0] <= this.limits.up) &&
    (this.limits.down <= 0 || t[1] <= this.limits.down) &&
    (this.limits.total <= 0 || t[0] + t[1] <= this.limits.total);

  private delta(n: number): Pair {
    return this.direction === 'upload' ? [n, 0] : [0, n];
  }

  /** Loads the stored usage; throws QUOTA when the quota is already used up (or `declared` bytes do not fit). */
  async begin(declared = 0): Promise<void> {
    if (!this.limited) return;
    await this.tracker.refresh(this.key, async () => {
      const u = await this.usage.userUsage(this.user.id);
      return [u.upload, u.download];
    });
    const need = Math.max(1, declared);
    if (!this.tracker.tryReserve(this.key, this.delta(need), this.fits)) {
      throw quotaError(`${this.direction} transfer quota exceeded`);
    }
    this.reserved = this.delta(need);
    this.prepaid = need;
  }

  private prepaid = 0;

  /** Accounts `n` bytes moved; false (nothing accounted) when they exceed the transfer quota. */
  take(n: number): boolean {
    const after = this.moved + n;
    if (this.limited && after > this.prepaid) {
      const d = this.delta(after - this.prepaid);
      if (!this.tracker.tryReserve(this.key, d, this.fits)) return false;
      this.reserved = [this.reserved[0] + d[0], this.reserved[1] + d[1]];
      this.prepaid = after;
    }
    this.moved = after;
    return true;
  }

  get bytes(): number {
    return this.moved;
  }

  /**
   * Stores the bytes actually moved (also for failed transfers) and frees
   * the reservation once stored. With `linger` (downloads: nothing waits for
   * their counters) the write may wait a little for others to share its
   * commit (CounterWrites); the reservation holds the bytes meanwhile, so
   * quota checks still count them. Only for a user without transfer quotas:
   * a limited user's next transfer reloads the stored usage, which waits
   * for the commits of the user's counters in progress (QuotaTracker.refresh).
   */
  async commit(batch?: QuotaBatch, o: { linger?: boolean } = {}): Promise<void> {
    if (this.done) return;
    this.done = true;
    const applied = this.delta(this.moved);
    const item = { key: this.key, reserved: this.reserved, applied };
    if (batch) return batch.add(this.tracker, item, (up, down) => this.quota.addTransfer(this.user.id, up, down));
    const linger = o.linger === true && !this.limited;
    await this.tracker.commit([item], () => this.quota.addTransfer(this.user.id, applied[0], applied[1], { linger }));
  }
}

/**
 * Quota changes of several transfers of one request (a multipart upload),
 * stored together by `flush()`: one database write per counter set (key)
 * instead of one per file and counter. Until then the reservations stay in
 * place, so concurrent transfers still see the space as taken.
 */
export class QuotaBatch {
  private readonly byKey = new Map<string, { tracker: QuotaTracker; items: CommitItem[]; write: (a: number, b: number) => Promise<void> }>();
  private readonly onceResults = new Map<string, Promise<boolean>>();
  private readonly flushed: (() => void)[] = [];

  /** Runs `fn` once the next flush() is over (stored or failed): the upload journal forgets the batch's uploads then. */
  afterFlush(fn: () => void): void {
    this.flushed.push(fn);
  }

  /** Adds a commit (the writes of one key all go through the first `write` given for it). */
  add(tracker: QuotaTracker, item: CommitItem, write: (a: number, b: number) => Promise<void>): void {
    const k = this.byKey.get(item.key);
    if (k) k.items.push(item);
    else this.byKey.set(item.key, { tracker, items: [item], write });
  }

  /**
   * Moves the changes and after-flush callbacks of `other` (a batch whose
   * transfers are over) into this one; `other` is left empty. Its changes
   * must be written as this batch's are (same mount: see UploadCounters).
   */
  absorb(other: QuotaBatch): void {
    for (const g of other.byKey.values()) for (const it of g.items) this.add(g.tracker, it, g.write);
    other.byKey.clear();
    this.flushed.push(...other.flushed.splice(0));
  }

  /**
   * Runs `fn` once for the batch under `name`: the first caller gets its
   * result, later ones false (first_upload markers: one write per request).
   */
  async once(name: string, fn: () => Promise<boolean>): Promise<boolean> {
    if (this.onceResults.has(name)) return false;
    const r = fn();
    this.onceResults.set(name, r);
    return r;
  }

  /** Stores every change added so far (each key's sum in one write) and frees the reservations. */
  async flush(): Promise<void> {
    const groups = [...this.byKey.values()];
    this.byKey.clear();
    let failure: unknown;
    // started together: the counter writes of one row (an upload's storage and transfer counters) become one statement (CounterWrites)
    await Promise.all(
      groups.map((g) => {
        const sum: Pair = [0, 0];
        for (const it of g.items) {
          sum[0] += it.applied[0];
          sum[1] += it.applied[1];
        }
        return g.tracker.commit(g.items, () => g.write(sum[0], sum[1])).catch((err: unknown) => (failure ??= err));
      }),
    );
    for (const fn of this.flushed.splice(0)) fn();
    if (failure !== undefined) throw failure;
  }
}
