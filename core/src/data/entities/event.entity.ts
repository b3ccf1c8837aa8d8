import { EntitySchema, type Rel } from '@mikro-orm/core';
import { json, msTime, name, text } from './columns.js';

/**
 * An event action (BaseEventAction). `options` holds only the sub-object the
 * type selects (e.g. `{ email_config: {...} }`), Secret fields encrypted.
 */
export class EventActionRecord {
  id!: number;
  name!: string;
  description = '';
  type!: number;
  options: Record<string, unknown> = {};
  created_at = 0;
  updated_at = 0;
}

export const EventActionSchema = new EntitySchema<EventActionRecord>({
  class: EventActionRecord,
  tableName: 'event_actions',
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    name: name(),
    description: { ...text(), default: '' },
    type: { type: 'integer' },
    options: json(),
    created_at: msTime(),
    updated_at: msTime(),
  },
});

/** An event rule (BaseEventRule): status 1 enabled, 0 disabled. */
export class EventRuleRecord {
  id!: number;
  name!: string;
  description = '';
  status = 1;
  trigger!: number;
  conditions: Record<string, unknown> = {};
  created_at = 0;
  updated_at = 0;
}

export const EventRuleSchema = new EntitySchema<EventRuleRecord>({
  class: EventRuleRecord,
  tableName: 'event_rules',
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    name: name(),
    description: { ...text(), default: '' },
    status: { type: 'integer', default: 1 },
    trigger: { type: 'integer', index: true },
    conditions: json(),
    created_at: msTime(),
    updated_at: msTime(),
  },
});

/** One action of a rule, with its order and relation options (EventActionOptions). */
export class EventRuleAction {
  id!: number;
  rule!: Rel<EventRuleRecord>;
  action!: Rel<EventActionRecord>;
  order = 0;
  relation_options: Record<string, unknown> = {};
}

export const EventRuleActionSchema = new EntitySchema<EventRuleAction>({
  class: EventRuleAction,
  tableName: 'event_rules_actions',
  uniques: [{ properties: ['rule', 'action'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    rule: { kind: 'm:1', entity: () => EventRuleRecord, deleteRule: 'cascade', index: true },
    action: { kind: 'm:1', entity: () => EventActionRecord, deleteRule: 'no action', index: true },
    order: { type: 'integer', default: 0, fieldName: 'action_order' },
    relation_options: json(),
  },
});
