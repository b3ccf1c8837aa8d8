import { inject, injectable } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { EventBus } from '../events/event-bus.js';
import type { RecordedEvents, RecordedKind } from '../sdk/event-history.js';

export type { RecordedEvents, RecordedKind } from '../sdk/event-history.js';

/** Bytes an event is taken to hold besides its strings (object, numbers, hidden classes). */
const EVENT_OVERHEAD = 256;

/**
 * An estimate of the memory an event holds: a fixed overhead plus two bytes
 * per character of its string fields, one level of nested objects included
 * (provider events' object_data). Cheap (no serialisation) and on the large
 * side, which is what a bound wants.
 */
export function estimateEventBytes(e: object): number {
  let n = EVENT_OVERHEAD;
  for (const v of Object.values(e)) {
    if (typeof v === 'string') n += 2 * v.length;
    else if (v && typeof v === 'object') {
      for (const w of Object.values(v as object)) n += typeof w === 'string' ? 2 * w.length + 16 : 16;
    }
  }
  return n;
}

/**
 * The events of one kind, oldest first from `start`: the entries before it
 * are dropped ones, removed in one go once there are as many as the ring
 * holds. Removing each at once (splice(0, 1)) moved the whole array: 34 us
 * an event at 10,000, on every filesystem event of a busy server.
 */
interface Ring<E> {
  events: E[];
  sizes: number[];
  start: number;
  bytes: number;
}

/**
 * Keeps the most recent filesystem, provider and log events of this node in
 * memory for event reports when no persistent event store is loaded (the
 * events-search plugin replaces it). Bounded twice per kind: at most
 * `event_manager.recorder_size` events and at most `recorder_max_bytes` of
 * estimated memory (estimateEventBytes), so events with long paths or large
 * object data cannot make it grow past its budget. Lost on restart and per
 * node.
 */
@injectable()
export class EventRecorder {
  private readonly size: number;
  private readonly maxBytes: number;
  private readonly rings: { [K in RecordedKind]: Ring<RecordedEvents[K][number]> } = {
    fs: { events: [], sizes: [], start: 0, bytes: 0 },
    provider: { events: [], sizes: [], start: 0, bytes: 0 },
    log: { events: [], sizes: [], start: 0, bytes: 0 },
  };
  private unsubscribe: (() => void)[] = [];

  constructor(
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.Config) config: FerryConfig,
  ) {
    const em = (config as unknown as { event_manager?: { recorder_size?: number; recorder_max_bytes?: number } }).event_manager;
    this.size = em?.recorder_size ?? 10000;
    this.maxBytes = em?.recorder_max_bytes ?? 16 * 1024 * 1024;
  }

  get capacity(): number {
    return this.size;
  }

  /** Events and estimated bytes held per kind. */
  usage(): Record<RecordedKind, { events: number; bytes: number }> {
    const u = (k: RecordedKind) => ({ events: this.rings[k].events.length - this.rings[k].start, bytes: this.rings[k].bytes });
    return { fs: u('fs'), provider: u('provider'), log: u('log') };
  }

  start(): void {
    if (this.size <= 0 || this.maxBytes <= 0 || this.unsubscribe.length) return;
    const push = <K extends RecordedKind>(k: K, e: RecordedEvents[K][number]) => {
      const ring = this.rings[k] as Ring<RecordedEvents[K][number]>;
      const bytes = estimateEventBytes(e);
      ring.events.push(e);
      ring.sizes.push(bytes);
      ring.bytes += bytes;
      let held = ring.events.length - ring.start;
      while (held > this.size || (ring.bytes > this.maxBytes && held > 1)) {
        ring.bytes -= ring.sizes[ring.start]!;
        // (let go of the event at once: only the array slot waits for the compaction)
        (ring.events as unknown[])[ring.start] = undefined;
        ring.start++;
        held--;
      }
      if (ring.start >= Math.max(held, 64)) {
        ring.events.splice(0, ring.start);
        ring.sizes.splice(0, ring.start);
        ring.start = 0;
      }
    };
    this.unsubscribe.push(
      this.bus.on('fs', (e) => push('fs', e)),
      this.bus.on('provider', (e) => push('provider', e)),
      this.bus.on('log', (e) => push('log', e)),
    );
  }

  stop(): void {
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
  }

  /** Recorded events of a kind with start <= timestamp (ns) <= end, oldest first. */
  query<K extends RecordedKind>(kind: K, startNs: number, endNs: number): RecordedEvents[K] {
    const ring = this.rings[kind] as Ring<RecordedEvents[K][number]>;
    const out: RecordedEvents[K][number][] = [];
    for (let i = ring.start; i < ring.events.length; i++) {
      const e = ring.events[i]!;
      if (e.timestamp >= startNs && e.timestamp <= endNs) out.push(e);
    }
    return out as RecordedEvents[K];
  }
}
