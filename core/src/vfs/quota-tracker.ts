import { Lifecycle, scoped } from 'tsyringe';

/** Two counters: [size, files] for storage quotas, [upload, download] bytes for transfer quotas. */
export type Pair = [number, number];

interface Entry {
  /** Last known stored usage (loaded from the database, then moved by this process's commits). */
  used: Pair;
  /** Bytes/files held by transfers in progress. */
  reserved: Pair;
  /** Bumped by every commit, so a database read that raced a commit is retried. */
  epoch: number;
  /** Commits whose database write is in flight. */
  committing: number;
  loaded: boolean;
}

export interface CommitItem {
  key: string;
  /** What the transfer had reserved under the key. */
  reserved: Pair;
  /** What the database write adds to the stored usage of the key. */
  applied: Pair;
}

/**
 * The in-process reservation table that makes quota checks hold under
 * concurrency. Every transfer reserves what it is about to add before adding
 * it (synchronously, so two transfers can never both take the last bytes),
 * then commits (stored counters updated, reservation turned into usage) or
 * releases. Keys: `u:<user id>`, `f:<folder id>` (storage), `t:<user id>` (transfer).
 *
 * One instance per app (container scoped).
 */
@scoped(Lifecycle.ContainerScoped)
export class QuotaTracker {
  private readonly entries = new Map<string, Entry>();

  private entry(key: string): Entry {
    let e = this.entries.get(key);
    if (!e) {
      e = { used: [0, 0], reserved: [0, 0], epoch: 0, committing: 0, loaded: false };
      this.entries.set(key, e);
    }
    return e;
  }

  /**
   * Reloads the stored usage of a key. A read that overlapped a commit of
   * this process is repeated, so the known usage never counts a change twice
   * nor misses one whose reservation is already gone. When commits never
   * pause, the usage known so far is kept (it already follows them).
   */
  async refresh(key: string, read: () => Promise<Pair>): Promise<void> {
    const e = this.entry(key);
    for (let i = 0; i < 20; i++) {
      if (e.committing > 0) {
        await new Promise((r) => setTimeout(r, 2 + i * 2));
        continue;
      }
      const epoch = e.epoch;
      const used = await read();
      if (e.committing === 0 && e.epoch === epoch) {
        e.used = used;
        e.loaded = true;
        return;
      }
      if (!e.loaded && i === 19) {
        e.used = used;
        e.loaded = true;
      }
    }
  }

  /** Usage including reservations. */
  current(key: string): Pair {
    const e = this.entry(key);
    return [e.used[0] + e.reserved[0], e.used[1] + e.reserved[1]];
  }

  /**
   * Reserves `delta` when `fits(usage + reservations + delta)` holds; false
   * (and nothing reserved) otherwise. Synchronous: the check and the
   * reservation cannot interleave with another transfer's.
   */
  tryReserve(key: string, delta: Pair, fits: (total: Pair) => boolean): boolean {
    const e = this.entry(key);
    const total: Pair = [e.used[0] + e.reserved[0] + delta[0], e.used[1] + e.reserved[1] + delta[1]];
    if (!fits(total)) return false;
    e.reserved[0] += delta[0];
    e.reserved[1] += delta[1];
    return true;
  }

  /** Gives back a reservation that will not be used. */
  release(key: string, reserved: Pair): void {
    const e = this.entry(key);
    e.reserved[0] = Math.max(0, e.reserved[0] - reserved[0]);
    e.reserved[1] = Math.max(0, e.reserved[1] - reserved[1]);
  }

  /**
   * Runs the database write that stores a transfer's changes, then drops the
   * reservations and moves the known usage in one synchronous step. The
   * reservations are dropped even when the write fails.
   */
  async commit(items: CommitItem[], write: () => Promise<void>): Promise<void> {
    const entries = items.map((it) => this.entry(it.key));
    for (const e of entries) e.committing++;
    let ok = false;
    try {
      await write();
      ok = true;
    } finally {
      items.forEach((it, i) => {
        const e = entries[i]!;
        e.committing--;
        this.release(it.key, it.reserved);
        if (ok) {
          e.used[0] = Math.max(0, e.used[0] + it.applied[0]);
          e.used[1] = Math.max(0, e.used[1] + it.applied[1]);
        }
        e.epoch++;
      });
    }
  }
}

/** What a path held just before a write was published. */
export interface Replaced {
  size: number;
  existed: boolean;
}

interface PathEntry {
  /** Writes to the path in progress. */
  writers: number;
  /** Bumped by every publish to the path. */
  version: number;
  /** The path's state after the latest publish. */
  state: Replaced;
}

/** A write registered with {@link PathWrites.begin}. */
export interface PathWrite {
  /** What the write replaces, as known now: its own stat, or what a concurrent write published since. */
  replaced(): Replaced;
  /** Records that this write's file (or none, when `size` is null) is now at the path; returns what it replaced. */
  published(size: number | null): Replaced;
  end(): void;
}

/**
 * Writes in progress per stored path, so concurrent uploads to one path
 * count the file once: each upload stats the path when it starts, and the
 * one that publishes second replaces the first one's file, not what it saw.
 * In-process: writes from other nodes to the same path are not seen; a
 * backend that looks at the destination as it publishes or removes
 * (WriteResult.replaced, Fs.removeCounted) covers those, and {@link turn}
 * keeps this process's own publishes and removals of a path in order.
 */
@scoped(Lifecycle.ContainerScoped)
export class PathWrites {
  // keyed by pathWriteKey() (path-write-key.ts)
  private readonly paths = new Map<string, PathEntry>();
  private readonly turns = new Map<string, Promise<void>>();

  /**
   * Waits for the path's turn: this process publishes and removes one path
   * one step at a time, so what a backend looks at just before the step is
   * what the step changes. Answers the function that ends the turn (it must
   * be called; calling it again does nothing).
   */
  async turn(key: string): Promise<() => void> {
    const before = this.turns.get(key);
    let end!: () => void;
    const mine = new Promise<void>((resolve) => (end = resolve));
    this.turns.set(key, mine);
    if (before) await before;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      end();
      if (this.turns.get(key) === mine) this.turns.delete(key);
    };
  }

  /**
   * Runs `remove` (the removal of the path's file) in the path's turn; once
   * it succeeded, the writes to the path in progress replace nothing.
   */
  async removing<T>(key: string, remove: () => Promise<T>): Promise<T> {
    const end = await this.turn(key);
    try {
      const result = await remove();
      const e = this.paths.get(key);
      if (e) {
        e.version++;
        e.state = { size: 0, existed: false };
      }
      return result;
    } finally {
      end();
    }
  }

  /** Registers a write before the path is stat'ed; `stat` is what the write saw. */
  begin(key: string): { seen(stat: Replaced): PathWrite } {
    let e = this.paths.get(key);
    if (!e) {
      e = { writers: 0, version: 0, state: { size: 0, existed: false } };
      this.paths.set(key, e);
    }
    e.writers++;
    const entry = e;
    let version = e.version;
    let ended = false;
    return {
      seen: (stat: Replaced): PathWrite => {
        const replaced = (): Replaced => (entry.version !== version ? { ...entry.state } : { ...stat });
        return {
          replaced,
          published: (size) => {
            const before = replaced();
            entry.version++;
            entry.state = size === null ? { size: 0, existed: false } : { size, existed: true };
            // from now on this write's own result is what it replaces
            version = entry.version;
            stat = { ...entry.state };
            return before;
          },
          end: () => {
            if (ended) return;
            ended = true;
            if (--entry.writers === 0) this.paths.delete(key);
          },
        };
      },
    };
  }
}
