/**
 * Bounded asynchronous work queue: at most `concurrency` tasks run at once
 * and at most `maxPending` wait. A task offered to a full queue is refused
 * (push returns false) so a burst of events cannot exhaust the process.
 */
export class BoundedQueue {
  private running = 0;
  private readonly pending: (() => Promise<void>)[] = [];
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(
    private concurrency: number,
    private maxPending: number,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  get size(): { running: number; pending: number } {
    return { running: this.running, pending: this.pending.length };
  }

  push(task: () => Promise<void>): boolean {
    if (this.closed) return false;
    if (this.running < this.concurrency) {
      this.start(task);
      return true;
    }
    if (this.pending.length >= this.maxPending) return false;
    this.pending.push(task);
    return true;
  }

  private start(task: () => Promise<void>): void {
    this.running++;
    void (async () => {
      try {
        await task();
      } catch (err) {
        this.onError(err);
      } finally {
        this.running--;
        const next = this.pending.shift();
        if (next) this.start(next);
        else if (this.running === 0) {
          const w = this.idleWaiters;
          this.idleWaiters = [];
          for (const r of w) r();
        }
      }
    })();
  }

  /** Resolves when nothing runs or waits. */
  idle(): Promise<void> {
    if (this.running === 0 && this.pending.length === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /** Drops waiting tasks, refuses new ones and waits for running ones. */
  async close(): Promise<void> {
    this.closed = true;
    this.pending.length = 0;
    await this.idle();
  }
}
