import { ConflictError, InvalidError, NotFoundError } from '../errors.js';
import { inject, Lifecycle, scoped } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { Logger } from '../logger.js';
import { Folder, User } from '../data/entities/index.js';
import { FsFactory, type FsOwner } from './fs-factory.js';
import { getPath } from '../util/dotted-path.js';
import type { Fs, UsedSpace } from '../fs/fs.contract.js';
import { FsError, FsErrorCode } from '../fs/fs-error.js';
import { UserService } from '../accounts/user.service.js';
import { hasPlaceholders, isMissingPlaceholdersError, type EffectiveUser } from '../accounts/effective-user.js';

export interface QuotaScan {
  username: string;
  start_time: number;
}

export interface FolderQuotaScan {
  name: string;
  start_time: number;
}

interface Running {
  start_time: number;
  /** Role of the scanned user ('' for folders and users without a role). */
  role: string;
  controller: AbortController;
  /** The totals stored, or the scan's error. */
  result: Promise<UsedSpace>;
  /** Settles (never rejects) once the scan is over and cleaned up. */
  done: Promise<void>;
}

/**
 * A folder scan is not tied to a user. Folders whose mapped_path or prefix
 * holds placeholders are refused before this is used, so nothing is
 * interpolated; the placeholders are kept as written should one remain.
 */
const FOLDER_OWNER: FsOwner = {
  username: '%username%',
  role: '%role%',
  custom_placeholders: Array.from({ length: 10 }, (_, i) => `%custom${i + 1}%`),
};

async function walk(fs: Fs, signal: AbortSignal): Promise<UsedSpace> {
  try {
    return await fs.usedSpace('/', { signal });
  } catch (err) {
    // a home directory or prefix that does not exist yet holds nothing
    if (err instanceof FsError && err.code === FsErrorCode.NotFound) return { size: 0, files: 0 };
    throw err;
  }
}

/**
 * Quota scans of this node (one instance per app): walks a user's or a
 * folder's storage with Fs.usedSpace() of the Fs its provider builds (so
 * every backend works) and stores the totals. A scan runs in the background;
 * while it runs, usage updates of the same target answer 409.
 */
@scoped(Lifecycle.ContainerScoped)
export class QuotaScanService {
  private readonly users = new Map<string, Running>();
  private readonly folders = new Map<string, Running>();

  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(FsFactory) private readonly fsFactory: FsFactory,
    @inject(UserService) private readonly userService: UserService,
  ) {}

  isScanningUser(username: string): boolean {
    return this.users.has(username);
  }

  isScanningFolder(name: string): boolean {
    return this.folders.has(name);
  }

  /** Running user scans; `role` limits them to the users of a role (role-scoped admins). */
  listUserScans(role = ''): QuotaScan[] {
    return [...this.users.entries()]
      .filter(([, r]) => !role || r.role === role)
      .map(([username, r]) => ({ username, start_time: r.start_time }))
      .sort((a, b) => a.start_time - b.start_time);
  }

  listFolderScans(): FolderQuotaScan[] {
    return [...this.folders.entries()].map(([name, r]) => ({ name, start_time: r.start_time })).sort((a, b) => a.start_time - b.start_time);
  }

  /**
   * Starts a scan of a user's storage: its own filesystem (home_dir or the
   * provider's prefix), not its virtual folders, except those mapped with
   * quota -1, whose usage counts in the user's. 404 unknown user, 409 when
   * already scanning, 400 when the storage cannot be opened. Returns once the
   * scan is running; `scope` limits visibility for role-scoped admins.
   */
  async startUserScan(username: string, scope: { role?: string } = {}): Promise<void> {
    await this.beginUserScan(username, scope);
  }

  /**
   * Scans a user's storage like startUserScan() and resolves with the
   * stored totals once done (rejects with the scan's error). For callers
   * that need the result, such as the quota reset event action.
   */
  async scanUser(username: string): Promise<UsedSpace> {
    return (await this.beginUserScan(username, {})).result;
  }

  /** Scans a virtual folder's storage like startFolderScan() and resolves with the stored totals once done. */
  async scanFolder(name: string): Promise<UsedSpace> {
    return (await this.beginFolderScan(name)).result;
  }

  private async beginUserScan(username: string, scope: { role?: string }): Promise<Running> {
    if (this.users.has(username)) throw new ConflictError(`a quota scan of user "${username}" is already running`);
    const eff = await this.effectiveUser(username);
    if (scope.role && eff.role !== scope.role) throw new NotFoundError(`user "${username}" not found`);
    if (this.users.has(username)) throw new ConflictError(`a quota scan of user "${username}" is already running`);
    const owner: FsOwner = { username: eff.username, role: eff.role, custom_placeholders: eff.custom_placeholders };
    const targets: Fs[] = [];
    try {
      targets.push(await this.fsFactory.create(eff.filesystem, eff.home_dir, owner));
      for (const vf of eff.virtual_folders) {
        if (vf.quota_size === -1 && vf.quota_files === -1) targets.push(await this.fsFactory.create(vf.filesystem, vf.mapped_path, owner));
      }
    } catch (err) {
      await Promise.all(targets.map((f) => f.close().catch(() => {})));
      throw err;
    }
    return this.run(
      this.users,
      username,
      eff.role,
      async (signal) => {
        let size = 0;
        let files = 0;
        for (const fs of targets) {
          const u = await walk(fs, signal);
          size += u.size;
          files += u.files;
        }
        await this.orm.em.fork().nativeUpdate(User, { id: eff.id }, { used_quota_size: size, used_quota_files: files, last_quota_update: Date.now() });
        this.logger.info({ username, size, files }, 'user quota scan done');
        return { size, files };
      },
      () => Promise.all(targets.map((f) => f.close().catch(() => {}))).then(() => {}),
    );
  }

  /** The user to scan; 400 when its paths need placeholder values it lacks (nothing meaningful to scan). */
  private async effectiveUser(username: string): Promise<EffectiveUser> {
    try {
      return await this.userService.effectiveUser(username);
    } catch (err) {
      if (isMissingPlaceholdersError(err)) throw new InvalidError(err.message);
      throw err;
    }
  }

  /**
   * Starts a scan of a virtual folder's storage. 404 unknown folder, 409
   * when already scanning, 400 for a template folder: one whose mapped_path
   * or prefix holds %username%, %role% or %customN% is a different directory
   * for every user, so there is no single tree to count (its members' usage
   * is counted by their user scans when mapped with quota -1).
   */
  async startFolderScan(name: string): Promise<void> {
    await this.beginFolderScan(name);
  }

  /** The field of a folder that holds placeholders ('mapped_path', 's3config.key_prefix'), or null. */
  private templateField(folder: Folder): string | null {
    if (hasPlaceholders(folder.mapped_path ?? '')) return 'mapped_path';
    const fs = folder.filesystem ?? { provider: 0 };
    const def = this.fsFactory.provider(fs.provider);
    const cfg = (fs[def.configKey] ?? {}) as Record<string, unknown>;
    for (const f of def.placeholderFields ?? []) {
      const v = getPath(cfg, f);
      if (typeof v === 'string' && hasPlaceholders(v)) return `filesystem.${def.configKey}.${f}`;
    }
    return null;
  }

  private async beginFolderScan(name: string): Promise<Running> {
    if (this.folders.has(name)) throw new ConflictError(`a quota scan of folder "${name}" is already running`);
    const folder = await this.orm.em.fork().findOne(Folder, { name });
    if (!folder) throw new NotFoundError(`folder "${name}" not found`);
    if (this.folders.has(name)) throw new ConflictError(`a quota scan of folder "${name}" is already running`);
    const field = this.templateField(folder);
    if (field) {
      throw new InvalidError(
        `folder "${name}" cannot be scanned: its ${field} holds placeholders, so each user has its own directory there (scan the users instead)`,
      );
    }
    const fs = await this.fsFactory.create(folder.filesystem ?? { provider: 0 }, folder.mapped_path, FOLDER_OWNER);
    return this.run(
      this.folders,
      name,
      '',
      async (signal) => {
        const u = await walk(fs, signal);
        await this.orm.em.fork().nativeUpdate(Folder, { id: folder.id }, { used_quota_size: u.size, used_quota_files: u.files, last_quota_update: Date.now() });
        this.logger.info({ folder: name, size: u.size, files: u.files }, 'folder quota scan done');
        return u;
      },
      () => fs.close().catch(() => {}),
    );
  }

  private run(map: Map<string, Running>, key: string, role: string, work: (signal: AbortSignal) => Promise<UsedSpace>, cleanup: () => Promise<void>): Running {
    const controller = new AbortController();
    const entry: Running = { start_time: Date.now(), role, controller, result: Promise.resolve({ size: 0, files: 0 }), done: Promise.resolve() };
    map.set(key, entry);
    entry.result = (async () => {
      // let the request that started the scan answer first
      await new Promise((r) => setImmediate(r));
      try {
        return await work(controller.signal);
      } catch (err) {
        if (controller.signal.aborted) this.logger.debug({ err, target: key }, 'quota scan aborted');
        else this.logger.error({ err, target: key }, 'quota scan failed');
        throw err;
      } finally {
        await cleanup();
        map.delete(key);
      }
    })();
    entry.done = entry.result.then(
      () => undefined,
      () => undefined,
    );
    return entry;
  }

  /** Resolves when no scan is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.users.size || this.folders.size) {
      await Promise.all([...this.users.values(), ...this.folders.values()].map((r) => r.done));
    }
  }

  /** Aborts every running scan and waits (at most `timeoutMs`) for them to stop. */
  async stop(timeoutMs = 5000): Promise<void> {
    for (const r of [...this.users.values(), ...this.folders.values()]) r.controller.abort(new Error('server stopping'));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
  }
}
