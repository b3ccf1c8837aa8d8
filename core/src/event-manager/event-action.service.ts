import { InvalidError, NotFoundError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { EventActionRecord, EventRuleAction, EventRuleRecord } from '../data/entities/index.js';
import type { ListQuery } from '../util/common.input.js';
import type { ActionInput } from './event.input.js';
import type { PluginRegistry } from '../plugins/registry.js';
import { RESERVED_ACTION_TYPES, type ActionTypeDef } from '../events/action.contract.js';
import type { SecretsService } from '../secrets/secret.js';
import { isSecret } from '../secrets/secret.js';
import { collectField, mapField } from './fields.js';
import { checkActionTemplates, validateActionOptions } from './prepare.js';
import { checkActionForRule } from './compat.js';
import { normalizeConditions, type EventConditions } from './types.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';

type Obj = Record<string, unknown>;

/** Every Secret inside a value reduced to its status, or kept whole (still encrypted) when confidential. */
export function redactActionSecrets(v: unknown, confidential: boolean): unknown {
  if (Array.isArray(v)) return v.map((x) => redactActionSecrets(x, confidential));
  if (v && typeof v === 'object') {
    if (isSecret(v)) return confidential ? { ...v } : { status: v.status };
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) out[k] = redactActionSecrets(x, confidential);
    return out;
  }
  return v;
}

/**
 * Event actions: CRUD. The type selects one options sub-object (the
 * registered ActionTypeDef.optionsKey), validated by the plugin's schema;
 * Secret fields are encrypted at rest; template fields are parsed at save time.
 */
@injectable()
export class EventActionService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Plugins) private readonly registry: PluginRegistry,
    @inject(TOKENS.Secrets) private readonly secrets: SecretsService,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
  ) {}

  em(): EntityManager {
    return this.orm.em.fork();
  }

  async render(a: EventActionRecord, confidential = false, em: EntityManager = this.em()): Promise<Obj> {
    const uses = await em.find(EventRuleAction, { action: a.id }, { populate: ['rule'] });
    return {
      id: a.id,
      name: a.name,
      description: a.description,
      type: a.type,
      options: redactActionSecrets(a.options ?? {}, confidential),
      rules: uses.map((u) => u.rule.name).sort(),
    };
  }

  async list(q: ListQuery): Promise<EventActionRecord[]> {
    return this.em().find(EventActionRecord, {}, { orderBy: { name: q.order }, offset: q.offset, limit: q.limit });
  }

  async get(name: string, em: EntityManager = this.em()): Promise<EventActionRecord> {
    const a = await em.findOne(EventActionRecord, { name });
    if (!a) throw new NotFoundError(`event action "${name}" not found`);
    return a;
  }

  typeDef(type: number): ActionTypeDef {
    if (RESERVED_ACTION_TYPES.has(type)) throw new InvalidError(`event action type ${type} is reserved`);
    const def = this.registry.actionType(type);
    if (!def) throw new InvalidError(`event action type ${type} is not available (no plugin registers it)`);
    const why = def.unavailable?.();
    if (why) throw new InvalidError(`event action type ${type} (${def.key}) cannot be used: ${why}`);
    return def;
  }

  /** Validates and normalises options: the selected sub-object only, secrets encrypted, templates parsed. */
  async normalizeOptions(input: ActionInput, previous?: EventActionRecord): Promise<Obj> {
    const def = this.typeDef(input.type);
    if (!def.optionsKey) return {};
    const key = def.optionsKey;
    let sub = (input.options?.[key] ?? {}) as Obj;
    if (typeof sub !== 'object' || sub === null || Array.isArray(sub)) throw new InvalidError(`"options.${key}" must be an object`);
    try {
      sub = validateActionOptions(def, sub);
    } catch (err) {
      throw new InvalidError((err as Error).message);
    }
    sub = structuredClone(sub);
    const prevSub = previous && previous.type === input.type ? ((previous.options?.[key] ?? {}) as Obj) : {};
    for (const f of def.secretFields ?? []) {
      const old = new Map((await collectField(prevSub, f)).map((x) => [x.where, x.value]));
      await mapField(sub, f, async (v, where) => {
        if (v === undefined || v === null || v === '') return undefined;
        if (!isSecret(v)) throw new InvalidError(`options.${key}.${where} must be a secret object {status, payload}`);
        if (v.status === 'Plain') return v.payload ? this.secrets.encrypt(v.payload, `event_action:${input.name}`) : undefined;
        if (v.payload && v.key) {
          if (!this.secrets.canDecrypt(v)) throw new InvalidError(`options.${key}.${where}: secrets of status ${v.status} cannot be decrypted here`);
          return v;
        }
        // a redacted secret sent back unchanged keeps the stored one
        return old.get(where);
      });
    }
    try {
      await checkActionTemplates(def, sub);
    } catch (err) {
      throw new InvalidError((err as Error).message);
    }
    return { [key]: sub };
  }

  async create(input: ActionInput, actor: Actor): Promise<EventActionRecord> {
    const em = this.em();
    if (await em.count(EventActionRecord, { name: input.name })) throw new InvalidError(`event action "${input.name}" already exists`);
    const options = await this.normalizeOptions(input);
    const now = Date.now();
    const a = em.create(EventActionRecord, {
      name: input.name,
      description: input.description ?? '',
      type: input.type,
      options,
      created_at: now,
      updated_at: now,
    });
    await em.flush();
    this.events.emit('add', 'event_action', a.name, await this.render(a, false, em), actor);
    return a;
  }

  async update(name: string, input: ActionInput, actor: Actor): Promise<void> {
    const em = this.em();
    const a = await this.get(name, em);
    if (input.name !== name) throw new InvalidError('an event action cannot be renamed: the name in the body must match the path');
    a.options = await this.normalizeOptions(input, a);
    if (input.type !== a.type) await this.checkRulesOf(em, a, input.type);
    a.type = input.type;
    a.description = input.description ?? '';
    a.updated_at = Date.now();
    await em.flush();
    this.events.emit('update', 'event_action', a.name, await this.render(a, false, em), actor);
  }

  /** A new type for an action must suit every rule using it (400 naming the rule otherwise). */
  async checkRulesOf(em: EntityManager, a: EventActionRecord, type: number, skipRules: Set<string> = new Set()): Promise<void> {
    const uses = await em.find(EventRuleAction, { action: a.id }, { populate: ['rule'] });
    const def = this.registry.actionType(type);
    for (const u of uses) {
      const rule = u.rule as EventRuleRecord;
      if (skipRules.has(rule.name)) continue;
      try {
        checkActionForRule({ name: a.name, type }, def, {
          trigger: rule.trigger,
          conditions: normalizeConditions(rule.conditions as Partial<EventConditions>),
        });
      } catch (err) {
        throw new InvalidError(`event action "${a.name}" is used by rule "${rule.name}": ${(err as Error).message}`);
      }
    }
  }

  async delete(name: string, actor: Actor): Promise<void> {
    const em = this.em();
    const a = await this.get(name, em);
    const uses = await em.find(EventRuleAction, { action: a.id }, { populate: ['rule'] });
    if (uses.length) {
      const rules = [...new Set(uses.map((u) => u.rule.name))].sort();
      throw new InvalidError(`event action "${name}" is still used by ${rules.map((r) => `rule "${r}"`).join(', ')}`);
    }
    const data = await this.render(a, false, em);
    await em.removeAndFlush(a);
    this.events.emit('delete', 'event_action', name, data, actor);
  }
}
