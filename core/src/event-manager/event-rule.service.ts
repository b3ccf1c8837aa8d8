import { InvalidError, NotFoundError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import { EventActionRecord, EventRuleAction, EventRuleRecord } from '../data/entities/index.js';
import type { ListQuery } from '../util/common.input.js';
import type { RuleInput } from './event.input.js';
import type { PluginRegistry } from '../plugins/registry.js';
import { compileSchedule, CronError } from './cron.js';
import { isValidWildcard } from './patterns.js';
import { normalizeConditions, normalizeRelation, type EventConditions, type RelationOptions } from './types.js';
import { checkActionForRule, PRE_FS_EVENTS, SYNC_FS_EVENTS } from './compat.js';
import { EventActionService } from './event-action.service.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';

type Obj = Record<string, unknown>;

/** A rule checked against the API's rules, ready to be written. */
export interface PreparedRule {
  input: RuleInput;
  conditions: EventConditions;
  links: { name: string; order: number; relation_options: RelationOptions }[];
}

/** The type of an event action by name (undefined: no such action). */
export type ActionTypeLookup = (name: string) => Promise<number | undefined>;

/** Action types as stored in the database. */
export const dbActionTypes =
  (em: EntityManager): ActionTypeLookup =>
  async (name) =>
    (await em.findOne(EventActionRecord, { name }, { fields: ['id', 'type'] }))?.type;

/** Event rules: CRUD and validation of the trigger, conditions and linked actions. */
@injectable()
export class EventRuleService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(TOKENS.Plugins) private readonly registry: PluginRegistry,
    @inject(EventActionService) private readonly actions: EventActionService,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
  ) {}

  em(): EntityManager {
    return this.orm.em.fork();
  }

  async render(r: EventRuleRecord, confidential = false, em: EntityManager = this.em()): Promise<Obj> {
    const links = await em.find(EventRuleAction, { rule: r.id }, { populate: ['action'], orderBy: { order: 'ASC', id: 'ASC' } });
    const actions: Obj[] = [];
    for (const l of links) {
      const base = await this.actions.render(l.action as EventActionRecord, confidential, em);
      actions.push({ ...base, order: l.order, relation_options: normalizeRelation(l.relation_options) });
    }
    return {
      id: r.id,
      name: r.name,
      status: r.status,
      description: r.description,
      created_at: r.created_at,
      updated_at: r.updated_at,
      trigger: r.trigger,
      conditions: normalizeConditions(r.conditions as Partial<EventConditions>),
      actions,
    };
  }

  async list(q: ListQuery): Promise<EventRuleRecord[]> {
    return this.em().find(EventRuleRecord, {}, { orderBy: { name: q.order }, offset: q.offset, limit: q.limit });
  }

  async get(name: string, em: EntityManager = this.em()): Promise<EventRuleRecord> {
    const r = await em.findOne(EventRuleRecord, { name });
    if (!r) throw new NotFoundError(`event rule "${name}" not found`);
    return r;
  }

  /** Conditions of the trigger only (the others cleared), validated. */
  private validateConditions(input: RuleInput): EventConditions {
    const c = normalizeConditions(input.conditions);
    const t = input.trigger;
    const out: EventConditions = {
      fs_events: t === 1 ? c.fs_events : [],
      provider_events: t === 2 ? c.provider_events : [],
      schedules: t === 3 ? c.schedules : [],
      idp_login_event: t === 7 ? c.idp_login_event : 0,
      options: { ...c.options },
    };
    if (t === 1 && !out.fs_events.length) throw new InvalidError('a filesystem rule (trigger 1) needs at least one of conditions.fs_events');
    if (t === 2 && !out.provider_events.length) throw new InvalidError('a provider rule (trigger 2) needs at least one of conditions.provider_events');
    if (t === 3) {
      if (!out.schedules.length) throw new InvalidError('a scheduled rule (trigger 3) needs at least one of conditions.schedules');
      out.schedules.forEach((s, i) => {
        try {
          compileSchedule(s);
        } catch (err) {
          if (err instanceof CronError) throw new InvalidError(`conditions.schedules[${i}]: ${err.message}`);
          throw err;
        }
      });
    } else out.options.concurrent_execution = false;
    for (const k of ['names', 'group_names', 'role_names', 'fs_paths'] as const) {
      out.options[k].forEach((p, i) => {
        if (!isValidWildcard(p.pattern)) throw new InvalidError(`conditions.options.${k}[${i}]: malformed pattern "${p.pattern}"`);
      });
    }
    if (t !== 1) {
      out.options.fs_paths = [];
      out.options.protocols = [];
      out.options.event_statuses = [];
      out.options.min_size = 0;
      out.options.max_size = 0;
    }
    if (t !== 2) out.options.provider_objects = [];
    if (out.options.max_size > 0 && out.options.min_size > out.options.max_size) {
      throw new InvalidError('conditions.options.min_size must not exceed max_size');
    }
    return out;
  }

  /** Checks the linked actions against the trigger, the conditions and the relation options rules. */
  private async validateActions(input: RuleInput, conditions: EventConditions, actionType: ActionTypeLookup): Promise<PreparedRule['links']> {
    if (!input.actions.length) throw new InvalidError('a rule needs at least one action');
    const seen = new Set<string>();
    const out: PreparedRule['links'] = [];
    for (const [i, a] of input.actions.entries()) {
      if (seen.has(a.name)) throw new InvalidError(`action "${a.name}" is listed twice`);
      seen.add(a.name);
      const type = await actionType(a.name);
      if (type === undefined) throw new InvalidError(`actions[${i}]: event action "${a.name}" does not exist`);
      const rel = normalizeRelation(a.relation_options);
      checkActionForRule({ name: a.name, type }, this.registry.actionType(type), { trigger: input.trigger, conditions });
      if (rel.is_failure_action && (rel.execute_sync || rel.execute_before_file_publish)) {
        throw new InvalidError(`action "${a.name}": a failure action cannot be executed synchronously or before publish`);
      }
      if (rel.execute_sync && rel.execute_before_file_publish) {
        throw new InvalidError(`action "${a.name}": execute_sync and execute_before_file_publish are mutually exclusive`);
      }
      if (rel.execute_sync) {
        if (input.trigger !== 1 && input.trigger !== 7) {
          throw new InvalidError(`action "${a.name}": execute_sync is only supported for filesystem events and identity-provider logins`);
        }
        if (input.trigger === 1 && !conditions.fs_events.every((e) => SYNC_FS_EVENTS.includes(e))) {
          throw new InvalidError(`action "${a.name}": execute_sync is only supported for the fs_events ${SYNC_FS_EVENTS.join(', ')}`);
        }
      }
      if (rel.execute_before_file_publish) {
        if (input.trigger !== 1 || conditions.fs_events.some((e) => e !== 'upload')) {
          throw new InvalidError(`action "${a.name}": execute_before_file_publish is only supported for rules on the upload filesystem event only`);
        }
        if (this.config.common.upload_mode !== 1) {
          throw new InvalidError(`action "${a.name}": execute_before_file_publish requires atomic uploads (common.upload_mode 1)`);
        }
      }
      out.push({ name: a.name, order: a.order, relation_options: rel });
    }
    if (out.every((o) => o.relation_options.is_failure_action)) throw new InvalidError('a rule needs at least one action that is not a failure action');
    const pre = input.trigger === 1 ? conditions.fs_events.find((e) => PRE_FS_EVENTS.includes(e)) : undefined;
    if (pre && !out.some((o) => o.relation_options.execute_sync)) {
      throw new InvalidError(`fs event "${pre}" decides whether the operation goes on: the rule needs at least one execute_sync action`);
    }
    return out;
  }

  /**
   * Validates a rule (conditions of its trigger only, linked actions and
   * their relation options); `actionType` resolves the linked actions
   * (the database, or a backup being restored). Writes nothing.
   */
  async prepare(input: RuleInput, actionType: ActionTypeLookup): Promise<PreparedRule> {
    const conditions = this.validateConditions(input);
    return { input, conditions, links: await this.validateActions(input, conditions, actionType) };
  }

  /**
   * Writes a prepared rule (new, or over `existing`) and its action links;
   * the linked actions must exist in `em`. `times` keeps dumped timestamps.
   */
  async write(
    em: EntityManager,
    p: PreparedRule,
    existing: EventRuleRecord | null,
    times: { created_at?: number; updated_at?: number } = {},
  ): Promise<EventRuleRecord> {
    const now = Date.now();
    const fields = {
      description: p.input.description ?? '',
      status: p.input.status,
      trigger: p.input.trigger,
      conditions: p.conditions as unknown as Obj,
      updated_at: times.updated_at || now,
    };
    let rule: EventRuleRecord;
    if (existing) {
      rule = em.assign(existing, { ...fields, ...(times.created_at ? { created_at: times.created_at } : {}) });
      await em.nativeDelete(EventRuleAction, { rule: existing.id });
    } else {
      rule = em.create(EventRuleRecord, { name: p.input.name, ...fields, created_at: times.created_at || now });
    }
    const names = p.links.map((l) => l.name);
    const actions = new Map((await em.find(EventActionRecord, { name: { $in: names } })).map((a) => [a.name, a]));
    for (const l of p.links) {
      const action = actions.get(l.name);
      if (!action) throw new InvalidError(`event action "${l.name}" does not exist`);
      em.create(EventRuleAction, { rule, action, order: l.order, relation_options: { ...l.relation_options } });
    }
    await em.flush();
    return rule;
  }

  async create(input: RuleInput, actor: Actor): Promise<EventRuleRecord> {
    const em = this.em();
    if (await em.count(EventRuleRecord, { name: input.name })) throw new InvalidError(`event rule "${input.name}" already exists`);
    const prepared = await this.prepare(input, dbActionTypes(em));
    const rule = await em.transactional((tem) => this.write(tem, prepared, null));
    this.events.emit('add', 'event_rule', rule.name, await this.render(rule, false, em), actor);
    return rule;
  }

  async update(name: string, input: RuleInput, actor: Actor): Promise<void> {
    const em = this.em();
    const rule = await this.get(name, em);
    if (input.name !== name) throw new InvalidError('an event rule cannot be renamed: the name in the body must match the path');
    const prepared = await this.prepare(input, dbActionTypes(em));
    await em.transactional((tem) => this.write(tem, prepared, tem.merge(rule)));
    const fresh = this.em();
    this.events.emit('update', 'event_rule', name, await this.render(await this.get(name, fresh), false, fresh), actor);
  }

  async delete(name: string, actor: Actor): Promise<void> {
    const em = this.em();
    const rule = await this.get(name, em);
    const data = await this.render(rule, false, em);
    await em.nativeDelete(EventRuleAction, { rule: rule.id });
    await em.removeAndFlush(rule);
    this.events.emit('delete', 'event_rule', name, data, actor);
  }
}
