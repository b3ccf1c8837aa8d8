import crypto from 'node:crypto';
import { InvalidError, NotFoundError, UnavailableError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { SecretsService } from '../secrets/secret.js';
import type { EventBus } from '../events/event-bus.js';
import type { BeforePublishContext, FsHookContext, FsHooks } from '../events/fs-hooks.js';
import type { ActionResult } from '../events/action.contract.js';
import type { CertificateEvent, FsEvent, IdpLoginEvent, IpBlockedEvent, ProviderEvent } from '../events/event-types.js';
import { nowNanos } from '../events/event-types.js';
import { EventRuleAction, EventRuleRecord } from '../data/entities/index.js';
import type { Actor } from '../events/provider-events.service.js';
import { BoundedQueue } from './queue.js';
import { buildParams } from './context.js';
import { buildActionContext, prepareActionOptions } from './prepare.js';
import { certificateEventMatches, fsEventMatches, idpLoginMatches, providerEventMatches } from './conditions.js';
import { PRE_FS_EVENTS } from './compat.js';
import { normalizeConditions, normalizeRelation, type EventConditions, type LoadedRule, type LoadedRuleAction, type TriggerEvent } from './types.js';

/** Config section `event_manager`. */
export interface EventManagerConfig {
  /** Rule executions running at once (async work). */
  concurrency: number;
  /** Rule executions waiting for a slot; more are dropped with an error log. */
  max_pending: number;
  /** Seconds a node keeps the enabled rules cached (local changes invalidate at once). */
  rules_cache_ttl: number;
  /** Bus events kept in memory for event reports (0 disables the recorder). */
  recorder_size: number;
  /** Estimated bytes of events the recorder keeps per kind (0 disables it). */
  recorder_max_bytes: number;
  /** Evaluate scheduled rules on this node. */
  scheduler: boolean;
}

export const DEFAULT_EVENT_MANAGER_CONFIG: EventManagerConfig = {
  concurrency: 4,
  max_pending: 1000,
  rules_cache_ttl: 10,
  recorder_size: 10000,
  recorder_max_bytes: 16 * 1024 * 1024,
  scheduler: true,
};

/** What one rule execution carries from action to action. */
interface RunState {
  uid: string;
  outputs: Record<string, unknown>;
  errors: string[];
  failed: string[];
}

/** Outcome of one action, also handed to listeners (tests, audit). */
export interface ActionExecution {
  rule: string;
  action: string;
  type: number;
  trigger: number;
  ok: boolean;
  error?: string;
  elapsed: number;
  phase: 'before-publish' | 'sync' | 'async' | 'failure';
}

/**
 * Thrown by the fs hooks when a rule aborts the operation. `message` names
 * the rule, the action and its error (logs); `clientMessage` only the rule
 * and the action (what the client is told: an action's error may carry
 * details of the systems it talks to).
 */
export class EventActionError extends Error {
  readonly clientMessage: string;
  constructor(
    message: string,
    readonly rule: string,
    readonly action: string,
    clientMessage?: string,
  ) {
    super(message);
    this.name = 'EventActionError';
    this.clientMessage = clientMessage ?? `rejected by event rule "${rule}": action "${action}" failed`;
  }
}

const SYSTEM_INITIATOR = { admin: { username: '', role: '' } };

/**
 * Runs event rules: listens to the bus (filesystem, provider, IP blocked,
 * certificate and IDP login events), takes part in file operations through
 * the FsHooks seams (execute_sync and execute_before_file_publish actions),
 * runs on-demand and scheduled rules. Asynchronous work goes through a
 * bounded queue. One instance per app.
 *
 * Rules with synchronous or before-publish actions on a filesystem event
 * run from the hooks: before-publish actions while the upload is pending,
 * sync actions inline once the operation is done, the rest of the rule
 * queued right after the sync hook (so only for an operation that went
 * through). The bus event of the same operation then runs only the rules
 * without such actions, so nothing runs twice (and a rejected upload's
 * failure event does not run the rest of the rule that rejected it).
 * Trigger 7 works the same way through {@link runIdpLoginSync}.
 *
 * Longer than 500 lines: the entry points of every trigger (bus listeners,
 * hooks, on-demand, schedules) and the run of one rule stay together, as the
 * split between hooked and queued actions above spans them; matching
 * (conditions.ts), preparation (prepare.ts), contexts (context.ts), the queue
 * and the scheduler are apart already.
 */
@injectable()
export class EventManager {
  private readonly cfg: EventManagerConfig;
  private readonly log: Logger;
  private readonly queue: BoundedQueue;
  private cache: { at: number; rules: LoadedRule[] } | null = null;
  private loading: Promise<LoadedRule[]> | null = null;
  private unsubscribe: (() => void)[] = [];
  private hooksInstalled = false;
  private started = false;
  private readonly abort = new AbortController();
  private readonly listeners = new Set<(e: ActionExecution) => void>();

  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) config: FerryConfig,
    @inject(TOKENS.Logger) logger: Logger,
    @inject(TOKENS.Plugins) private readonly registry: PluginRegistry,
    @inject(TOKENS.Secrets) private readonly secrets: SecretsService,
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.FsHooks) private readonly hooks: FsHooks,
  ) {
    this.cfg = { ...DEFAULT_EVENT_MANAGER_CONFIG, ...((config as unknown as { event_manager?: Partial<EventManagerConfig> }).event_manager ?? {}) };
    this.log = logger.child({ component: 'eventmanager' });
    this.queue = new BoundedQueue(Math.max(1, this.cfg.concurrency), Math.max(0, this.cfg.max_pending), (err) =>
      this.log.error({ err }, 'event rule execution failed'),
    );
  }

  get config(): EventManagerConfig {
    return this.cfg;
  }

  /** Subscribes to the bus and installs the fs hooks (idempotent). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.unsubscribe.push(
      this.bus.on('fs', (e) => this.track(this.onFs(e))),
      this.bus.on('provider', (e) => this.track(this.onProvider(e))),
      this.bus.on('ip-blocked', (e) => this.track(this.onIpBlocked(e))),
      this.bus.on('certificate', (e) => this.track(this.onCertificate(e))),
      this.bus.on('idp-login', (e) => this.track(this.onIdpLogin(e))),
    );
    if (!this.hooksInstalled) {
      this.hooksInstalled = true;
      this.hooks.addSync(
        (ctx) => this.runFsSync(ctx),
        async (action) => (await this.rulesFor(1)).some((r) => EventManager.hooked(r) && r.conditions.fs_events.includes(action)),
      );
      this.hooks.addBeforePublish((ctx) => this.runBeforePublish(ctx));
    }
  }

  async stop(): Promise<void> {
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    this.started = false;
    await Promise.allSettled([...this.inflight]);
    this.abort.abort(new Error('server stopping'));
    await this.queue.close();
  }

  private readonly inflight = new Set<Promise<void>>();

  /** Keeps a bus handler's promise until it settles, so idle() also waits for rule matching in progress. */
  private track(p: Promise<void>): Promise<void> {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p)).catch(() => {});
    return p;
  }

  /** Resolves when no event is being matched and no rule execution runs or waits. */
  async idle(): Promise<void> {
    while (this.inflight.size || this.queue.size.running || this.queue.size.pending) {
      await Promise.allSettled([...this.inflight]);
      await this.queue.idle();
    }
  }

  /** Observes every action execution (returns an unsubscribe function). */
  onExecution(fn: (e: ActionExecution) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Drops the cached rules (called on local rule/action changes). */
  invalidate(): void {
    this.cache = null;
  }

  /** Enabled rules with their actions in execution order. */
  async rules(): Promise<LoadedRule[]> {
    const ttl = this.cfg.rules_cache_ttl * 1000;
    if (this.cache && Date.now() - this.cache.at < ttl) return this.cache.rules;
    if (this.loading) return this.loading;
    this.loading = (async () => {
      try {
        const em = this.orm.em.fork();
        const rules = await em.find(EventRuleRecord, { status: 1 }, { orderBy: { name: 'ASC' } });
        const links = rules.length
          ? await em.find(EventRuleAction, { rule: { $in: rules.map((r) => r.id) } }, { populate: ['action'], orderBy: { order: 'ASC', id: 'ASC' } })
          : [];
        const out: LoadedRule[] = rules.map((r) => ({
          id: r.id,
          name: r.name,
          trigger: r.trigger,
          conditions: normalizeConditions(r.conditions as Partial<EventConditions>),
          actions: links
            .filter((l) => (l.rule as EventRuleRecord).id === r.id)
            .map((l) => ({
              name: l.action.name,
              type: l.action.type,
              options: l.action.options ?? {},
              order: l.order,
              relation: normalizeRelation(l.relation_options),
            })),
        }));
        this.cache = { at: Date.now(), rules: out };
        return out;
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }

  async rulesFor(trigger: number): Promise<LoadedRule[]> {
    return (await this.rules()).filter((r) => r.trigger === trigger);
  }

  // ---- triggers -------------------------------------------------------

  private fsTriggerEvent(e: FsEvent, file?: TriggerEvent['file']): TriggerEvent {
    return {
      trigger: 1,
      timestamp: e.timestamp,
      fs: e,
      username: e.username,
      initiator: { user: { username: e.username, role: e.role ?? '' } },
      file,
    };
  }

  private static hasSync(r: LoadedRule): boolean {
    return r.actions.some((a) => a.relation.execute_sync);
  }

  /** A filesystem rule run from the hooks: it has sync or before-publish actions. */
  private static hooked(r: LoadedRule): boolean {
    return r.actions.some((a) => a.relation.execute_sync || a.relation.execute_before_file_publish);
  }

  private async onFs(e: FsEvent): Promise<void> {
    const rules = (await this.rulesFor(1)).filter((r) => !EventManager.hooked(r) && fsEventMatches(r.conditions, e));
    const ev = this.fsTriggerEvent(e);
    for (const r of rules) this.enqueue(r, ev, 'all');
  }

  /**
   * FsHooks sync hook: sync actions of matching trigger-1 rules (and the
   * rest of those and of before-publish rules queued); throws when one with
   * stop_on_failure fails, or for a pre-* event when any fails.
   */
  async runFsSync(ctx: FsHookContext): Promise<void> {
    const rules = (await this.rulesFor(1)).filter((r) => EventManager.hooked(r) && fsEventMatches(r.conditions, ctx.event));
    if (!rules.length) return;
    const ev = this.fsTriggerEvent(ctx.event, { fs: ctx.fs, fsPath: ctx.fsPath });
    const gate = PRE_FS_EVENTS.includes(ctx.event.action);
    for (const r of rules) await this.runSyncPart(r, ev, gate);
  }

  /** FsHooks before-publish hook: before-publish actions of matching rules; any failure rejects the upload. */
  async runBeforePublish(ctx: BeforePublishContext): Promise<void> {
    const rules = (await this.rulesFor(1)).filter(
      (r) => r.actions.some((a) => a.relation.execute_before_file_publish) && fsEventMatches(r.conditions, ctx.event),
    );
    if (!rules.length) return;
    const ev = this.fsTriggerEvent(ctx.event, { fs: ctx.fs, fsPath: ctx.fsPath, pending: ctx.pending });
    for (const rule of rules) {
      const state = this.newState();
      for (const a of rule.actions) {
        if (!a.relation.execute_before_file_publish || a.relation.is_failure_action) continue;
        const err = await this.runAction(rule, a, ev, state, 'before-publish');
        if (err) {
          this.enqueueFailure(rule, ev, state);
          throw new EventActionError(`upload rejected by event rule "${rule.name}", action "${a.name}": ${err}`, rule.name, a.name);
        }
      }
    }
  }

  private async onProvider(e: ProviderEvent): Promise<void> {
    if (e.object_type === 'event_rule' || e.object_type === 'event_action') this.invalidate();
    const rules = (await this.rulesFor(2)).filter((r) => providerEventMatches(r.conditions, e));
    if (!rules.length) return;
    const isUserActor = e.object_type === 'share';
    const ev: TriggerEvent = {
      trigger: 2,
      timestamp: e.timestamp,
      provider: e,
      username: e.object_type === 'user' ? e.object_name : e.object_type === 'share' ? e.username : undefined,
      initiator: isUserActor ? { user: { username: e.username, role: e.role ?? '' } } : { admin: { username: e.username, role: e.role ?? '' } },
    };
    for (const r of rules) this.enqueue(r, ev, 'all');
  }

  private async onIpBlocked(e: IpBlockedEvent): Promise<void> {
    const ev: TriggerEvent = { trigger: 4, timestamp: e.timestamp, ipBlocked: e, initiator: SYSTEM_INITIATOR };
    for (const r of await this.rulesFor(4)) this.enqueue(r, ev, 'all');
  }

  private async onCertificate(e: CertificateEvent): Promise<void> {
    const ev: TriggerEvent = { trigger: 5, timestamp: e.timestamp, certificate: e, initiator: SYSTEM_INITIATOR };
    for (const r of await this.rulesFor(5)) if (certificateEventMatches(r.conditions, e)) this.enqueue(r, ev, 'all');
  }

  private idpTriggerEvent(e: IdpLoginEvent): TriggerEvent {
    const who = { username: e.username, role: e.role ?? '' };
    return {
      trigger: 7,
      timestamp: e.timestamp,
      idp: e,
      username: e.kind === 'user' ? e.username : undefined,
      initiator: e.kind === 'user' ? { user: { ...who, email: e.email } } : { admin: who },
    };
  }

  private async onIdpLogin(e: IdpLoginEvent): Promise<void> {
    const ev = this.idpTriggerEvent(e);
    for (const r of await this.rulesFor(7)) if (!EventManager.hasSync(r) && idpLoginMatches(r.conditions, e)) this.enqueue(r, ev, 'all');
  }

  /**
   * For the identity-provider login flow: runs the sync actions of matching
   * trigger-7 rules before the login is decided (throws when one with
   * stop_on_failure fails) and queues the rest of those rules.
   */
  async runIdpLoginSync(e: IdpLoginEvent): Promise<void> {
    const ev = this.idpTriggerEvent(e);
    for (const r of await this.rulesFor(7)) if (EventManager.hasSync(r) && idpLoginMatches(r.conditions, e)) await this.runSyncPart(r, ev);
  }

  /** POST /eventrules/run/{name}: queues an on-demand rule (404 unknown, 400 not trigger 6 or disabled). */
  async runOnDemand(name: string, actor: Actor): Promise<void> {
    const rec = await this.orm.em.fork().findOne(EventRuleRecord, { name });
    if (!rec) throw new NotFoundError(`event rule "${name}" not found`);
    if (rec.trigger !== 6) throw new InvalidError(`event rule "${name}" is not an on-demand rule (trigger ${rec.trigger})`);
    if (rec.status !== 1) throw new InvalidError(`event rule "${name}" is disabled`);
    this.invalidate();
    const rule = (await this.rulesFor(6)).find((r) => r.name === name);
    if (!rule) throw new NotFoundError(`event rule "${name}" not found`);
    const ev: TriggerEvent = { trigger: 6, timestamp: nowNanos(), initiator: { admin: { username: actor.username, role: actor.role } } };
    if (!this.enqueue(rule, ev, 'all')) throw new UnavailableError('the event queue is full, retry later');
  }

  /** Runs a scheduled rule for the minute `at` (the scheduler decides who runs it). */
  runScheduled(rule: LoadedRule, at: number): boolean {
    const ev: TriggerEvent = { trigger: 3, timestamp: at * 1_000_000, scheduledAt: at, initiator: SYSTEM_INITIATOR };
    return this.enqueue(rule, ev, 'all');
  }

  // ---- execution ------------------------------------------------------

  private newState(): RunState {
    return { uid: crypto.randomUUID(), outputs: {}, errors: [], failed: [] };
  }

  private enqueue(rule: LoadedRule, ev: TriggerEvent, mode: 'all' | 'rest', state?: RunState): boolean {
    const ok = this.queue.push(() => this.runAsync(rule, ev, mode, state ?? this.newState()));
    if (!ok) {
      this.log.error({ rule: rule.name, trigger: rule.trigger, ...this.queue.size }, 'event queue full: rule execution dropped');
    }
    return ok;
  }

  private enqueueFailure(rule: LoadedRule, ev: TriggerEvent, state: RunState): void {
    if (!rule.actions.some((a) => a.relation.is_failure_action)) return;
    const ok = this.queue.push(() => this.runFailureActions(rule, ev, state));
    if (!ok) this.log.error({ rule: rule.name }, 'event queue full: failure actions dropped');
  }

  /**
   * Sync actions of one rule inline; the rest of the rule queued. A failing
   * action with stop_on_failure aborts the operation at once (only the
   * failure actions still run). For a `gate` event (pre-upload,
   * pre-download, pre-delete) any failing sync action denies the operation,
   * after the other sync actions ran and the rest of the rule was queued.
   */
  private async runSyncPart(rule: LoadedRule, ev: TriggerEvent, gate = false): Promise<void> {
    const state = this.newState();
    let denied: { action: string; error: string } | undefined;
    for (const a of rule.actions) {
      if (!a.relation.execute_sync || a.relation.is_failure_action) continue;
      const err = await this.runAction(rule, a, ev, state, 'sync');
      if (err && a.relation.stop_on_failure) {
        this.enqueueFailure(rule, ev, state);
        throw new EventActionError(`operation aborted by event rule "${rule.name}", action "${a.name}": ${err}`, rule.name, a.name);
      }
      if (err && gate) denied ??= { action: a.name, error: err };
    }
    const rest = rule.actions.some((a) => !a.relation.execute_sync && !a.relation.execute_before_file_publish);
    if (rest || state.failed.length) this.enqueue(rule, ev, 'rest', state);
    if (denied) {
      throw new EventActionError(`operation denied by event rule "${rule.name}", action "${denied.action}": ${denied.error}`, rule.name, denied.action);
    }
  }

  /**
   * The asynchronous part of a rule: its ordinary actions in order ('all'
   * also runs sync-flagged ones, 'rest' skips them), then the failure actions
   * when any action failed. stop_on_failure stops the ordinary actions.
   */
  private async runAsync(rule: LoadedRule, ev: TriggerEvent, mode: 'all' | 'rest', state: RunState): Promise<void> {
    let stopped = false;
    for (const a of rule.actions) {
      if (a.relation.is_failure_action || a.relation.execute_before_file_publish) continue;
      if (mode === 'rest' && a.relation.execute_sync) continue;
      if (this.abort.signal.aborted) return;
      const err = await this.runAction(rule, a, ev, state, 'async');
      if (err && a.relation.stop_on_failure) {
        stopped = true;
        break;
      }
    }
    if (state.failed.length) await this.runFailureActions(rule, ev, state);
    this.log.info(
      { rule: rule.name, trigger: rule.trigger, uid: state.uid, failed: state.failed, stopped },
      state.failed.length ? 'event rule executed with failures' : 'event rule executed',
    );
  }

  private async runFailureActions(rule: LoadedRule, ev: TriggerEvent, state: RunState): Promise<void> {
    for (const a of rule.actions) {
      if (!a.relation.is_failure_action) continue;
      if (this.abort.signal.aborted) return;
      await this.runAction(rule, a, ev, state, 'failure');
    }
  }

  /** Adds an action's outputs to the execution's context (arrays of the same name are concatenated). */
  private static mergeOutputs(state: RunState, outputs: unknown): void {
    if (!outputs || typeof outputs !== 'object' || Array.isArray(outputs)) return;
    for (const [k, v] of Object.entries(outputs as Record<string, unknown>)) {
      const prev = state.outputs[k];
      state.outputs[k] = Array.isArray(prev) && Array.isArray(v) ? [...prev, ...v] : v;
    }
  }

  /**
   * Runs one action; returns the error message on failure (already logged),
   * undefined on success. Outputs are kept either way: an action that throws
   * an error carrying `outputs` (e.g. the user expiration check) feeds the
   * failure actions.
   */
  private async runAction(
    rule: LoadedRule,
    a: LoadedRuleAction,
    ev: TriggerEvent,
    state: RunState,
    phase: ActionExecution['phase'],
  ): Promise<string | undefined> {
    const started = Date.now();
    let error: string | undefined;
    try {
      const result = await this.executeAction(rule, a, ev, state);
      EventManager.mergeOutputs(state, result?.outputs);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      // an action that fails may still report what it did (retention checks, expired users, shares)
      EventManager.mergeOutputs(state, (err as { outputs?: unknown } | null)?.outputs);
      state.failed.push(a.name);
      state.errors.push(`${a.name}: ${error}`);
    }
    const exec: ActionExecution = {
      rule: rule.name,
      action: a.name,
      type: a.type,
      trigger: rule.trigger,
      ok: !error,
      error,
      elapsed: Date.now() - started,
      phase,
    };
    if (error) this.log.error({ ...exec, uid: state.uid }, 'event action failed');
    else this.log.info({ ...exec, uid: state.uid }, 'event action executed');
    for (const l of this.listeners) {
      try {
        l(exec);
      } catch {
        /* observers never break execution */
      }
    }
    return error;
  }

  private async executeAction(rule: LoadedRule, a: LoadedRuleAction, ev: TriggerEvent, state: RunState): Promise<ActionResult | void> {
    const def = this.registry.actionType(a.type);
    if (!def) throw new Error(`event action type ${a.type} is not available (no plugin registers it)`);
    const params = buildParams(ev, rule, state);
    const opts = await prepareActionOptions(def, a.options, params, (v) => this.secrets.decrypt(v));
    const runner = await def.create(opts);
    const ctx = buildActionContext({ rule, actionName: a.name, ev, params, uid: state.uid, failed: state.failed, signal: this.abort.signal, logger: this.log });
    return runner.execute(ctx);
  }
}
