import { inject, injectable } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { EventBus } from '../events/event-bus.js';
import type { FsEvent, LogEvent, ProviderEvent } from '../events/event-types.js';

export type RecordedKind = 'fs' | 'provider' | 'log';

export interface RecordedEvents {
  fs: FsEvent[];
  provider: ProviderEvent[];
  log: LogEvent[];
}

/**
 * Keeps the most recent filesystem, provider and log events of this node in
 * memory (a ring of `event_manager.recorder_size` entries per kind) for
 * event reports, until a persistent event search store exists. Lost on
 * restart and per node.
 */
@injectable()
export class EventRecorder {
  private readonly size: number;
  private readonly rings: RecordedEvents = { fs: [], provider: [], log: [] };
  private unsubscribe: (() => void)[] = [];

  constructor(
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.Config) config: FerryConfig,
  ) {
    const em = (config as unknown as { event_manager?: { recorder_size?: number } }).event_manager;
    this.size = em?.recorder_size ?? 10000;
  }

  get capacity(): number {
    return this.size;
  }

  start(): void {
    if (this.size <= 0 || this.unsubscribe.length) return;
    const push = <K extends RecordedKind>(k: K, e: RecordedEvents[K][number]) => {
      const ring = this.rings[k] as RecordedEvents[K][number][];
      ring.push(e);
      if (ring.length > this.size) ring.splice(0, ring.length - this.size);
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
    return (this.rings[kind] as RecordedEvents[K][number][]).filter((e) => e.timestamp >= startNs && e.timestamp <= endNs) as RecordedEvents[K];
  }
}
