import { NotFoundError } from '../errors.js';
import { inject, Lifecycle, scoped } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { DefenderConfig, FerryConfig } from '../config/schema.js';
import type { EventBus } from '../events/event-bus.js';
import type { EventProtocol } from '../events/event-types.js';
import type { Logger } from '../logger.js';
import { parseIpNet } from '../util/ip-net.js';
import { IpListService } from './ip-list.service.js';
import { loginProtocolOf, type LoginProtocol } from '../sdk/protocols.js';

/** What a host did: the config key `score_<kind>` gives its score. */
export type DefenderEventKind = 'invalid' | 'valid' | 'limit_exceeded' | 'no_auth';

/** DefenderEntry as the API shows it: `ban_time` only while banned. */
export interface DefenderEntryView {
  id: string;
  ip: string;
  score: number;
  ban_time?: string;
}

const MINUTE = 60_000;
/** Expired events and forgotten hosts are deleted at most this often per node. */
const EXPIRE_EVERY = MINUTE;

/** The address as the defender stores it (IPv4-mapped IPv6 as IPv4, IPv6 compressed), or null when `ip` is not one address. */
export function defenderHostIp(ip: string): string | null {
  if (ip.includes('/')) return null;
  const n = parseIpNet(ip);
  return n ? n.canonical.slice(0, n.canonical.lastIndexOf('/')) : null;
}

/** The id of a host in `/defender/hosts/{id}`: the hex encoding of its address. */
export const defenderHostId = (ip: string): string => Buffer.from(ip, 'utf8').toString('hex');

/** The address of a host id, or null when the id is not the hex encoding of an address. */
export function defenderIpOfId(id: string): string | null {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(id) || id.length > 128) return null;
  return defenderHostIp(Buffer.from(id, 'hex').toString('utf8'));
}

const isoSeconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface HostRow {
  ip: string;
  ban_time: number | string;
  score: number | string | null;
}

/**
 * The defender: hosts that keep failing to authenticate are banned for a
 * while (403 on every request, see http/defender-hooks.ts) and rules with
 * trigger 4 run once per ban.
 *
 * Each failure adds an event with the score of its kind; a host whose
 * events within `observation_time` add up to `threshold` is banned for
 * `ban_time`, and each request it makes while banned extends the ban by
 * `ban_time_increment` percent. Hosts and events live in the database
 * (tables defender_hosts, defender_events), so a ban holds on every node
 * sharing it; the ban itself is one conditional update, so exactly one
 * request (on one node) publishes the `ip-blocked` event. Hosts on the
 * defender IP list with mode allow are never scored nor banned.
 *
 * `clock` (Unix ms) is replaceable so that tests move time forward.
 */
@scoped(Lifecycle.ContainerScoped)
export class DefenderService {
  clock: () => number = Date.now;
  private readonly cfg: DefenderConfig;
  private readonly log: Logger;
  private lastExpire = 0;
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) config: FerryConfig,
    @inject(IpListService) private readonly ipLists: IpListService,
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.InstanceId) private readonly instanceId: string,
    @inject(TOKENS.Logger) logger: Logger,
  ) {
    this.cfg = config.defender;
    this.log = logger.child({ component: 'defender' });
  }

  get enabled(): boolean {
    return this.cfg.enabled;
  }

  get config(): DefenderConfig {
    return this.cfg;
  }

  private sql<T>(query: string, params: unknown[] = [], method: 'all' | 'run' = 'all'): Promise<T> {
    return this.orm.em.getConnection().execute<T & object>(query, params, method) as Promise<T>;
  }

  /** 403 message when `ip` is banned now (the request extends the ban), else null. */
  async banRefusal(ip: string, protocol: EventProtocol): Promise<string | null> {
    return (await this.isBanned(ip, protocol)) ? `access denied: ${ip} is banned by the defender` : null;
  }

  /** Whether the host is banned now; a banned host's attempt extends its ban by ban_time_increment percent. */
  async isBanned(rawIp: string, protocol: EventProtocol): Promise<boolean> {
    if (!this.cfg.enabled) return false;
    const ip = defenderHostIp(rawIp);
    if (!ip) return false;
    const now = this.clock();
    const rows = await this.sql<{ ban_time: number | string }[]>('select ban_time from defender_hosts where ip = ?', [ip]);
    if (!rows.length || Number(rows[0]!.ban_time) <= now) return false;
    if (await this.ipLists.isSafe(ip, ipListProtocol(protocol))) return false;
    const increment = this.banIncrement();
    if (increment > 0) {
      await this.sql('update defender_hosts set ban_time = ban_time + ? where ip = ? and ban_time > ?', [increment, ip, now], 'run');
    }
    return true;
  }

  /**
   * Scores an event of the host; bans it when its scores within the
   * observation time reach the threshold. Returns true when this call banned it.
   * Disabled defender, zero score, safe-listed or already banned host: nothing happens.
   */
  async addEvent(rawIp: string, kind: DefenderEventKind, protocol: EventProtocol): Promise<boolean> {
    if (!this.cfg.enabled) return false;
    const score = this.cfg[`score_${kind}`];
    const ip = defenderHostIp(rawIp);
    if (!ip || score <= 0) return false;
    if (await this.ipLists.isSafe(ip, ipListProtocol(protocol))) return false;
    const now = this.clock();
    const host = await this.sql<{ ban_time: number | string }[]>('select ban_time from defender_hosts where ip = ?', [ip]);
    if (host.length && Number(host[0]!.ban_time) > now) return false;
    await this.sql(
      'insert into defender_hosts (ip, ban_time, updated_at) values (?, 0, ?) on conflict (ip) do update set updated_at = excluded.updated_at',
      [ip, now],
      'run',
    );
    await this.sql('insert into defender_events (ip, date_time, score) values (?, ?, ?)', [ip, now, score], 'run');
    const [sum] = await this.sql<{ total: number | string | null }[]>(
      'select coalesce(sum(score), 0) as total from defender_events where ip = ? and date_time > ?',
      [ip, now - this.cfg.observation_time * MINUTE],
    );
    let banned = false;
    if (Number(sum?.total ?? 0) >= this.cfg.threshold) {
      const until = now + this.cfg.ban_time * MINUTE;
      // one winner among concurrent requests and nodes: only the update that finds the host unbanned bans it
      const res = await this.sql<{ affectedRows?: number }>(
        'update defender_hosts set ban_time = ?, updated_at = ? where ip = ? and ban_time <= ?',
        [until, now, ip, now],
        'run',
      );
      if ((res.affectedRows ?? 0) > 0) {
        banned = true;
        await this.sql('delete from defender_events where ip = ?', [ip], 'run');
        this.log.warn({ ip, protocol, until: isoSeconds(until) }, 'host banned by the defender');
        this.bus.publish('ip-blocked', { timestamp: now * 1_000_000, ip, protocol, instance_id: this.instanceId });
      }
    }
    await this.cleanup(now);
    return banned;
  }

  /** addEvent without waiting (auth hooks that cannot await); failures are logged. See idle(). */
  report(ip: string, kind: DefenderEventKind, protocol: EventProtocol): void {
    if (!this.cfg.enabled) return;
    const p = this.addEvent(ip, kind, protocol)
      .catch((err) => this.log.error({ err, ip }, 'defender: scoring failed'))
      .finally(() => this.inflight.delete(p));
    this.inflight.add(p);
  }

  /** Resolves when every report() made so far is stored. */
  async idle(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  /**
   * Hosts banned now or with a score in the observation window, in byte order of their addresses.
   * Empty while the defender is disabled (clients of the API expect a list there; the single-host calls say 404).
   */
  async list(): Promise<DefenderEntryView[]> {
    if (!this.cfg.enabled) return [];
    return (await this.hosts()).map(renderHost);
  }

  /** One host (`ip` as defenderHostIp returns it); 404 when it is neither banned nor scored. */
  async get(ip: string): Promise<DefenderEntryView> {
    this.assertEnabled();
    const [host] = await this.hosts(ip);
    if (!host) throw new NotFoundError(`host ${ip} is neither banned nor scored by the defender`);
    return renderHost(host);
  }

  /** Unbans the host and clears its score; 404 when it is neither banned nor scored. */
  async delete(ip: string): Promise<void> {
    this.assertEnabled();
    const [host] = await this.hosts(ip);
    if (!host) throw new NotFoundError(`host ${ip} is neither banned nor scored by the defender`);
    await this.forget([ip]);
    this.log.info({ ip }, 'host removed from the defender');
  }

  private assertEnabled(): void {
    if (!this.cfg.enabled) throw new NotFoundError('the defender is not enabled (configuration key defender.enabled)');
  }

  private banIncrement(): number {
    if (this.cfg.ban_time_increment <= 0) return 0;
    return Math.max(MINUTE, Math.floor((this.cfg.ban_time * MINUTE * this.cfg.ban_time_increment) / 100));
  }

  private async hosts(ip?: string): Promise<{ ip: string; ban_time: number; score: number }[]> {
    const now = this.clock();
    const rows = await this.sql<HostRow[]>(
      'select h.ip as ip, h.ban_time as ban_time, coalesce(sum(e.score), 0) as score from defender_hosts h ' +
        'left join defender_events e on e.ip = h.ip and e.date_time > ? ' +
        (ip ? 'where h.ip = ? ' : '') +
        'group by h.ip, h.ban_time',
      ip ? [now - this.cfg.observation_time * MINUTE, ip] : [now - this.cfg.observation_time * MINUTE],
    );
    return rows
      .map((r) => ({ ip: r.ip, ban_time: Number(r.ban_time) > now ? Number(r.ban_time) : 0, score: Number(r.score ?? 0) }))
      .filter((h) => h.ban_time > 0 || h.score > 0)
      .sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
  }

  private async forget(ips: string[]): Promise<void> {
    if (!ips.length) return;
    const marks = ips.map(() => '?').join(', ');
    await this.orm.em.fork().transactional(async (em) => {
      await em.getConnection().execute(`delete from defender_events where ip in (${marks})`, ips, 'run', em.getTransactionContext());
      await em.getConnection().execute(`delete from defender_hosts where ip in (${marks})`, ips, 'run', em.getTransactionContext());
    });
  }

  /** Deletes expired events and hosts with nothing left to remember; beyond entries_hard_limit forgets the oldest hosts down to entries_soft_limit. */
  private async cleanup(now: number): Promise<void> {
    const since = now - this.cfg.observation_time * MINUTE;
    if (now - this.lastExpire >= EXPIRE_EVERY || now < this.lastExpire) {
      this.lastExpire = now;
      await this.sql('delete from defender_events where date_time <= ?', [since], 'run');
      await this.sql('delete from defender_hosts where ban_time <= ? and updated_at <= ?', [now, since], 'run');
    }
    const [count] = await this.sql<{ n: number | string }[]>('select count(*) as n from defender_hosts');
    const n = Number(count?.n ?? 0);
    if (n <= this.cfg.entries_hard_limit) return;
    // scored hosts before banned ones, the least recently active first
    const victims = await this.sql<{ ip: string }[]>(
      'select ip from defender_hosts order by case when ban_time > ? then 1 else 0 end, updated_at, ip limit ?',
      [now, n - this.cfg.entries_soft_limit],
    );
    await this.forget(victims.map((v) => v.ip));
  }
}

function renderHost(h: { ip: string; ban_time: number; score: number }): DefenderEntryView {
  const view: DefenderEntryView = { id: defenderHostId(h.ip), ip: h.ip, score: h.score };
  if (h.ban_time > 0) view.ban_time = isoSeconds(h.ban_time);
  return view;
}

/** IP list protocol of an event protocol (its login protocol; the server's own work is checked against entries of every protocol). */
function ipListProtocol(p: EventProtocol): LoginProtocol | undefined {
  return loginProtocolOf(p) ?? undefined;
}
