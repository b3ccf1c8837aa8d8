import type { EventRecorderStats, EventSearchKind, Logger } from '@ferry/core';
import type { EventRows, EventStore } from './store.js';

type Pending = { [K in EventSearchKind]: { kind: K; row: EventRows[K] } }[EventSearchKind];

export interface WriterOptions {
  queueSize: number;
  batchSize: number;
  /** ms */
  flushInterval: number;
}

/** How often (ms) drops are reported in the log at most: every drop is counted, the log says how many. */
const DROP_LOG_INTERVAL = 10_000;

/**
 * Writes recorded events in batches, off the publisher's path: add() only
 * pushes onto a bounded in-memory queue, and a single writer drains it with
 * multi-row INSERTs (a full batch at once, a partial one after
 * `flushInterval`). When the queue is full a new event is dropped: counted
 * (stats().dropped) and reported in the log, never silently. A failed write
 * keeps its batch at the head of the queue and is retried after
 * `flushInterval`. close() writes everything still queued.
 */
export class EventWriter {
  private queue: Pending[] = [];
  private head = 0;
  private recorded = 0;
  private dropped = 0;
  private droppedUnlogged = 0;
  private lastDropLog = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly store: EventStore,
    private readonly o: WriterOptions,
    private readonly logger: Logger,
  ) {}

  get queued(): number {
    return this.queue.length - this.head;
  }

  stats(): EventRecorderStats {
    return { recorded: this.recorded, queued: this.queued, dropped: this.dropped };
  }

  add(p: Pending): void {
    if (this.closed || this.queued >= this.o.queueSize) {
      this.drop(this.closed ? 'the recorder is stopped' : `the queue is full (${this.o.queueSize} events)`);
      return;
    }
    this.queue.push(p);
    if (this.queued >= this.o.batchSize) this.kick();
    else this.timer ??= setTimeout(() => this.kick(), this.o.flushInterval).unref();
  }

  private drop(reason: string): void {
    this.dropped++;
    this.droppedUnlogged++;
    const now = Date.now();
    if (now - this.lastDropLog >= DROP_LOG_INTERVAL) {
      this.lastDropLog = now;
      this.logger.warn({ dropped: this.droppedUnlogged, dropped_total: this.dropped }, `event search dropped events: ${reason}`);
      this.droppedUnlogged = 0;
    }
  }

  private kick(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
      if (this.queued && !this.closed) this.timer ??= setTimeout(() => this.kick(), this.o.flushInterval).unref();
    });
  }

  /** Writes the queue in batches until it is empty (events added meanwhile included); stops at the first failure. */
  private async drain(): Promise<void> {
    while (this.queued > 0) {
      const batch = this.queue.slice(this.head, this.head + this.o.batchSize);
      try {
        await this.write(batch);
      } catch (err) {
        this.logger.error({ err, events: this.queued }, 'event search could not write events; retrying');
        return;
      }
      this.head += batch.length;
      this.recorded += batch.length;
      if (this.head > 4096 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
    }
    this.queue = [];
    this.head = 0;
  }

  private async write(batch: Pending[]): Promise<void> {
    const byKind: { [K in EventSearchKind]: EventRows[K][] } = { fs: [], provider: [], log: [] };
    for (const p of batch) (byKind[p.kind] as EventRows[typeof p.kind][]).push(p.row);
    for (const kind of ['fs', 'provider', 'log'] as const) await this.store.insert(kind, byKind[kind]);
  }

  /** Stops accepting events and writes the queued ones (one more try after a failure); reports what could not be written. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    for (let attempt = 0; attempt < 2 && this.queued; attempt++) await this.drain();
    if (this.queued) {
      this.dropped += this.queued;
      this.logger.error({ dropped: this.queued, dropped_total: this.dropped }, 'event search stopped with events it could not write');
    } else if (this.dropped) {
      this.logger.warn({ dropped_total: this.dropped }, 'event search stopped; events were dropped while running');
    }
  }
}
