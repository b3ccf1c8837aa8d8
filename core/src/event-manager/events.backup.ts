import { inject, injectable } from 'tsyringe';
import type { EntityManager } from '@mikro-orm/core';
import { EventActionRecord, EventRuleAction, EventRuleRecord } from '../data/entities/index.js';
import { actionInput, ruleInput, type ActionInput, type RuleInput } from './event.input.js';
import { timestampMs } from '../util/common.input.js';
import { normalizeConditions, normalizeRelation, type EventConditions } from './types.js';
import { EventActionService, redactActionSecrets } from './event-action.service.js';
import { dbActionTypes, EventRuleService, type PreparedRule } from './event-rule.service.js';
import type { BackupData, BackupSection, BackupSectionSource, RestoreMode } from '../data/backup-section.js';
import { loadByName, named, nameOf, validateItem, type Item } from '../data/backup-section.js';

type Obj = Record<string, unknown>;

const ruleSchema = ruleInput.keys({ created_at: timestampMs, updated_at: timestampMs });

/** Names of the objects of a backup section (valid or not: validate() reports the bad ones). */
function namesOf(data: BackupData, key: string): Map<string, Obj> {
  const out = new Map<string, Obj>();
  const items = data[key];
  if (Array.isArray(items))
    for (const x of items) if (x && typeof x === 'object' && typeof (x as Obj).name === 'string') out.set((x as Obj).name as string, x as Obj);
  return out;
}

interface PreparedAction {
  input: ActionInput;
  options: Obj;
}

/**
 * dumpdata/loaddata sections of the event manager: `event_actions` (scope
 * `actions`) then `event_rules` (scope `rules`), after every account
 * section. Objects are validated with the API's rules (options by the
 * plugin's schema, rules against their actions as they will be after the
 * restore); secrets are dumped and restored encrypted, as stored.
 */
@injectable()
export class EventBackupSections implements BackupSectionSource {
  constructor(
    @inject(EventActionService) private readonly actions: EventActionService,
    @inject(EventRuleService) private readonly rules: EventRuleService,
  ) {}

  sections(): BackupSection<any>[] {
    return [this.actionSection(), this.ruleSection()];
  }

  private actionSection(): BackupSection<Item<PreparedAction>[]> {
    return {
      scope: 'actions',
      key: 'event_actions',
      order: 80,
      names: (items) => items.map(nameOf('name')),
      dump: async (em) =>
        (await em.find(EventActionRecord, {}, { orderBy: { name: 'ASC' } })).map((a) => ({
          name: a.name,
          description: a.description,
          type: a.type,
          options: redactActionSecrets(a.options ?? {}, true),
        })),
      validate: async (items, ctx) => {
        const existing = await loadByName(ctx.em, EventActionRecord, 'name', items.map(nameOf('name')));
        // rules of the backup replace the stored ones: they are checked by the rules section
        const replacedRules = ctx.mode === 1 ? new Set<string>() : new Set(namesOf(ctx.data, 'event_rules').keys());
        const out: Item<PreparedAction>[] = [];
        for (const [i, item] of items.entries()) {
          const v = validateItem<ActionInput>('event_actions', i, item, actionInput, nameOf('name')(item));
          const ex = existing.get(v.name);
          if (ctx.mode === 1 && ex) {
            out.push({ name: v.name, keep: true, data: {} });
            continue;
          }
          const options = await named('event_actions', i, v.name, async () => {
            const o = await this.actions.normalizeOptions(v, ex);
            if (ex && ex.type !== v.type) await this.actions.checkRulesOf(ctx.em, ex, v.type, replacedRules);
            return o;
          });
          out.push({
            name: v.name,
            prepared: { input: v, options },
            data: { name: v.name, description: v.description, type: v.type, options: redactActionSecrets(options, false) },
          });
        }
        return out;
      },
      restore: async (items, ctx) => {
        const em = ctx.em;
        const existing = await loadByName(
          em,
          EventActionRecord,
          'name',
          items.map((x) => x.name),
        );
        const now = Date.now();
        for (const it of items) {
          if (it.keep) continue;
          const { input, options } = it.prepared!;
          const ex = existing.get(it.name);
          if (ex) em.assign(ex, { description: input.description ?? '', type: input.type, options, updated_at: now });
          else
            em.create(EventActionRecord, {
              name: input.name,
              description: input.description ?? '',
              type: input.type,
              options,
              created_at: now,
              updated_at: now,
            });
          ctx.event(ex ? 'update' : 'add', 'event_action', it.name, it.data);
        }
        await em.flush();
      },
    };
  }

  /** Action types as they will be after the restore: the backup's, or the stored ones (stored first in mode 1). */
  private actionTypes(em: EntityManager, data: BackupData, mode: RestoreMode) {
    const inBackup = namesOf(data, 'event_actions');
    const db = dbActionTypes(em);
    return async (name: string): Promise<number | undefined> => {
      const b = inBackup.get(name);
      if (!b) return db(name);
      if (mode === 1) {
        const stored = await db(name);
        if (stored !== undefined) return stored;
      }
      return typeof b.type === 'number' ? b.type : undefined;
    };
  }

  private ruleSection(): BackupSection<Item<{ rule: PreparedRule; created_at?: number; updated_at?: number }>[]> {
    return {
      scope: 'rules',
      key: 'event_rules',
      order: 90,
      names: (items) => items.map(nameOf('name')),
      dump: async (em) => {
        const rules = await em.find(EventRuleRecord, {}, { orderBy: { name: 'ASC' } });
        const links = rules.length
          ? await em.find(EventRuleAction, { rule: { $in: rules.map((r) => r.id) } }, { populate: ['action'], orderBy: { order: 'ASC', id: 'ASC' } })
          : [];
        return rules.map((r) => ({
          name: r.name,
          description: r.description,
          status: r.status,
          trigger: r.trigger,
          conditions: normalizeConditions(r.conditions as Partial<EventConditions>),
          actions: links
            .filter((l) => (l.rule as EventRuleRecord).id === r.id)
            .map((l) => ({ name: (l.action as EventActionRecord).name, order: l.order, relation_options: normalizeRelation(l.relation_options) })),
          created_at: r.created_at,
          updated_at: r.updated_at,
        }));
      },
      validate: async (items, ctx) => {
        const existing = await loadByName(ctx.em, EventRuleRecord, 'name', items.map(nameOf('name')));
        const types = this.actionTypes(ctx.em, ctx.data, ctx.mode);
        const out: Item<{ rule: PreparedRule; created_at?: number; updated_at?: number }>[] = [];
        for (const [i, item] of items.entries()) {
          const v = validateItem<RuleInput & { created_at?: number; updated_at?: number }>('event_rules', i, item, ruleSchema, nameOf('name')(item));
          if (ctx.mode === 1 && existing.has(v.name)) {
            out.push({ name: v.name, keep: true, data: {} });
            continue;
          }
          const rule = await named('event_rules', i, v.name, () => this.rules.prepare(v, types));
          const data = { name: v.name, description: v.description, status: v.status, trigger: v.trigger, conditions: rule.conditions, actions: rule.links };
          out.push({ name: v.name, prepared: { rule, created_at: v.created_at, updated_at: v.updated_at }, data });
        }
        return out;
      },
      restore: async (items, ctx) => {
        const existing = await loadByName(
          ctx.em,
          EventRuleRecord,
          'name',
          items.map((x) => x.name),
        );
        for (const it of items) {
          if (it.keep) continue;
          const p = it.prepared!;
          const ex = existing.get(it.name) ?? null;
          await this.rules.write(ctx.em, p.rule, ex, { created_at: p.created_at, updated_at: p.updated_at });
          ctx.event(ex ? 'update' : 'add', 'event_rule', it.name, it.data);
        }
      },
    };
  }
}
