import { inject, Lifecycle, scoped } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { FerryConfig, RateLimitBucketConfig, RateLimitConfig, RateLimitScope } from '../config/schema.js';
import { IpListService } from './ip-list.service.js';
import type { IpListProtocol } from './ip-list.input.js';

/**
 * A token bucket: holds up to `burst` tokens, refilled at `average` tokens per
 * `period` milliseconds; each request takes one. `take` answers 0 when a
 * token was taken, else the milliseconds until one is available.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly perMs: number;

  constructor(
    private readonly burst: number,
    average: number,
    period: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
    this.perMs = average / period;
  }

  private refill(now: number): void {
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + (now - this.last) * this.perMs);
      this.last = now;
    }
  }

  take(now: number): number {
    this.refill(now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - this.tokens) / this.perMs);
  }

  /** Whether the bucket is full again at `now` (a full bucket holds nothing worth remembering). */
  full(now: number): boolean {
    this.refill(now);
    return this.tokens >= this.burst;
  }
}

/** Why a request was refused: which limiter, and how long to wait. */
export interface RateLimitRefusal {
  scope: RateLimitScope;
  /** 'global': the limiter every host shares; 'host': the client's own limiter. */
  limiter: 'global' | 'host';
  /** Whole seconds until a new request may pass (at least 1): the Retry-After value. */
  retryAfterSeconds: number;
  /** The host's refusal should add score_limit_exceeded in the defender. */
  score: boolean;
}

const active = (b: RateLimitBucketConfig): boolean => b.average > 0;

/**
 * Rate limits (configuration section rate_limit, docs/rate-limits.md): per
 * scope (`api`, `token`, `shares`, `tus`) one global token bucket shared by
 * every client and one bucket per source host, each off while its `average`
 * is 0. A request takes a token from its scope's host bucket, then from the
 * global one; the first empty bucket refuses it. Hosts on IP list type 3 (the
 * rate limiter safe list) are never limited.
 *
 * Per-host buckets live in memory on each node, in a map kept in least
 * recently used order and bounded by `max_hosts` per scope (the least recently
 * seen host is forgotten first; a forgotten host starts again with a full
 * bucket, the most lenient outcome). Full buckets are swept every minute.
 *
 * `clock` (ms) is replaceable so that tests move time forward.
 */
@scoped(Lifecycle.ContainerScoped)
export class RateLimiterService {
  clock: () => number = Date.now;
  private readonly cfg: RateLimitConfig;
  private readonly global = new Map<RateLimitScope, TokenBucket>();
  private readonly hosts = new Map<RateLimitScope, Map<string, TokenBucket>>();
  private lastSweep = 0;

  constructor(
    @inject(TOKENS.Config) config: FerryConfig,
    @inject(IpListService) private readonly ipLists: IpListService,
  ) {
    this.cfg = config.rate_limit;
  }

  /** Whether any limiter of any scope is on. */
  get enabled(): boolean {
    return RATE_LIMIT_SCOPES.some((s) => active(this.cfg[s].global) || active(this.cfg[s].per_host));
  }

  /** Host buckets remembered for a scope (tests and metrics). */
  trackedHosts(scope: RateLimitScope): number {
    return this.hosts.get(scope)?.size ?? 0;
  }

  /**
   * Takes a token for a request of `ip` in `scope`: null when it may pass,
   * else why not. Safe-listed hosts (IP list 3) always pass and take nothing.
   */
  async check(scope: RateLimitScope, ip: string, protocol: IpListProtocol): Promise<RateLimitRefusal | null> {
    const c = this.cfg[scope];
    if (!active(c.global) && !active(c.per_host)) return null;
    if (await this.ipLists.isRateLimitExempt(ip, protocol)) return null;
    const now = this.clock();
    this.sweep(now);
    if (active(c.per_host)) {
      const wait = this.hostBucket(scope, ip, c.per_host, now).take(now);
      if (wait > 0) return { scope, limiter: 'host', retryAfterSeconds: seconds(wait), score: c.per_host.add_to_defender };
    }
    if (active(c.global)) {
      let b = this.global.get(scope);
      if (!b) {
        b = new TokenBucket(burstOf(c.global), c.global.average, c.global.period, now);
        this.global.set(scope, b);
      }
      const wait = b.take(now);
      if (wait > 0) return { scope, limiter: 'global', retryAfterSeconds: seconds(wait), score: false };
    }
    return null;
  }

  private hostBucket(scope: RateLimitScope, ip: string, c: RateLimitBucketConfig, now: number): TokenBucket {
    let map = this.hosts.get(scope);
    if (!map) {
      map = new Map();
      this.hosts.set(scope, map);
    }
    let b = map.get(ip);
    if (b) {
      // most recently used last
      map.delete(ip);
    } else {
      b = new TokenBucket(burstOf(c), c.average, c.period, now);
      while (map.size >= this.cfg.max_hosts) {
        const oldest = map.keys().next().value as string;
        map.delete(oldest);
      }
    }
    map.set(ip, b);
    return b;
  }

  /** Forgets full host buckets (hosts that stopped sending), at most once a minute. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000 && now >= this.lastSweep) return;
    this.lastSweep = now;
    for (const map of this.hosts.values()) {
      for (const [ip, b] of map) if (b.full(now)) map.delete(ip);
    }
  }
}

export const RATE_LIMIT_SCOPES: readonly RateLimitScope[] = ['api', 'token', 'shares', 'tus'];

/** A burst of 0 means the average: that many requests may come at once. */
const burstOf = (b: RateLimitBucketConfig): number => (b.burst > 0 ? b.burst : Math.max(1, Math.ceil(b.average)));

const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));
