import Joi from 'joi';
import { objectName } from '../util/common.input.js';
import { RULE_PROTOCOLS } from '../sdk/protocols.js';

const strip = Joi.any().strip();

export const actionInput = Joi.object({
  id: strip,
  name: objectName.required(),
  description: Joi.string().allow('').max(4096).default(''),
  type: Joi.number().integer().min(1).required(),
  options: Joi.object().unknown(true).default({}),
  rules: strip,
  created_at: strip,
  updated_at: strip,
});

export interface ActionInput {
  name: string;
  description: string;
  type: number;
  options: Record<string, unknown>;
}

const pattern = Joi.object({
  pattern: Joi.string().min(1).max(1024).required(),
  inverse_match: Joi.boolean().default(false),
});

const schedule = Joi.object({
  minute: Joi.string().allow('').max(255).default('0'),
  hour: Joi.string().max(255).required(),
  day_of_week: Joi.string().max(255).required(),
  day_of_month: Joi.string().max(255).required(),
  month: Joi.string().max(255).required(),
});

export const FS_EVENTS = [
  'upload',
  'download',
  'delete',
  'rename',
  'mkdir',
  'rmdir',
  'copy',
  'ssh_cmd',
  'pre-upload',
  'pre-download',
  'pre-delete',
  'first-upload',
  'first-download',
];
/** The protocols a rule's conditions may name (sdk/protocols.ts). */
export const PROTOCOLS = RULE_PROTOCOLS;
export const PROVIDER_OBJECTS = ['user', 'folder', 'group', 'admin', 'api_key', 'share', 'event_action', 'event_rule', 'role', 'ip_list_entry'];

const conditionOptions = Joi.object({
  names: Joi.array().items(pattern).default([]),
  group_names: Joi.array().items(pattern).default([]),
  role_names: Joi.array().items(pattern).default([]),
  fs_paths: Joi.array().items(pattern).default([]),
  protocols: Joi.array()
    .items(Joi.string().valid(...PROTOCOLS))
    .unique()
    .default([]),
  provider_objects: Joi.array()
    .items(Joi.string().valid(...PROVIDER_OBJECTS))
    .unique()
    .default([]),
  min_size: Joi.number().integer().min(0).default(0),
  max_size: Joi.number().integer().min(0).default(0),
  event_statuses: Joi.array()
    .items(Joi.number().integer().valid(1, 2, 3))
    .unique()
    .default([]),
  concurrent_execution: Joi.boolean().default(false),
}).default();

const conditions = Joi.object({
  fs_events: Joi.array()
    .items(Joi.string().valid(...FS_EVENTS))
    .unique()
    .default([]),
  provider_events: Joi.array()
    .items(Joi.string().valid('add', 'update', 'delete'))
    .unique()
    .default([]),
  schedules: Joi.array().items(schedule).max(100).default([]),
  idp_login_event: Joi.number().integer().valid(0, 1, 2).default(0),
  options: conditionOptions,
}).default();

const relationOptions = Joi.object({
  is_failure_action: Joi.boolean().default(false),
  stop_on_failure: Joi.boolean().default(false),
  execute_sync: Joi.boolean().default(false),
  execute_before_file_publish: Joi.boolean().default(false),
}).default();

export const ruleInput = Joi.object({
  id: strip,
  name: objectName.required(),
  description: Joi.string().allow('').max(4096).default(''),
  status: Joi.number().integer().valid(0, 1).default(1),
  trigger: Joi.number().integer().valid(1, 2, 3, 4, 5, 6, 7).required(),
  conditions,
  // the read shape (EventAction with type, options...) is accepted too: only name, order and relation_options count
  actions: Joi.array()
    .items(
      Joi.object({
        name: objectName.required(),
        order: Joi.number().integer().min(0).default(0),
        relation_options: relationOptions,
      }).unknown(true),
    )
    .max(100)
    .default([]),
  created_at: strip,
  updated_at: strip,
});

export interface RuleInput {
  name: string;
  description: string;
  status: number;
  trigger: number;
  conditions: import('./types.js').EventConditions;
  actions: { name: string; order: number; relation_options: import('./types.js').RelationOptions }[];
}
