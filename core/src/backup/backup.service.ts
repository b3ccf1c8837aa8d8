import { dropNullMembers } from '../util/lenient.js';
import { InvalidError } from '../errors.js';
import path from 'node:path';
import crypto from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { ProviderEventAction, ProviderObjectType } from '../events/event-types.js';
import { dbLookup, type AccountLookup, type StoredGroupSettings } from '../accounts/account-lookup.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';
import { ConnectionManager } from '../vfs/connection-manager.js';
import { QuotaScanService } from '../vfs/quota-scan.service.js';
import { BackupRegistry, type BackupData, type BackupSection, type RestoreContext, type RestoreMode, type ValidateContext } from './registry.js';

/** Version written into dumps (BackupData.version). */
export const BACKUP_VERSION = 1;

/** DumpDataScopes of the API; a scope is available once a section registers it. */
export const DUMP_SCOPES = ['users', 'folders', 'groups', 'admins', 'api_keys', 'shares', 'actions', 'rules', 'roles', 'ip_lists', 'configs'] as const;

type Obj = Record<string, unknown>;

/** loaddata `scan-quota`: 0 none, 1 every restored user and folder, 2 only users with a quota (and every folder). */
export type ScanQuotaMode = 0 | 1 | 2;

const namesIn = (data: BackupData, key: string, field: string): Map<string, Obj> => {
  const m = new Map<string, Obj>();
  const items = data[key];
  if (Array.isArray(items))
    for (const x of items) if (x && typeof x === 'object' && typeof (x as Obj)[field] === 'string') m.set((x as Obj)[field] as string, x as Obj);
  return m;
};

/** The database as it will be after the restore: backup objects first (existing ones first in mode 1). */
function overlayLookup(db: AccountLookup, data: BackupData, mode: RestoreMode): AccountLookup {
  const roles = namesIn(data, 'roles', 'name');
  const groups = namesIn(data, 'groups', 'name');
  const folders = namesIn(data, 'folders', 'name');
  const users = namesIn(data, 'users', 'username');
  const admins = namesIn(data, 'admins', 'username');
  return {
    role: async (n) => roles.has(n) || db.role(n),
    folder: async (n) => folders.has(n) || db.folder(n),
    user: async (n) => users.has(n) || db.user(n),
    admin: async (n) => admins.has(n) || db.admin(n),
    group: async (n) => {
      const fromBackup = groups.get(n);
      if (!fromBackup) return db.group(n);
      if (mode === 1) {
        const existing = await db.group(n);
        if (existing) return existing;
      }
      return ((fromBackup.user_settings ?? {}) as StoredGroupSettings) ?? {};
    },
  };
}

/**
 * dumpdata / loaddata over the registered sections (BackupRegistry). A
 * restore validates the whole backup (every object through the API's rules)
 * before writing anything, then writes it in one transaction; provider
 * events, disconnections and quota scans follow the commit.
 */
@injectable()
export class BackupService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(BackupRegistry) private readonly registry: BackupRegistry,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
    @inject(ConnectionManager) private readonly connections: ConnectionManager,
    @inject(QuotaScanService) private readonly scans: QuotaScanService,
  ) {}

  /** The backups directory: common.backups_dir, or <data_dir>/backups. */
  backupsDir(): string {
    return path.resolve(this.config.common.backups_dir || path.join(this.config.common.data_dir, 'backups'));
  }

  /** A file name inside the backups directory; anything escaping it is refused. */
  resolveFile(name: string, field: string): string {
    const dir = this.backupsDir();
    if (!name || /[\u0000-\u001f\u007f]/.test(name) || path.isAbsolute(name) || name.replace(/\\/g, '/').split('/').includes('..')) {
      throw new InvalidError(`"${field}" must be a file name relative to the backups directory, without ".." segments`);
    }
    const file = path.resolve(dir, name);
    if (!file.startsWith(dir + path.sep)) throw new InvalidError(`"${field}" must name a file inside the backups directory`);
    return file;
  }

  /** Sections to dump: every registered one, or the requested scopes (400 for a scope no section provides). */
  private sectionsFor(scopes: string[] | undefined) {
    if (!scopes?.length) return this.registry.all();
    return scopes.map((s) => {
      const sec = this.registry.get(s);
      if (!sec) throw new InvalidError(`"scopes": scope "${s}" is not available on this server`);
      return sec;
    });
  }

  async dump(scopes?: string[]): Promise<BackupData> {
    const em = this.orm.em.fork();
    const out: BackupData = {};
    for (const s of this.sectionsFor(scopes).sort((a, b) => a.order - b.order)) out[s.key] = await s.dump(em.fork());
    out.version = BACKUP_VERSION;
    return out;
  }

  /** Writes a dump to a file of the backups directory (mode 0600, replaced atomically). Returns the path relative to the directory. */
  async dumpToFile(name: string, data: BackupData, indent: boolean): Promise<string> {
    const file = this.resolveFile(name, 'output-file');
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify(data, null, indent ? 2 : undefined), { mode: 0o600 });
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return path.relative(this.backupsDir(), file);
  }

  async readFile(name: string): Promise<unknown> {
    const file = this.resolveFile(name, 'input-file');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new InvalidError(`"input-file": backup file "${name}" does not exist`);
      throw err;
    }
    try {
      // a backup file is read as a request body is: null members are absent (util/lenient.ts)
      return dropNullMembers(JSON.parse(text));
    } catch (err) {
      throw new InvalidError(`"input-file": backup file "${name}" is not valid JSON: ${(err as Error).message}`);
    }
  }

  /** Validates a whole backup and restores it in one transaction. */
  async restore(raw: unknown, mode: RestoreMode, scanQuota: ScanQuotaMode, actor: Actor): Promise<{ objects: number }> {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidError('the backup must be a BackupData object');
    const data = raw as BackupData;
    const sections: BackupSection<unknown>[] = [];
    const ignored: string[] = [];
    for (const [key, value] of Object.entries(data)) {
      if (key === 'version') {
        if (value !== undefined && (!Number.isInteger(value) || (value as number) < 0)) throw new InvalidError('"version" must be a non-negative integer');
        continue;
      }
      const sec = this.registry.byKey(key);
      if (!sec) {
        // a member of another revision of BackupData (or a section of a plugin not loaded here):
        // dropped, as unknown members of any request are (util/lenient.ts), and named in the log
        if (value !== null && value !== undefined) ignored.push(key);
        continue;
      }
      if (value === null || value === undefined) continue;
      if (!Array.isArray(value)) throw new InvalidError(`"${key}" must be an array`);
      const names = sec.names(value);
      const seen = new Set<string>();
      for (const [i, n] of names.entries()) {
        if (n && seen.has(n)) throw new InvalidError(`${key}[${i}]: "${n}" appears more than once`);
        seen.add(n);
      }
      sections.push(sec);
    }
    sections.sort((a, b) => a.order - b.order);
    if (ignored.length) this.logger.warn({ ignored }, 'loaddata: members this server does not know were left out of the restore');

    // 1. validate everything, write nothing
    const em = this.orm.em.fork();
    const vctx: ValidateContext = { data, mode, em, lookup: overlayLookup(dbLookup(em), data, mode) };
    const prepared = new Map<string, unknown>();
    for (const s of sections) prepared.set(s.key, await s.validate(data[s.key] as unknown[], vctx));

    // 2. write in one transaction
    const events: [ProviderEventAction, ProviderObjectType, string, Obj][] = [];
    const disconnect = new Set<string>();
    const scanUsers: string[] = [];
    const scanFolders: string[] = [];
    await this.orm.em.fork().transactional(async (tem) => {
      const rctx: RestoreContext = {
        em: tem,
        mode,
        actor,
        event: (a, t, n, d) => events.push([a, t, n, d]),
        disconnect: (u) => void (mode === 2 && disconnect.add(u)),
        scanCandidate: (kind, name, hasQuota) => {
          if (!scanQuota || (kind === 'user' && scanQuota === 2 && !hasQuota)) return;
          (kind === 'user' ? scanUsers : scanFolders).push(name);
        },
      };
      for (const s of sections) await s.restore(prepared.get(s.key), rctx);
    });

    // 3. after the commit
    for (const [a, t, n, d] of events) this.events.emit(a, t, n, d, actor);
    for (const u of disconnect) this.connections.disconnectUser(u);
    for (const u of scanUsers) await this.scans.startUserScan(u).catch((err) => this.logger.warn({ err, username: u }, 'quota scan after restore not started'));
    for (const f of scanFolders)
      await this.scans.startFolderScan(f).catch((err) => this.logger.warn({ err, folder: f }, 'quota scan after restore not started'));
    return { objects: events.length };
  }
}
