/**
 * The event manager's logic without React (the unit tests read it): the
 * options of each action type as form fields, the mapping between the API's
 * actions and rules and their forms, the sample event of each trigger, and
 * the template preview rendered with Ferry's own Go-template library.
 */
import { renderTemplate } from '@ferry/go-template';
import { apiValueOf, formValueOf, getPath, setPath, type OptionKind, type OptionSpec, type OptionValues } from './option-values.js';

export { FormValueError, getPath, isFormValueError, setPath, type OptionKind, type OptionSpec, type OptionValues, type SecretEdit } from './option-values.js';

type Obj = Record<string, unknown>;

// ---------------------------------------------------------------- triggers

export const TRIGGERS = [1, 2, 3, 4, 5, 6, 7] as const;
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
] as const;
export const PROVIDER_EVENTS = ['add', 'update', 'delete'] as const;
export const PROVIDER_OBJECTS = ['user', 'folder', 'group', 'admin', 'api_key', 'share', 'event_action', 'event_rule', 'role', 'ip_list_entry'] as const;
export const PROTOCOLS = ['SFTP', 'SCP', 'SSH', 'FTP', 'DAV', 'HTTP', 'HTTPShare', 'OIDC'] as const;
/** The filesystem event statuses a rule may match: 1 ok, 2 failed, 3 quota exceeded. */
export const EVENT_STATUSES = [1, 2, 3] as const;

// ---------------------------------------------------------------- the template data of a sample event

const SAMPLE_TIME_NS = 1_767_225_600_000_000_000n; // 2026-01-01T00:00:00Z

/**
 * The template data an action renders against for an event of `trigger`:
 * the shape core/src/event-manager/context.ts builds (buildParams), with
 * sample values (a user "alice" uploading /in/report.csv for a filesystem
 * rule, a user added by an admin for a provider rule...).
 */
export function sampleEventData(trigger: number, rule = 'my-rule'): Obj {
  const p: Obj = {
    Name: '',
    Event: '',
    Status: 1,
    StatusString: 'OK',
    VirtualPath: '',
    VirtualTargetPath: '',
    FsPath: '',
    FsTargetPath: '',
    ObjectName: '',
    ObjectType: '',
    ObjectBaseName: '',
    ExtName: '',
    FileSize: 0,
    Elapsed: 0,
    Protocol: '',
    IP: '',
    Role: '',
    Email: '',
    SessionID: '',
    Bucket: '',
    Endpoint: '',
    IDPFields: {},
    Timestamp: SAMPLE_TIME_NS,
    Rule: rule,
    Trigger: trigger,
    UID: '0b9d1c3e-5f2a-4c7b-9e1d-2a3b4c5d6e7f',
    Initiator: { User: null, Admin: { Username: 'admin', Role: '' } },
    Object: { User: null, Admin: null, Group: null, Share: null, JSON: '' },
    RetentionChecks: [],
    EventReports: [],
    Shares: [],
    Errors: [],
    ErrorString: '',
  };
  const userInitiator = { User: { Username: 'alice', Role: '', Email: 'alice@example.com' }, Admin: null };
  switch (trigger) {
    case 1:
      Object.assign(p, {
        Name: 'alice',
        Event: 'upload',
        VirtualPath: '/in/report.csv',
        FsPath: '/srv/ferry/alice/in/report.csv',
        ObjectName: 'report.csv',
        ObjectBaseName: 'report',
        ObjectType: 'file',
        ExtName: '.csv',
        FileSize: 1048576,
        Elapsed: 250,
        Protocol: 'SFTP',
        IP: '192.0.2.10',
        SessionID: 'sftp_3f2a',
        Initiator: userInitiator,
      });
      break;
    case 2: {
      const user = { username: 'bob', email: 'bob@example.com', status: 1, home_dir: '/srv/ferry/bob', permissions: { '/': ['*'] } };
      Object.assign(p, {
        Name: 'bob',
        Event: 'add',
        ObjectName: 'bob',
        ObjectType: 'user',
        IP: '192.0.2.20',
        Email: 'bob@example.com',
        Object: { User: user, Admin: null, Group: null, Share: null, JSON: JSON.stringify(user) },
      });
      break;
    }
    case 3:
      Object.assign(p, { Name: rule, Event: 'Schedule', Initiator: { User: null, Admin: { Username: '', Role: '' } } });
      break;
    case 4:
      Object.assign(p, { Name: '198.51.100.7', Event: 'IP Blocked', IP: '198.51.100.7', Protocol: 'SSH' });
      break;
    case 5:
      Object.assign(p, { Name: 'files.example.com', Event: 'Certificate renewed' });
      break;
    case 6:
      Object.assign(p, { Name: rule, Event: 'On-Demand' });
      break;
    case 7:
      Object.assign(p, {
        Name: 'carol',
        Event: 'IDP login user',
        IP: '192.0.2.30',
        Email: 'carol@example.com',
        IDPFields: { department: 'sales' },
        Protocol: 'OIDC',
        Initiator: { User: { Username: 'carol', Role: '', Email: 'carol@example.com' }, Admin: null },
      });
      break;
  }
  return p;
}

/** A template rendered against the sample event of `trigger`: the text, or Go's error message. */
export function previewTemplate(src: string, trigger: number, rule?: string): { text: string } | { error: string } {
  try {
    return { text: renderTemplate(src, sampleEventData(trigger, rule), 'preview') };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

// ---------------------------------------------------------------- action types and their options as form fields

export interface ActionTypeInfo {
  type: number;
  optionsKey?: string;
  options: (fsType: number) => OptionSpec[];
}

const tpl = (key: string, kind: OptionKind = 'text', extra: Partial<OptionSpec> = {}): OptionSpec => ({ key, kind, template: true, ...extra });
const num = (key: string, initial?: number): OptionSpec => ({ key, kind: 'number', initial });
const sel = (key: string, choices: readonly (string | number)[], initial: string | number = choices[0]!): OptionSpec => ({
  key,
  kind: 'select',
  choices,
  initial,
});

/** The filesystem sub-types (fs_config.type): 1 rename ... 9 decompress. */
export const FS_TYPES = [1, 2, 3, 4, 5, 6, 7, 8, 9] as const;

function fsOptions(fsType: number): OptionSpec[] {
  const base: OptionSpec[] = [sel('type', FS_TYPES, 3), num('timeout')];
  switch (fsType) {
    case 1:
      return [...base, { key: 'renames', kind: 'json', template: true, initial: [{ key: '/from', value: '/to', update_modtime: false }] }];
    case 2:
      return [...base, tpl('deletes', 'lines', { required: true })];
    case 3:
      return [...base, tpl('mkdirs', 'lines', { required: true })];
    case 4:
      return [...base, tpl('exist', 'lines', { required: true })];
    case 5:
      return [...base, tpl('compress.name', 'text', { required: true }), tpl('compress.paths', 'lines', { required: true })];
    case 6:
      return [...base, tpl('copy', 'kv', { required: true })];
    case 7:
      return [
        ...base,
        sel('pgp.mode', [1, 2]),
        tpl('pgp.paths', 'kv', { required: true }),
        { key: 'pgp.public_keys', kind: 'json', initial: [] },
        { key: 'pgp.password', kind: 'secret' },
        { key: 'pgp.private_key', kind: 'secret' },
        { key: 'pgp.passphrase', kind: 'secret' },
        { key: 'pgp.armor', kind: 'bool' },
      ];
    case 8:
      return [
        ...base,
        tpl('metadata_check.paths', 'lines', { required: true }),
        num('metadata_check.min_size', -1),
        num('metadata_check.max_size', -1),
        num('metadata_check.min_age', -1),
        num('metadata_check.max_age', -1),
        { key: 'metadata_check.metadata', kind: 'json', initial: [] },
      ];
    case 9:
      return [
        ...base,
        tpl('decompress.name', 'text', { required: true }),
        tpl('decompress.target', 'text', { required: true }),
        sel('decompress.overwrite', [1, 2, 3]),
        num('decompress.max_entries'),
        num('decompress.max_size'),
        num('decompress.max_ratio'),
      ];
    default:
      return base;
  }
}

const none = () => [];
/** Every action type (BaseEventAction.type) with its options sub-object; 10 is reserved. */
export const ACTION_TYPES: ActionTypeInfo[] = [
  {
    type: 1,
    optionsKey: 'http_config',
    options: () => [
      tpl('endpoint', 'text', { required: true, initial: 'https://' }),
      sel('method', ['POST', 'GET', 'PUT', 'DELETE']),
      num('timeout'),
      { key: 'username', kind: 'text' },
      { key: 'password', kind: 'secret' },
      { key: 'skip_tls_verify', kind: 'bool' },
      tpl('headers', 'kv'),
      tpl('query_parameters', 'kv'),
      tpl('body', 'area'),
      { key: 'parts', kind: 'json', template: true, initial: [] },
    ],
  },
  {
    type: 2,
    optionsKey: 'cmd_config',
    options: () => [{ key: 'cmd', kind: 'text', required: true }, tpl('args', 'lines'), num('timeout'), tpl('env_vars', 'kv')],
  },
  {
    type: 3,
    optionsKey: 'email_config',
    options: () => [
      tpl('recipients', 'lines'),
      tpl('bcc', 'lines'),
      tpl('subject', 'text', { required: true }),
      tpl('body', 'area', { required: true }),
      sel('content_type', [0, 1]),
      tpl('attachments', 'lines'),
    ],
  },
  { type: 4, options: none },
  { type: 5, options: none },
  { type: 6, options: none },
  { type: 7, options: none },
  {
    type: 8,
    optionsKey: 'retention_config',
    options: () => [{ key: 'folders', kind: 'json', initial: [{ path: '/', retention: 168, delete_empty_dirs: false }] }],
  },
  { type: 9, optionsKey: 'fs_config', options: fsOptions },
  { type: 11, optionsKey: 'pwd_expiration_config', options: () => [num('threshold', 7)] },
  { type: 12, options: none },
  {
    type: 13,
    optionsKey: 'idp_config',
    options: () => [sel('mode', [0, 1]), tpl('template_user', 'area'), tpl('template_admin', 'area')],
  },
  { type: 14, optionsKey: 'user_inactivity_config', options: () => [num('disable_threshold', 30), num('delete_threshold', 0)] },
  { type: 15, optionsKey: 'rotate_logs_config', options: () => [num('keep', 0)] },
  {
    type: 16,
    optionsKey: 'imap_config',
    options: () => [
      tpl('email', 'lines'),
      tpl('subject', 'text', { required: true }),
      tpl('body', 'area', { required: true }),
      sel('content_type', [0, 1]),
      tpl('attachments', 'lines'),
      tpl('target_folder', 'text', { initial: 'INBOX' }),
      { key: 'host', kind: 'text' },
      num('port'),
      sel('tls', [0, 1, 2]),
      { key: 'username', kind: 'text' },
      { key: 'password', kind: 'secret' },
      { key: 'skip_tls_verify', kind: 'bool' },
      num('timeout'),
    ],
  },
  {
    type: 17,
    optionsKey: 'icap_config',
    options: () => [
      { key: 'endpoint', kind: 'text', required: true, initial: 'icap://' },
      sel('method', ['RESPMOD', 'REQMOD']),
      num('timeout'),
      tpl('paths', 'lines', { required: true, initial: ['{{.VirtualPath}}'] }),
      sel('block_action', [1, 2, 3]),
      sel('adapt_action', [1, 2, 3, 4]),
      sel('failure_policy', [1, 2, 3]),
    ],
  },
  { type: 18, optionsKey: 'share_expiration_config', options: () => [num('advance_notice', 0), num('delete_after', -1)] },
  {
    type: 19,
    optionsKey: 'event_report_config',
    options: () => [
      num('hours', 24),
      { key: 'event_types', kind: 'multi', choices: ['fs', 'provider', 'log'], initial: ['fs', 'provider', 'log'] },
      { key: 'compress', kind: 'bool' },
    ],
  },
];

export const actionTypeInfo = (type: number): ActionTypeInfo | undefined => ACTION_TYPES.find((a) => a.type === type);

// ---------------------------------------------------------------- an action and its form

export interface ActionFields {
  name: string;
  description: string;
  type: number;
  values: OptionValues;
}

/** The option values of a new action of `type` (filesystem: sub-type `fsType`). */
export function initialValues(type: number, fsType = 3): OptionValues {
  const out: OptionValues = {};
  for (const spec of actionTypeInfo(type)?.options(fsType) ?? []) out[spec.key] = formValueOf(spec, {}, true);
  if (type === 9) out.type = String(fsType);
  return out;
}

/** The form of an action read from the API. */
export function actionFieldsOf(a: { name: string; description?: string; type: number; options?: unknown }): ActionFields {
  const info = actionTypeInfo(a.type);
  const sub = ((info?.optionsKey ? getPath(a.options, info.optionsKey) : undefined) ?? {}) as Obj;
  const fsType = Number(sub.type ?? 3);
  const values: OptionValues = {};
  for (const spec of info?.options(fsType) ?? []) values[spec.key] = formValueOf(spec, sub, false);
  return { name: a.name, description: a.description ?? '', type: a.type, values };
}

/** The specs of the form's current type (a filesystem action's depend on its sub-type). */
export const specsOf = (f: Pick<ActionFields, 'type' | 'values'>): OptionSpec[] => actionTypeInfo(f.type)?.options(Number(f.values.type ?? 3)) ?? [];

/** The body of POST/PUT /eventactions for the form (only the options of the chosen type, secrets as set/unset/new). */
export function actionInputOf(f: ActionFields): { name: string; description: string; type: number; options: Obj } {
  const info = actionTypeInfo(f.type);
  const input = { name: f.name.trim(), description: f.description, type: f.type, options: {} as Obj };
  if (!info?.optionsKey) return input;
  const sub: Obj = {};
  for (const spec of specsOf(f)) {
    const v = apiValueOf(spec, f.values[spec.key], `options.${info.optionsKey}`);
    if (v !== undefined) setPath(sub, spec.key, v);
  }
  input.options[info.optionsKey] = sub;
  return input;
}

/** The template fields of the form's type with their current texts (each line of a list, each value of a key=value list). */
export function templateTexts(spec: OptionSpec, v: OptionValues[string] | undefined): string[] {
  if (typeof v !== 'string') return [];
  if (spec.kind === 'json') {
    // the strings of the JSON that hold a template (a part's body, a rename's paths)
    const out: string[] = [];
    const walk = (x: unknown): void => {
      if (typeof x === 'string') {
        if (x.includes('{{')) out.push(x);
      } else if (x && typeof x === 'object') Object.values(x).forEach(walk);
    };
    try {
      walk(JSON.parse(v));
    } catch {
      return [];
    }
    return out;
  }
  if (spec.kind === 'lines') return v.split('\n').filter((l) => l.trim());
  if (spec.kind === 'kv')
    return v
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => (l.includes('=') ? l.slice(l.indexOf('=') + 1) : ''));
  return [v];
}

// ---------------------------------------------------------------- a rule and its form

export interface Pattern {
  pattern: string;
  inverse_match: boolean;
}

export interface Schedule {
  minute: string;
  hour: string;
  day_of_week: string;
  day_of_month: string;
  month: string;
}

export interface RuleAction {
  name: string;
  is_failure_action: boolean;
  stop_on_failure: boolean;
  execute_sync: boolean;
  execute_before_file_publish: boolean;
}

export interface RuleFields {
  name: string;
  description: string;
  enabled: boolean;
  trigger: number;
  fs_events: string[];
  provider_events: string[];
  provider_objects: string[];
  protocols: string[];
  event_statuses: number[];
  schedules: Schedule[];
  idp_login_event: number;
  /** Patterns as text: one a line, a leading "!" for an inverse match. */
  names: string;
  group_names: string;
  role_names: string;
  fs_paths: string;
  min_size: string;
  max_size: string;
  concurrent_execution: boolean;
  /** In their execution order. */
  actions: RuleAction[];
}

export const emptyRule = (): RuleFields => ({
  name: '',
  description: '',
  enabled: true,
  trigger: 1,
  fs_events: ['upload'],
  provider_events: [],
  provider_objects: [],
  protocols: [],
  event_statuses: [],
  schedules: [],
  idp_login_event: 0,
  names: '',
  group_names: '',
  role_names: '',
  fs_paths: '',
  min_size: '',
  max_size: '',
  concurrent_execution: false,
  actions: [],
});

export const newSchedule = (): Schedule => ({ minute: '0', hour: '*', day_of_week: '*', day_of_month: '*', month: '*' });

export const newRuleAction = (name: string): RuleAction => ({
  name,
  is_failure_action: false,
  stop_on_failure: false,
  execute_sync: false,
  execute_before_file_publish: false,
});

const patternsText = (v: unknown) => (Array.isArray(v) ? v.map((p) => `${(p as Pattern).inverse_match ? '!' : ''}${(p as Pattern).pattern}`).join('\n') : '');
const patternsOf = (text: string): Pattern[] =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => (l.startsWith('!') ? { pattern: l.slice(1), inverse_match: true } : { pattern: l, inverse_match: false }));
const sizeText = (v: unknown) => (typeof v === 'number' && v > 0 ? String(v) : '');
const sizeOf = (text: string): number | string => (text.trim() === '' ? 0 : Number.isFinite(Number(text)) ? Number(text) : text);

/** The form of a rule read from the API (its actions sorted by their order). */
export function ruleFieldsOf(r: {
  name: string;
  description?: string;
  status?: number;
  trigger: number;
  conditions?: unknown;
  actions?: unknown[];
}): RuleFields {
  const c = (r.conditions ?? {}) as Obj;
  const o = (c.options ?? {}) as Obj;
  const arr = <T>(v: unknown) => (Array.isArray(v) ? (v as T[]) : []);
  return {
    name: r.name,
    description: r.description ?? '',
    enabled: r.status !== 0,
    trigger: r.trigger,
    fs_events: arr(c.fs_events),
    provider_events: arr(c.provider_events),
    provider_objects: arr(o.provider_objects),
    protocols: arr(o.protocols),
    event_statuses: arr(o.event_statuses),
    schedules: arr<Schedule>(c.schedules).map((s) => ({ ...newSchedule(), ...s })),
    idp_login_event: Number(c.idp_login_event ?? 0),
    names: patternsText(o.names),
    group_names: patternsText(o.group_names),
    role_names: patternsText(o.role_names),
    fs_paths: patternsText(o.fs_paths),
    min_size: sizeText(o.min_size),
    max_size: sizeText(o.max_size),
    concurrent_execution: o.concurrent_execution === true,
    actions: arr<Obj>(r.actions)
      .map((a, i) => ({ a, order: typeof a.order === 'number' ? a.order : i }))
      .sort((x, y) => x.order - y.order)
      .map(({ a }) => ({ ...newRuleAction(String(a.name)), ...normalizeRelation(a.relation_options) })),
  };
}

function normalizeRelation(v: unknown): Omit<RuleAction, 'name'> {
  const r = (v ?? {}) as Obj;
  return {
    is_failure_action: r.is_failure_action === true,
    stop_on_failure: r.stop_on_failure === true,
    execute_sync: r.execute_sync === true,
    execute_before_file_publish: r.execute_before_file_publish === true,
  };
}

/** The body of POST/PUT /eventrules: only the conditions the trigger uses; the actions' order is their place in the list. */
export function ruleInputOf(f: RuleFields) {
  const t = f.trigger;
  const userPatterns = t === 1 || t === 2 || t === 3 || t === 6 || t === 7;
  const options = {
    names: userPatterns ? patternsOf(f.names) : [],
    group_names: userPatterns ? patternsOf(f.group_names) : [],
    role_names: userPatterns ? patternsOf(f.role_names) : [],
    fs_paths: t === 1 ? patternsOf(f.fs_paths) : [],
    protocols: t === 1 ? f.protocols : [],
    provider_objects: t === 2 ? f.provider_objects : [],
    min_size: t === 1 ? sizeOf(f.min_size) : 0,
    max_size: t === 1 ? sizeOf(f.max_size) : 0,
    event_statuses: t === 1 ? f.event_statuses : [],
    concurrent_execution: t === 3 ? f.concurrent_execution : false,
  };
  return {
    name: f.name.trim(),
    description: f.description,
    status: f.enabled ? 1 : 0,
    trigger: t,
    conditions: {
      fs_events: t === 1 ? f.fs_events : [],
      provider_events: t === 2 ? f.provider_events : [],
      schedules: t === 3 ? f.schedules : [],
      idp_login_event: t === 7 ? f.idp_login_event : 0,
      options,
    },
    actions: f.actions.map((a, i) => ({
      name: a.name,
      order: i + 1,
      relation_options: {
        is_failure_action: a.is_failure_action,
        stop_on_failure: a.stop_on_failure,
        execute_sync: a.execute_sync,
        execute_before_file_publish: a.execute_before_file_publish,
      },
    })),
  };
}

/** A list moved: the item at `from` put at `to` (the rule's action order). */
export function moved<T>(list: T[], from: number, to: number): T[] {
  if (to < 0 || to >= list.length) return list;
  const out = [...list];
  const [x] = out.splice(from, 1);
  out.splice(to, 0, x!);
  return out;
}
