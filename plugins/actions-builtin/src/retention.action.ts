import path from 'node:path';
import { FsError, FsErrorCode, normalizeVirtualPath, type AccountMount, type ActionTypeDef, type FolderRetention } from '@ferry/core';
import { retentionConfigSchema } from './config.schema.js';
import type { PluginHost } from '@ferry/core';
import { USER_OBJECTS, USER_TRIGGERS, targetUsers } from './targets.js';

/** One folder's outcome, as `.RetentionChecks[].Results[]`. */
export interface RetentionResult {
  Path: string;
  Retention: number;
  DeletedFiles: number;
  DeletedSize: number;
  /** Milliseconds. */
  Elapsed: number;
  Info: string;
}

/** One user's check, as `.RetentionChecks[]`. */
export interface RetentionCheckOutput {
  Username: string;
  ActionName: string;
  Type: 'Data retention';
  Results: RetentionResult[];
  Error: string;
}

const under = (p: string, dir: string) => dir === '/' || p === dir || p.startsWith(dir + '/');

/**
 * Walks the user's storage through its Fs instances (any backend) and
 * deletes files older than the retention of the most specific configured
 * folder covering them. Retention 0 keeps a subtree. Empty directories are
 * removed bottom-up when the folder asks for it (the configured folder and
 * mount points themselves are kept).
 */
export class RetentionRun {
  private readonly configs: FolderRetention[];
  /** Virtual folders (AccountMount.folder) in which files were deleted, for their own quota. */
  readonly foldersWithDeletions = new Set<string>();

  constructor(
    folders: FolderRetention[],
    private readonly mounts: AccountMount[],
    private readonly now: number,
    private readonly signal?: AbortSignal,
  ) {
    this.configs = folders.map((f) => ({ ...f, path: normalizeVirtualPath(f.path) }));
  }

  /** The config governing a virtual path: the longest configured folder containing it. */
  private configFor(vp: string): FolderRetention | undefined {
    let best: FolderRetention | undefined;
    for (const c of this.configs) if (under(vp, c.path) && (!best || c.path.length > best.path.length)) best = c;
    return best;
  }

  private mountFor(vp: string): AccountMount | undefined {
    let best: AccountMount | undefined;
    for (const m of this.mounts) if (under(vp, m.virtual_path) && (!best || m.virtual_path.length > best.virtual_path.length)) best = m;
    return best;
  }

  async run(): Promise<RetentionResult[]> {
    const results: RetentionResult[] = [];
    for (const c of this.configs) {
      const started = Date.now();
      const r: RetentionResult = { Path: c.path, Retention: c.retention, DeletedFiles: 0, DeletedSize: 0, Elapsed: 0, Info: '' };
      if (c.retention > 0) {
        // the folder itself, then mounts nested below it that no more specific config claims
        const roots = [c.path, ...this.mounts.map((m) => m.virtual_path).filter((v) => v !== c.path && under(v, c.path) && this.configFor(v) === c)];
        for (const root of roots) {
          try {
            await this.walk(root, c, r, true);
          } catch (err) {
            if (err instanceof FsError && err.code === FsErrorCode.NotFound) continue;
            r.Info = `error: ${(err as Error).message}`;
            throw Object.assign(err as Error, { partial: results.concat(r) });
          }
        }
      } else r.Info = 'retention 0: nothing deleted';
      r.Elapsed = Date.now() - started;
      results.push(r);
    }
    return results;
  }

  /** Walks one directory; returns true when it is empty afterwards. */
  private async walk(vdir: string, c: FolderRetention, r: RetentionResult, isRoot: boolean): Promise<boolean> {
    if (this.signal?.aborted) throw new Error('aborted');
    const mount = this.mountFor(vdir)!;
    const rel = normalizeVirtualPath(path.posix.relative(mount.virtual_path, vdir));
    const cutoff = this.now - c.retention * 3_600_000;
    let remaining = 0;
    for await (const page of mount.fs.list(rel, { signal: this.signal })) {
      for (const e of page) {
        const vp = vdir === '/' ? `/${e.name}` : `${vdir}/${e.name}`;
        const owner = this.configFor(vp);
        const isMountPoint = this.mounts.some((m) => m !== mount && m.virtual_path === vp);
        if (owner !== c || isMountPoint) {
          remaining++; // another folder config or another mount handles it
          continue;
        }
        if (e.isDir) {
          const empty = await this.walk(vp, c, r, false);
          if (empty && c.delete_empty_dirs) await mount.fs.remove(normalizeVirtualPath(path.posix.relative(mount.virtual_path, vp)));
          else remaining++;
        } else if (e.mtime.getTime() < cutoff) {
          await mount.fs.remove(normalizeVirtualPath(path.posix.relative(mount.virtual_path, vp)));
          if (mount.folder) this.foldersWithDeletions.add(mount.folder);
          r.DeletedFiles++;
          r.DeletedSize += e.size;
        } else remaining++;
      }
    }
    return !isRoot && remaining === 0;
  }
}

/** Type 8: data retention check; results are `.RetentionChecks` for later actions of the rule. */
export function retentionAction(s: PluginHost): ActionTypeDef<{ folders: FolderRetention[] }> {
  return {
    type: 8,
    key: 'data-retention',
    optionsKey: 'retention_config',
    optionsSchema: retentionConfigSchema,
    triggers: USER_TRIGGERS,
    providerObjects: USER_OBJECTS,
    create: (options) => ({
      async execute(ctx) {
        const accounts = s.accounts;
        const users = await targetUsers(ctx, accounts);
        const checks: RetentionCheckOutput[] = [];
        const failures: string[] = [];
        for (const u of users) {
          const out: RetentionCheckOutput = { Username: u.username, ActionName: ctx.actionName, Type: 'Data retention', Results: [], Error: '' };
          checks.push(out);
          let end: (() => void) | undefined;
          let mounts: AccountMount[] = [];
          let run: RetentionRun | undefined;
          try {
            end = s.retention.begin(u.username, options.folders);
            mounts = await accounts.mounts(u.username);
            run = new RetentionRun(options.folders, mounts, Date.now(), ctx.signal);
            out.Results = await run.run();
          } catch (err) {
            out.Error = (err as Error).message;
            out.Results = (err as { partial?: RetentionResult[] }).partial ?? out.Results;
            failures.push(`user "${u.username}": ${out.Error}`);
          } finally {
            end?.();
            await Promise.all(mounts.map((m) => m.fs.close().catch(() => {})));
          }
          // quotas follow what was deleted, also by a check that failed part-way
          const deleted = out.Results.reduce((n, x) => n + x.DeletedFiles, 0);
          if (deleted)
            await accounts.rescanUserQuota(u.username).catch((err) => ctx.logger.warn({ err, username: u.username }, 'quota update after retention failed'));
          // virtual folders keep their own used quota (shared by every user mounting them)
          for (const folder of run?.foldersWithDeletions ?? []) {
            await accounts.rescanFolderQuota(folder).catch((err) => ctx.logger.warn({ err, folder }, 'folder quota update after retention failed'));
          }
          if (!out.Error) ctx.logger.info({ username: u.username, deleted }, 'data retention check done');
        }
        if (failures.length) throw Object.assign(new Error(failures.join('; ')), { outputs: { RetentionChecks: checks } });
        return { outputs: { RetentionChecks: checks } };
      },
    }),
  };
}
