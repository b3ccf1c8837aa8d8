import { inject, Lifecycle, scoped } from 'tsyringe';
import type { EntityManager } from '@mikro-orm/core';
import type { AccountLookup } from '../accounts/account-lookup.js';
import type { Actor } from '../events/provider-events.service.js';
import type { ProviderEventAction, ProviderObjectType } from '../events/event-types.js';
import { CoreBackupSections } from './core-sections.js';
import { EventBackupSections } from '../events/events.backup.js';
import { IpListBackupSection } from '../security/ip-lists.backup.js';

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
   * Validates every object with the same rules as the API; throws a Boom 400
   * naming the object. Returns what restore() needs; writes nothing.
   */
  validate(items: unknown[], ctx: ValidateContext): Promise<P>;
  /** Writes the validated objects (mode 1 keeps existing ones). */
  restore(prepared: P, ctx: RestoreContext): Promise<void>;
}

/** The sections of dumpdata/loaddata, one registry per app. */
@scoped(Lifecycle.ContainerScoped)
export class BackupRegistry {
  private readonly sections = new Map<string, BackupSection<any>>();

  constructor(
    @inject(CoreBackupSections) core: CoreBackupSections,
    @inject(EventBackupSections) events: EventBackupSections,
    @inject(IpListBackupSection) ipLists: IpListBackupSection,
  ) {
    for (const s of [...core.sections(), ...events.sections()]) this.register(s);
    this.register(ipLists.section());
  }

  register(section: BackupSection<any>): void {
    if (this.sections.has(section.scope)) throw new Error(`backup section "${section.scope}" is already registered`);
    if (this.all().some((s) => s.key === section.key)) throw new Error(`backup key "${section.key}" is already used`);
    this.sections.set(section.scope, section);
  }

  get(scope: string): BackupSection<any> | undefined {
    return this.sections.get(scope);
  }

  byKey(key: string): BackupSection<any> | undefined {
    return this.all().find((s) => s.key === key);
  }

  /** Every section in restore order. */
  all(): BackupSection<any>[] {
    return [...this.sections.values()].sort((a, b) => a.order - b.order);
  }
}
