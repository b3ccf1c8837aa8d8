import { ConflictError, NotFoundError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { Folder, User } from '../data/entities/index.js';
import type { AdminIdentity } from '../auth/credentials.js';
import type { EffectiveUser, EffectiveVirtualFolder } from '../accounts/effective-user.js';
import { QuotaScanService } from './quota-scan.service.js';
import { CounterWrites } from './counter-writes.js';

export type UsageMode = 'add' | 'reset';

export interface QuotaUsage {
  used_quota_size?: number;
  used_quota_files?: number;
}

export interface TransferQuotaUsage {
  used_upload_data_transfer?: number;
  used_download_data_transfer?: number;
}

/** One CounterWrites per database: every QuotaService of an app shares its batches. */
const writers = new WeakMap<MikroORM, CounterWrites>();

/** The counter writes of a database (one per ORM: the changes of every service of the process share their commits). */
export function counterWritesOf(orm: MikroORM): CounterWrites {
  let w = writers.get(orm);
  if (!w) writers.set(orm, (w = new CounterWrites(orm)));
  return w;
}

function checkDelta(name: string, v: number): number {
  if (!Number.isSafeInteger(v)) throw new RangeError(`${name} must be a safe integer (got ${v})`);
  return v;
}

/**
 * Used-quota and transfer counters of users and folders. Every change is an
 * atomic SQL update (`col = col + ?`, clamped at 0), so uploads, deletes and
 * scans on any number of nodes never lose an increment; the changes arriving
 * together are summed per row and stored in one transaction (CounterWrites).
 */
@injectable()
export class QuotaService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(QuotaScanService) private readonly scans: QuotaScanService,
  ) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  private writes(): CounterWrites {
    return counterWritesOf(this.orm);
  }

  /**
   * Adds to a user's used quota (negative deltas decrement, the result never
   * goes below 0) and stamps last_quota_update. Call it after every upload
   * (+size, +1 file; an overwrite adds newSize - oldSize and 0 files),
   * delete (-size, -1) of the user's own storage. For files inside a virtual
   * folder use addUsage(), which also updates the folder.
   */
  async addUserUsage(userId: number, sizeDelta: number, filesDelta: number): Promise<void> {
    checkDelta('sizeDelta', sizeDelta);
    checkDelta('filesDelta', filesDelta);
    if (!sizeDelta && !filesDelta) return;
    await this.writes().add('users', userId, 'usage', sizeDelta, filesDelta);
  }

  /** Adds to a virtual folder's used quota; same rules as addUserUsage(). */
  async addFolderUsage(folderId: number, sizeDelta: number, filesDelta: number): Promise<void> {
    checkDelta('sizeDelta', sizeDelta);
    checkDelta('filesDelta', filesDelta);
    if (!sizeDelta && !filesDelta) return;
    await this.writes().add('folders', folderId, 'usage', sizeDelta, filesDelta);
  }

  /**
   * Records a change of stored data where it counts: a file outside virtual
   * folders counts for the user; inside a folder it counts for the folder,
   * and also for the user when the folder is mapped with quota -1 (counted
   * in the user's quota). `folder` is the EffectiveVirtualFolder the path
   * belongs to, or null for the user's own storage.
   */
  async addUsage(
    user: Pick<EffectiveUser, 'id'>,
    folder: Pick<EffectiveVirtualFolder, 'folder_id' | 'quota_size' | 'quota_files'> | null,
    sizeDelta: number,
    filesDelta: number,
  ): Promise<void> {
    if (!folder) return this.addUserUsage(user.id, sizeDelta, filesDelta);
    // both in one batch
    const ofUser = folder.quota_size === -1 && folder.quota_files === -1 ? this.addUserUsage(user.id, sizeDelta, filesDelta) : Promise.resolve();
    await Promise.all([this.addFolderUsage(folder.folder_id, sizeDelta, filesDelta), ofUser]);
  }

  /**
   * Adds transferred bytes to a user's data-transfer counters (uploads and
   * downloads, bytes; never below 0). Call it when a transfer ends, with the
   * bytes actually moved, also for failed or aborted transfers. With
   * `linger` (downloads) the change may wait up to COUNTERS_LINGER_MS for
   * others, to share their commit (CounterWrites).
   */
  async addTransfer(userId: number, upBytes: number, downBytes: number, o: { linger?: boolean } = {}): Promise<void> {
    checkDelta('upBytes', upBytes);
    checkDelta('downBytes', downBytes);
    if (!upBytes && !downBytes) return;
    await this.writes().add('users', userId, 'transfer', upBytes, downBytes, o);
  }

  /** Stores the counter changes not stored yet (lingering ones included): before a reset of them, and when the server stops. */
  async flushCounters(): Promise<void> {
    await this.writes().flush();
  }

  /** Sets a user's used quota (a scan's result or a reset). */
  async setUserUsage(userId: number, size: number, files: number, em: EntityManager = this.em()): Promise<void> {
    await em.nativeUpdate(User, { id: userId }, { used_quota_size: Math.max(0, size), used_quota_files: Math.max(0, files), last_quota_update: Date.now() });
  }

  async setFolderUsage(folderId: number, size: number, files: number, em: EntityManager = this.em()): Promise<void> {
    await em.nativeUpdate(
      Folder,
      { id: folderId },
      { used_quota_size: Math.max(0, size), used_quota_files: Math.max(0, files), last_quota_update: Date.now() },
    );
  }

  private async user(username: string, caller: AdminIdentity | null): Promise<{ id: number }> {
    const user = await this.em().findOne(User, { username, ...(caller?.role ? { role: { name: caller.role } } : {}) }, { fields: ['id', 'username'] });
    if (!user) throw new NotFoundError(`user "${username}" not found`);
    return user;
  }

  /** PUT /quotas/users/{username}/usage. 409 while a scan of the user runs. */
  async updateUserUsage(username: string, u: QuotaUsage, mode: UsageMode, caller: AdminIdentity): Promise<void> {
    const user = await this.user(username, caller);
    if (this.scans.isScanningUser(username)) throw new ConflictError(`a quota scan of user "${username}" is running`);
    const size = u.used_quota_size ?? 0;
    const files = u.used_quota_files ?? 0;
    if (mode === 'add') await this.addUserUsage(user.id, size, files);
    else await this.setUserUsage(user.id, size, files);
  }

  /** PUT /quotas/users/{username}/transfer-usage (`caller` null: the system). 409 while a scan of the user runs. */
  async updateUserTransfer(username: string, u: TransferQuotaUsage, mode: UsageMode, caller: AdminIdentity | null): Promise<void> {
    const user = await this.user(username, caller);
    if (this.scans.isScanningUser(username)) throw new ConflictError(`a quota scan of user "${username}" is running`);
    // downloads' lingering counters belong before the new figures, not added after them
    if (mode !== 'add') await this.flushCounters();
    const up = u.used_upload_data_transfer ?? 0;
    const down = u.used_download_data_transfer ?? 0;
    if (mode === 'add') await this.addTransfer(user.id, up, down);
    else await this.em().nativeUpdate(User, { id: user.id }, { used_upload_data_transfer: up, used_download_data_transfer: down });
  }

  /** PUT /quotas/folders/{name}/usage. 409 while a scan of the folder runs. */
  async updateFolderUsage(name: string, u: QuotaUsage, mode: UsageMode): Promise<void> {
    const folder = await this.em().findOne(Folder, { name }, { fields: ['id', 'name'] });
    if (!folder) throw new NotFoundError(`folder "${name}" not found`);
    if (this.scans.isScanningFolder(name)) throw new ConflictError(`a quota scan of folder "${name}" is running`);
    const size = u.used_quota_size ?? 0;
    const files = u.used_quota_files ?? 0;
    if (mode === 'add') await this.addFolderUsage(folder.id, size, files);
    else await this.setFolderUsage(folder.id, size, files);
  }
}
