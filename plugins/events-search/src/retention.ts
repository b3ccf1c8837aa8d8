import type { Logger } from '@ferry/core';
import type { EventStore } from './store.js';
import type { EventsSearchConfig } from './config.schema.js';

const DAY_NS = 86_400 * 1e9;

/**
 * Deletes events older than `retention_days` at start and every
 * `cleanup_interval` minutes (every node does it; deleting is idempotent).
 * 0 days keeps events forever.
 */
export class Retention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly config: Pick<EventsSearchConfig, 'retention_days' | 'cleanup_interval'>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.config.retention_days <= 0) return;
    this.runOnce();
    this.timer = setInterval(() => this.runOnce(), this.config.cleanup_interval * 60_000).unref();
  }

  /** One cleanup (skipped while the previous one still runs). */
  runOnce(): Promise<void> {
    this.running ??= this.cleanup().finally(() => (this.running = undefined));
    return this.running;
  }

  private async cleanup(): Promise<void> {
    const before = Date.now() * 1e6 - this.config.retention_days * DAY_NS;
    try {
      const deleted = await this.store.deleteBefore(before);
      if (deleted.fs + deleted.provider + deleted.log > 0) {
        this.logger.info({ deleted, retention_days: this.config.retention_days }, 'event search deleted expired events');
      }
    } catch (err) {
      this.logger.error({ err }, 'event search could not delete expired events');
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
