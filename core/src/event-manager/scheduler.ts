import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { Logger } from '../logger.js';
import { Lease } from '../data/entities/index.js';
import { compileSchedule, scheduleMatches, type CompiledSchedule } from './cron.js';
import { EventManager } from './event-manager.js';
import type { LoadedRule } from './types.js';

/** Time source and timers of the scheduler; tests inject a {@link ManualClock}. */
export interface SchedulerClock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const systemClock: SchedulerClock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimer: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** A clock that moves only when told to; `advance` fires due timers and awaits what they start. */
export class ManualClock implements SchedulerClock {
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private seq = 0;
  private pending: Promise<unknown>[] = [];

  constructor(private t: number) {}

  now(): number {
    return this.t;
  }
  setTimer(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.push({ at: this.t + Math.max(0, ms), fn, id });
    return id;
  }
  clearTimer(h: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== h);
  }
  /** Registers work a timer started so advance() can await it. */
  track(p: Promise<unknown>): void {
    this.pending.push(p);
  }
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.t = next.at;
      next.fn();
      const p = this.pending;
      this.pending = [];
      await Promise.all(p);
    }
    this.t = end;
  }
}

const LEASE_PREFIX = 'event-schedule:';
const LEASE_TTL = 60 * 60 * 1000;

/**
 * Evaluates trigger-3 rules once a minute (UTC, minute precision). On a
 * cluster sharing one database, each (rule, minute) is claimed with an
 * atomic insert of a Lease row named `event-schedule:<rule id>:<minute>`;
 * only the node whose insert succeeds runs the rule. Rules with
 * conditions.options.concurrent_execution run on every node.
 */
@injectable()
export class EventScheduler {
  private clock: SchedulerClock = systemClock;
  private timer: unknown = null;
  private running = false;
  private nextTick = 0;
  private readonly compiled = new Map<string, CompiledSchedule[]>();
  private readonly log: Logger;

  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(EventManager) private readonly manager: EventManager,
    @inject(TOKENS.InstanceId) private readonly instanceId: string,
    @inject(TOKENS.Logger) logger: Logger,
  ) {
    this.log = logger.child({ component: 'eventscheduler' });
  }

  /** Replaces the clock (tests); restarts the timer when running. */
  setClock(clock: SchedulerClock): void {
    const wasRunning = this.running;
    this.stop();
    this.clock = clock;
    if (wasRunning) this.start();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const now = this.clock.now();
    this.nextTick = Math.floor(now / 60_000) * 60_000 + 60_000;
    this.arm();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (!this.running) return;
    this.timer = this.clock.setTimer(
      () => {
        const at = this.nextTick;
        // a late timer runs the minute it was set for, then skips to the current minute
        this.nextTick = Math.max(at + 60_000, Math.floor(this.clock.now() / 60_000) * 60_000 + 60_000);
        const p = this.tick(at)
          .catch((err) => this.log.error({ err }, 'scheduler tick failed'))
          .finally(() => this.arm());
        (this.clock as Partial<ManualClock>).track?.(p);
      },
      Math.max(0, this.nextTick - this.clock.now()),
    );
  }

  private schedulesOf(rule: LoadedRule): CompiledSchedule[] {
    const key = `${rule.id}:${JSON.stringify(rule.conditions.schedules)}`;
    let c = this.compiled.get(key);
    if (!c) {
      c = rule.conditions.schedules.flatMap((s) => {
        try {
          return [compileSchedule(s)];
        } catch (err) {
          this.log.error({ rule: rule.name, err }, 'invalid schedule skipped');
          return [];
        }
      });
      if (this.compiled.size > 1000) this.compiled.clear();
      this.compiled.set(key, c);
    }
    return c;
  }

  /**
   * Evaluates the minute containing `at` (Unix ms): queues every scheduled
   * rule due then and claimed by this node. Returns the names of the rules
   * this node runs.
   */
  async tick(at: number = this.clock.now()): Promise<string[]> {
    const minute = Math.floor(at / 60_000) * 60_000;
    const date = new Date(minute);
    this.manager.invalidate();
    const due = (await this.manager.rulesFor(3)).filter((r) => this.schedulesOf(r).some((s) => scheduleMatches(s, date)));
    const ran: string[] = [];
    for (const rule of due) {
      if (!rule.conditions.options.concurrent_execution && !(await this.claim(rule, minute))) {
        this.log.debug({ rule: rule.name, minute: date.toISOString() }, 'scheduled rule claimed by another node');
        continue;
      }
      this.log.info({ rule: rule.name, minute: date.toISOString() }, 'scheduled rule due');
      if (this.manager.runScheduled(rule, minute)) ran.push(rule.name);
    }
    await this.cleanup(minute).catch((err) => this.log.warn({ err }, 'lease cleanup failed'));
    return ran;
  }

  /** Atomically claims (rule, minute) for this node: true when this node inserted the lease row. */
  async claim(rule: LoadedRule, minute: number): Promise<boolean> {
    const em = this.orm.em.fork();
    try {
      await em.insert(Lease, { name: `${LEASE_PREFIX}${rule.id}:${minute}`, owner: this.instanceId, expires_at: minute + LEASE_TTL });
      return true;
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) return false;
      throw err;
    }
  }

  private lastCleanup = 0;
  private async cleanup(now: number): Promise<void> {
    if (now - this.lastCleanup < 10 * 60_000) return;
    this.lastCleanup = now;
    await this.orm.em.fork().nativeDelete(Lease, { name: { $like: `${LEASE_PREFIX}%` }, expires_at: { $lt: now } });
  }
}
