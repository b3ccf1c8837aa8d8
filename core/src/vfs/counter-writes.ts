import type { MikroORM } from '@mikro-orm/core';
import { runStatement } from '../data/bound-sql.js';

/** How long a lingering change (a download's counters) may wait for others before it is stored. */
export const COUNTERS_LINGER_MS = 100;

/** Which counters of a row: used quota (size, files) or data transfer (upload, download bytes). */
export type CounterSet = 'usage' | 'transfer';

interface Pending {
  table: 'users' | 'folders';
  id: number;
  set: CounterSet;
  a: number;
  b: number;
  waiters: { resolve: () => void; reject: (err: unknown) => void }[];
}

/**
 * `column = column + delta`, never below zero, computed by the database (no
 * lost updates); its two parameters are the delta, twice.
 */
const clamped = (column: string) => `${column} = case when ${column} + ? < 0 then 0 else ${column} + ? end`;

const USAGE = `${clamped('used_quota_size')}, ${clamped('used_quota_files')}, last_quota_update = ?`;
const TRANSFER = `${clamped('used_upload_data_transfer')}, ${clamped('used_download_data_transfer')}`;

/**
 * One statement per row: the usage and the transfer counters of the same
 * row (an upload changes both) are set by one update, so a batch of one
 * user's upload is one statement, run without a transaction of its own.
 */
function statementsOf(batch: Pending[]): { sql: string; params: unknown[] }[] {
  const rows = new Map<string, { table: string; id: number; cols: string[]; params: unknown[] }>();
  for (const p of batch) {
    if (!p.a && !p.b) continue;
    const key = `${p.table}:${p.id}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { table: p.table, id: p.id, cols: [], params: [] }));
    row.cols.push(p.set === 'usage' ? USAGE : TRANSFER);
    row.params.push(p.a, p.a, p.b, p.b);
    if (p.set === 'usage') row.params.push(Date.now());
  }
  return [...rows.values()].map((r) => ({ sql: `update ${r.table} set ${r.cols.join(', ')} where id = ?`, params: [...r.params, r.id] }));
}

/**
 * The counter updates of transfers, uploads and deletes, stored by group
 * commit: the changes that arrive while a write is running (or in the same
 * turn of the event loop) are summed per row and stored together, one
 * statement per row, in one transaction. Every change's promise settles
 * when its write is committed (or failed): callers wait as they waited for
 * their own statement (the upload journal forgets an upload only then), and
 * the quota tracker keeps its reservation meanwhile, so quota checks see the
 * in-flight totals. What this saves: one transaction (on SQLite, one sync of
 * the write-ahead log, run on the event loop) per request under load; 16
 * downloads of one user at once become one update.
 *
 * A change added with `linger` (the download counters: nothing waits for
 * them) may wait up to `lingerMs` for others before it is stored, so that
 * downloads one after the other, which arrive one at a time, still share a
 * commit; a change without it, or flush(), stores what lingers at once.
 *
 * The sum of a batch is clamped at 0 once, where each change was clamped on
 * its own before: a difference only when a counter would have gone below 0
 * in between (a drift that quota scans correct anyway).
 */
export class CounterWrites {
  private readonly queue = new Map<string, Pending>();
  private running = false;
  private scheduled = false;
  /** A change that does not linger waits in the queue: the next write starts at once. */
  private urgent = false;
  private lingering: NodeJS.Timeout | undefined;
  /** flush() callers waiting for the next write to start (it holds every change they wanted stored). */
  private readonly flushing: (() => void)[] = [];

  constructor(
    private readonly orm: MikroORM,
    /** How long lingering changes may wait (tests lengthen it). */
    public lingerMs = COUNTERS_LINGER_MS,
  ) {}

  /** Adds (a, b) to the counter set of a row; resolves once stored. */
  add(table: 'users' | 'folders', id: number, set: CounterSet, a: number, b: number, o: { linger?: boolean } = {}): Promise<void> {
    if (!o.linger) this.urgent = true;
    return new Promise((resolve, reject) => {
      const key = `${table}:${id}:${set}`;
      let p = this.queue.get(key);
      if (!p) {
        p = { table, id, set, a: 0, b: 0, waiters: [] };
        this.queue.set(key, p);
      }
      p.a += a;
      p.b += b;
      p.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /**
   * Stores every change added so far, lingering ones included; resolves once
   * they are stored (or their write failed), whatever is added meanwhile.
   */
  flush(): Promise<void> {
    if (!this.queue.size && !this.running) return Promise.resolve();
    this.urgent = true;
    return new Promise((resolve) => {
      this.flushing.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    if (!this.urgent) {
      // only lingering changes: stored when the linger is over, or with the next urgent one
      this.lingering ??= setTimeout(() => {
        this.lingering = undefined;
        this.urgent = true;
        this.schedule();
      }, this.lingerMs).unref();
      return;
    }
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.urgent = false;
      this.running = true;
      // this write holds what they wanted stored
      const flushed = this.flushing.splice(0);
      void this.write().finally(() => {
        this.running = false;
        for (const done of flushed) done();
        if (this.queue.size) this.schedule();
        // (asked while this write ran, with nothing queued: this write held it all)
        else for (const done of this.flushing.splice(0)) done();
      });
    });
  }

  private async write(): Promise<void> {
    const batch = [...this.queue.values()].filter((p) => p.a || p.b || p.waiters.length);
    this.queue.clear();
    const statements = statementsOf(batch);
    try {
      if (statements.length === 1) {
        await runStatement(this.orm.em, statements[0]!.sql, statements[0]!.params);
      } else if (statements.length > 1) {
        await this.orm.em.fork().transactional(async (tem) => {
          const ctx = tem.getTransactionContext();
          const conn = tem.getConnection() as unknown as { execute(sql: string, params: unknown[], method: 'run', ctx: unknown): Promise<unknown> };
          for (const s of statements) await conn.execute(s.sql, s.params, 'run', ctx);
        });
      }
      for (const p of batch) for (const w of p.waiters) w.resolve();
    } catch (err) {
      for (const p of batch) for (const w of p.waiters) w.reject(err);
    }
  }
}
