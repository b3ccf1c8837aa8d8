import type { ConditionPattern } from './patterns.js';
import type { Schedule } from './cron.js';
import type { CertificateEvent, FsEvent, IdpLoginEvent, IpBlockedEvent, ProviderEvent } from '../events/event-types.js';
import type { Fs, PendingUpload } from '../fs/fs.contract.js';

export type { ConditionPattern } from './patterns.js';
export type { Schedule } from './cron.js';

/** Trigger numbers of EventRule.trigger. */
export const Trigger = {
  Fs: 1,
  Provider: 2,
  Schedule: 3,
  IpBlocked: 4,
  Certificate: 5,
  OnDemand: 6,
  IdpLogin: 7,
} as const;
export const ALL_TRIGGERS = [1, 2, 3, 4, 5, 6, 7];

/** ConditionOptions of a rule, every field present. */
export interface ConditionOptions {
  names: ConditionPattern[];
  group_names: ConditionPattern[];
  role_names: ConditionPattern[];
  fs_paths: ConditionPattern[];
  protocols: string[];
  provider_objects: string[];
  min_size: number;
  max_size: number;
  event_statuses: number[];
  /**
   * Scheduled rules only: every node of a cluster runs the rule at each
   * matching minute. Default false: one node per tick (a database lease).
   */
  concurrent_execution: boolean;
}

/** EventConditions of a rule, every field present. */
export interface EventConditions {
  fs_events: string[];
  provider_events: string[];
  schedules: Schedule[];
  /** 0 any login, 1 user logins, 2 admin logins. */
  idp_login_event: number;
  options: ConditionOptions;
}

/** EventActionOptions of an action inside a rule. */
export interface RelationOptions {
  is_failure_action: boolean;
  stop_on_failure: boolean;
  execute_sync: boolean;
  execute_before_file_publish: boolean;
}

/** A rule as the engine runs it. */
export interface LoadedRule {
  id: number;
  name: string;
  trigger: number;
  conditions: EventConditions;
  actions: LoadedRuleAction[];
}

export interface LoadedRuleAction {
  name: string;
  type: number;
  /** Stored options (secrets encrypted). */
  options: Record<string, unknown>;
  order: number;
  relation: RelationOptions;
}

export interface Initiator {
  user?: { username: string; role: string; email?: string };
  admin?: { username: string; role: string };
}

/** What fired a rule, normalised over the triggers. */
export interface TriggerEvent {
  trigger: number;
  /** Nanoseconds since the epoch. */
  timestamp: number;
  fs?: FsEvent;
  provider?: ProviderEvent;
  ipBlocked?: IpBlockedEvent;
  certificate?: CertificateEvent;
  idp?: IdpLoginEvent;
  /** Minute a scheduled rule fired for (ms). */
  scheduledAt?: number;
  initiator: Initiator;
  /** The user the event concerns, when there is one. */
  username?: string;
  file?: { fs?: Fs; fsPath?: string; pending?: PendingUpload };
}

export const emptyConditionOptions = (): ConditionOptions => ({
  names: [],
  group_names: [],
  role_names: [],
  fs_paths: [],
  protocols: [],
  provider_objects: [],
  min_size: 0,
  max_size: 0,
  event_statuses: [],
  concurrent_execution: false,
});

/** Fills every missing field of stored conditions with its zero value. */
export function normalizeConditions(c: Partial<EventConditions> | undefined): EventConditions {
  const o = (c?.options ?? {}) as Partial<ConditionOptions>;
  return {
    fs_events: c?.fs_events ?? [],
    provider_events: c?.provider_events ?? [],
    schedules: c?.schedules ?? [],
    idp_login_event: c?.idp_login_event ?? 0,
    options: { ...emptyConditionOptions(), ...o },
  };
}

export function normalizeRelation(r: Partial<RelationOptions> | undefined): RelationOptions {
  return {
    is_failure_action: Boolean(r?.is_failure_action),
    stop_on_failure: Boolean(r?.stop_on_failure),
    execute_sync: Boolean(r?.execute_sync),
    execute_before_file_publish: Boolean(r?.execute_before_file_publish),
  };
}
