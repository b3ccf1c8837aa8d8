import { LENIENT_INPUT } from '../util/lenient.js';
import type Joi from 'joi';
import type { EntityManager } from '@mikro-orm/core';
import { DomainError, ErrorKind, InvalidError } from '../errors.js';
import type { AccountLookup } from '../accounts/account-lookup.js';
import type { Actor } from '../events/provider-events.service.js';
import type { ProviderEventAction, ProviderObjectType } from '../events/event-types.js';

/**
 * The dumpdata/loaddata contract: what one kind of object in a backup
 * provides, and the helpers sections share. Each domain declares its
 * sections in `<domain>.backup.ts`; `container.ts` registers every
 * BackupSectionSource under BACKUP_SECTIONS and BackupRegistry collects them.
 */

type Obj = Record<string, unknown>;

/** Rows read or written per query by sections that page. */
export const BACKUP_BATCH = 500;

/** loaddata `mode`: 0 add new and update existing, 1 add new only (existing kept), 2 as 0 and disconnect updated users. */
export type RestoreMode = 0 | 1 | 2;

/** BackupData as sent and dumped: one array per section key, plus `version`. */
export type BackupData = Record<string, unknown> & { version?: number };

/** What a section's validate() gets: the whole backup, so references between sections resolve. */
export interface ValidateContext {
  data: BackupData;
  mode: RestoreMode;
  /** Database reads (not in a transaction). */
  em: EntityManager;
  /** Name lookups over the database overlaid with the backup (as it will be after the restore). */
  lookup: AccountLookup;
}

/** What a section's restore() gets: a transaction shared by every section of the restore. */
export interface RestoreContext {
  em: EntityManager;
  mode: RestoreMode;
  actor: Actor;
  /** Provider events are published after the commit. */
  event(action: ProviderEventAction, objectType: ProviderObjectType, name: string, data: Record<string, unknown>): void;
  /** Users to disconnect after the commit (mode 2). */
  disconnect(username: string): void;
  /** Quota scan candidates after the commit (`scan-quota`). */
  scanCandidate(kind: 'user' | 'folder', name: string, hasQuota: boolean): void;
}

/**
 * One kind of object in dumpdata/loaddata. Sections are restored in `order`
 * inside one transaction, after every section validated the whole backup.
 *
 * To add one (event actions and rules, shares, IP lists...):
 *   container.resolve(BackupRegistry).register({ scope: 'actions', key: 'event_actions', order: 70, ... })
 */
export interface BackupSection<P = unknown> {
  /** DumpDataScopes value ('users', 'actions', ...). */
  scope: string;
  /** BackupData key ('users', 'event_actions', ...). */
  key: string;
  /** Restore order: referenced objects first (roles 10, folders 20, groups 30, users 40, admins 50, api_keys 60, event_actions 80, event_rules 90, ip_lists 100). */
  order: number;
  /** Names of the section's objects in a backup (duplicates are refused before validate()). */
  names(items: unknown[]): string[];
  /** Every object in dump form (secrets encrypted, hashes kept), ordered by name. */
  dump(em: EntityManager): Promise<unknown[]>;
  /**
   * Validates every object with the same rules as the API; throws an InvalidError
   * naming the object. Returns what restore() needs; writes nothing.
   */
  validate(items: unknown[], ctx: ValidateContext): Promise<P>;
  /** Writes the validated objects (mode 1 keeps existing ones). */
  restore(prepared: P, ctx: RestoreContext): Promise<void>;
}

/** A domain's backup sections (registered under BACKUP_SECTIONS in container.ts). */
export interface BackupSectionSource {
  sections(): BackupSection<any>[];
}

/** Container token every BackupSectionSource is registered under. */
export const BACKUP_SECTIONS = Symbol.for('ferry.BackupSections');

/** Validates one backup object with an API schema in restore mode; the 400 names the object. */
export function validateItem<T>(key: string, i: number, item: unknown, schema: Joi.Schema, name: string | undefined): T {
  const { value, error } = schema.validate(item, { context: { restore: true }, abortEarly: true, errors: { wrap: { label: '"' } }, ...LENIENT_INPUT });
  if (error) throw new InvalidError(`${key}[${i}]${name ? ` "${name}"` : ''}: ${error.message}`);
  return value as T;
}

/** Runs a semantic check and prefixes its error with the object it is about. */
export async function named<T>(key: string, i: number, name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DomainError && err.kind !== ErrorKind.Unavailable) throw new InvalidError(`${key}[${i}] "${name}": ${err.message}`);
    throw err;
  }
}

/** Existing objects by name, loaded in batches. */
export async function loadByName<T extends object>(
  em: EntityManager,
  entity: new () => T,
  field: string,
  names: string[],
  populate: string[] = [],
): Promise<Map<string, T>> {
  const out = new Map<string, T>();
  for (let i = 0; i < names.length; i += BACKUP_BATCH) {
    const rows = await em.find(entity, { [field]: { $in: names.slice(i, i + BACKUP_BATCH) } } as never, { populate: populate as never });
    for (const r of rows) out.set(String((r as Obj)[field]), r);
  }
  return out;
}

export const nameOf = (field: string) => (x: unknown) => (x && typeof x === 'object' ? String((x as Obj)[field] ?? '') : '');

export interface Item<P> {
  name: string;
  /** mode 1 and the object exists: nothing to write. */
  keep?: boolean;
  prepared?: P;
  /** The object as in the backup, for the provider event. */
  data: Obj;
}

/** Every row of an entity ordered by a field, rendered batch by batch (no query loads the whole table at once). */
export async function dumpPaged<T extends object>(
  em: EntityManager,
  entity: new () => T,
  field: string,
  render: (rows: T[]) => Promise<Obj[]>,
  populate: string[] = [],
): Promise<Obj[]> {
  const out: Obj[] = [];
  let last: string | null = null;
  for (;;) {
    const where = last === null ? {} : { [field]: { $gt: last } };
    const rows: T[] = await em.find(entity, where as never, { orderBy: { [field]: 'ASC' } as never, limit: BACKUP_BATCH, populate: populate as never });
    if (!rows.length) break;
    out.push(...(await render(rows)));
    last = String((rows[rows.length - 1] as Obj)[field]);
    em.clear();
    if (rows.length < BACKUP_BATCH) break;
  }
  return out;
}
