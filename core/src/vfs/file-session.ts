import { pipeline } from 'node:stream/promises';
import type { FsEvent, FsEventAction, FsEventStatus, FsObjectType } from '../events/event-types.js';
import type { FileInfo, Fs, UsedSpace } from '../fs/fs.contract.js';
import { FsError, FsErrorCode, isFsError } from '../fs/fs-error.js';
import { removeFileCounting, removeTreeCounting } from '../fs/remove-tree.js';
import { loginProtocolOf, Protocol } from '../sdk/protocols.js';
import { linkedSignal } from '../sdk/signals.js';
import type {
  FileSession as FileSessionApi,
  FileSessionUser,
  SessionQuota,
  SessionOpOptions,
  SessionPermission,
  SessionRead,
  SessionReadOptions,
  SessionWrite,
  SessionWriteOptions,
} from '../sdk/file-session.js';
import { hookError } from './hook-error.js';
import { baseName, isSubPath, normalizeVirtualPath, parentPath } from '../fs/path.js';
import type { Connection } from './connection-manager.js';
import type { EffectiveUser } from '../accounts/effective-user.js';
import { buildFsEvent, FS_STATUS, publishFsEvent, type FsEventSource } from './fs-events.js';
import { PatternFilters, type PatternsFilter } from './patterns.js';
import { anonymousPermissions, PermissionSet, type FilePermission } from './permissions.js';
import { quotaScope, StorageReservation } from './quota-guard.js';
import { pathWriteKey } from './path-write-key.js';
import { VirtualFs, type Resolved } from './vfs.js';
import { openSessionRead, openSessionWrite, truncateFile } from './session-io.js';
import type { FileSessionDeps, SessionCore } from './session-core.js';
import { copiesOnServer, sessionQuota } from './session-space.js';
import { UploadCounters } from './upload-counters.js';
import { settleAfterBulkWork } from './gc-pacer.js';

export type { FileSessionDeps } from './session-core.js';

export interface FileSessionInit {
  user: EffectiveUser;
  ip: string;
  protocol: Protocol;
  conn: Connection;
  /** Fires when the request is gone (client disconnect) or the connection is closed by an admin. */
  signal: AbortSignal;
  /** Removes what feeds `signal` from its sources (called by close()). */
  disposeSignal?: () => void;
  /** Fires `signal` (what abort() calls). */
  abortSignal: (reason: unknown) => void;
  /** The SSH command the session serves: `ssh_cmd` of its filesystem events. */
  sshCommand?: string;
}

const denied = (msg: string) => new FsError(FsErrorCode.Permission, msg);

/** The account's filters.start_directory as a virtual path: '/' when unset, empty or unusable. */
export function startDirectoryOf(filters: Record<string, unknown>): string {
  const v = filters.start_directory;
  if (typeof v !== 'string' || v === '') return '/';
  try {
    return normalizeVirtualPath(v);
  } catch {
    return '/';
  }
}

/**
 * One session's view of a user's files: the virtual tree, the user's
 * permissions, file patterns and restrictions, quota accounting, filesystem
 * events and hooks. Protocol front ends (the REST API, service plugins)
 * translate their input into calls on it (the public side is
 * sdk/file-session.ts); every refusal is an FsError or a domain error, which
 * each front-end maps to its own answers (http/errors.ts for HTTP).
 * close() must be called when the front-end is done with it. Every
 * operation takes an optional signal of its own, linked to the session's.
 *
 * Longer than 500 lines: every file operation of a session (read, write,
 * rename, copy, delete, list, stat, mkdir, chtimes) is one method here with
 * the same permission, pattern, quota, event and hook steps in the same
 * order; the helpers they share (quota-guard, fs-events, vfs) are already
 * apart, and splitting the operations across files would hide that order.
 */
export class FileSession implements FileSessionApi, SessionCore {
  readonly vfs: VirtualFs;
  readonly perms: PermissionSet;
  readonly patterns: PatternFilters;
  readonly user: EffectiveUser;
  readonly ip: string;
  readonly conn: Connection;
  readonly signal: AbortSignal;
  readonly protocol: Protocol;
  readonly deps: FileSessionDeps;
  private readonly eventSource: FsEventSource;
  private readonly disposeSignal: () => void;
  private readonly abortSignal: (reason: unknown) => void;
  private closed = false;

  constructor(deps: FileSessionDeps, init: FileSessionInit) {
    this.deps = deps;
    this.user = init.user;
    this.ip = init.ip;
    this.conn = init.conn;
    this.signal = init.signal;
    this.protocol = init.protocol;
    this.disposeSignal = init.disposeSignal ?? (() => undefined);
    this.abortSignal = init.abortSignal;
    this.vfs = new VirtualFs(init.user, deps.factory, init.conn.connection_id);
    // an anonymous account is read-only whatever its permissions say
    this.perms = new PermissionSet(init.user.filters.is_anonymous === true ? anonymousPermissions(init.user.permissions) : init.user.permissions);
    this.patterns = new PatternFilters(init.user.filters.file_patterns as PatternsFilter[] | undefined);
    this.eventSource = {
      user: init.user,
      vfs: this.vfs,
      ip: init.ip,
      protocol: init.protocol,
      sessionId: init.conn.connection_id,
      instanceId: deps.instanceId,
      sshCommand: init.sshCommand,
    };
  }

  /**
   * Fires the session's signal with `reason`: what the session runs stops
   * (the front-end's client went away). The session still has to be closed.
   */
  abort(reason: unknown): void {
    this.abortSignal(reason);
  }

  get account(): FileSessionUser {
    return { username: this.user.username, homeDir: this.user.home_dir };
  }

  get connectionId(): string {
    return this.conn.connection_id;
  }

  hasPermission(dir: string, ...perms: SessionPermission[]): boolean {
    return this.perms.has(dir, ...(perms as FilePermission[]));
  }

  /**
   * Runs `fn` with the signal of one operation: the session's, or one fired
   * by either the session's or the operation's own (`o.signal`), released
   * when `fn` settles.
   */
  async run<T>(o: SessionOpOptions | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (!o?.signal) return fn(this.signal);
    const linked = linkedSignal(this.signal, o.signal);
    try {
      return await fn(linked.signal);
    } finally {
      linked.dispose();
    }
  }

  // ---- checks -------------------------------------------------------------

  async startDirectory(o?: SessionOpOptions): Promise<string> {
    const configured = startDirectoryOf(this.user.filters);
    if (configured === '/') return '/';
    let reason: string;
    try {
      const info = await this.run(o, (signal) => this.vfs.stat(configured, { signal }));
      if (info.isDir) return configured;
      reason = 'not a directory';
    } catch (err) {
      // a client gone stops here; anything else (missing, unreachable storage) starts the session in '/'
      if (this.signal.aborted || o?.signal?.aborted) throw err;
      reason = (err as Error).message;
    }
    this.deps.logger.warn(
      { user: this.user.username, protocol: this.protocol, start_directory: configured, reason },
      'the start directory is missing or not a directory: the session starts in /',
    );
    return '/';
  }

  /** Parses a client path (both separators, no '..', no encoded dots or separators). */
  path(input: string | undefined | null): string {
    return normalizeVirtualPath(input);
  }

  /**
   * Refuses writes when the account's web client options include
   * write-disabled. Web client options concern the web front-ends only
   * (protocols logging in as HTTP: the REST API, shares): other protocols
   * (SFTP, FTP, WebDAV) write as their permissions allow.
   */
  ensureWritable(): void {
    if (loginProtocolOf(this.protocol) !== loginProtocolOf(Protocol.HTTP)) return;
    const wc = (this.user.filters.web_client as string[] | undefined) ?? [];
    if (wc.includes('write-disabled')) throw denied('write operations are disabled for this account');
  }

  /** Throws 403 unless the permissions of `dir` include `*` or one of `perms`. */
  requirePerm(dir: string, what: string, ...perms: FilePermission[]): void {
    if (this.perms.has(dir, ...perms)) return;
    throw denied(`permission denied: ${what} requires the "${perms.join('" or "')}" permission on ${dir}`);
  }

  /**
   * File patterns: a hidden name behaves as missing (404) for reads and is
   * refused for writes; a denied one is refused (403).
   */
  checkName(vpath: string, mode: 'read' | 'write'): void {
    const v = this.patterns.check(vpath);
    if (v.allowed) return;
    if (v.policy === 1 && mode === 'read') throw FsError.notFound(vpath);
    throw denied(`${vpath}: this file name is not allowed by the account's file patterns`);
  }

  /** A folder mount point (or a directory leading to one) cannot be changed through its parent. */
  private ensureNotVirtual(vpath: string, what: string): void {
    if (vpath === '/') throw denied(`${what} of the root directory is not allowed`);
    if (this.vfs.isVirtualDir(vpath)) throw denied(`${vpath} is a virtual folder: ${what} is not allowed`);
  }

  // ---- events --------------------------------------------------------------

  async event(
    action: FsEventAction,
    target: Resolved,
    o: { to?: Resolved; size?: number; startedAt: number; status?: FsEventStatus; openFlags?: string; objectType?: FsObjectType },
  ): Promise<FsEvent> {
    return buildFsEvent(this.eventSource, {
      action,
      target,
      to: o.to,
      fileSize: o.size,
      startedAt: o.startedAt,
      status: o.status ?? FS_STATUS.Ok,
      openFlags: o.openFlags,
      objectType: o.objectType,
    });
  }

  publish(ev: FsEvent): void {
    publishFsEvent(this.deps.bus, ev);
  }

  /** Publishes a failed operation's event (never throws). */
  async publishFailure(
    action: FsEventAction,
    target: Resolved,
    startedAt: number,
    err: unknown,
    o: { to?: Resolved; size?: number; objectType?: FsObjectType } = {},
  ): Promise<void> {
    try {
      const status = isFsError(err, FsErrorCode.Quota) ? FS_STATUS.QuotaExceeded : FS_STATUS.Error;
      this.publish(await this.event(action, target, { ...o, startedAt, status }));
    } catch (e) {
      this.deps.logger.warn({ err: e }, 'cannot publish a filesystem event');
    }
  }

  /**
   * Runs the sync hooks for a pre-* event (pre-upload, pre-download,
   * pre-delete) before the operation starts: a hook that throws denies it
   * (403). `size` is the size of the file concerned (0 for a new upload).
   * Pre events are not published on the bus.
   */
  async before(action: 'pre-upload' | 'pre-download' | 'pre-delete', target: Resolved, size: number): Promise<void> {
    const ev = await this.event(action, target, { startedAt: Date.now(), size });
    try {
      await this.deps.hooks.runSync({ event: ev, fs: await this.vfs.fs(target.mount), fsPath: target.fsPath });
    } catch (err) {
      throw hookError(err);
    }
  }

  /** Publishes a completed operation's event, then runs the sync hooks (their failure is the client's answer). */
  private async completed(
    action: FsEventAction,
    target: Resolved,
    o: { to?: Resolved; size?: number; startedAt: number; objectType?: FsObjectType },
  ): Promise<void> {
    const ev = await this.event(action, target, o);
    this.publish(ev);
    try {
      await this.deps.hooks.runSync({ event: ev, fs: await this.vfs.fs(target.mount), fsPath: target.fsPath });
    } catch (err) {
      throw hookError(err);
    }
  }

  // ---- directory operations ---------------------------------------------------

  /**
   * A file's or directory's metadata. Needs the list or the download
   * permission on its parent (the root: on itself); a hidden name is
   * missing, a denied one refused, like the other operations.
   */
  stat(vpath: string, o?: SessionOpOptions): Promise<FileInfo> {
    return this.run(o, async (signal) => {
      this.checkName(vpath, 'read');
      this.requirePerm(parentPath(vpath), `reading the attributes of ${vpath}`, 'list', 'download');
      const info = await this.vfs.stat(vpath, { signal });
      return { ...info, name: baseName(vpath), path: vpath };
    });
  }

  /** Lists a directory (hidden names left out). Yields pages; the first page is fetched before returning. */
  async list(vpath: string, o?: SessionOpOptions): Promise<AsyncGenerator<FileInfo[]>> {
    this.checkName(vpath, 'read');
    this.requirePerm(vpath, 'listing', 'list');
    // the operation's signal lives as long as the listing: released when the pages end or the caller stops
    const linked = o?.signal ? linkedSignal(this.signal, o.signal) : undefined;
    const signal = linked?.signal ?? this.signal;
    let pages: AsyncGenerator<FileInfo[]>;
    let first: IteratorResult<FileInfo[]>;
    const notDir = () => new FsError(FsErrorCode.NotDirectory, `${vpath}: not a directory`, { path: vpath });
    try {
      // A backend with real directories refuses a missing path and a file itself (the Fs contract, pinned
      // by the conformance suite): no stat first, but the same answer. A directory with folders mounted
      // in or below it (virtual entries, listed even when the backend has no such directory) is stat'ed.
      const r = this.vfs.containsMount(vpath) ? undefined : this.vfs.resolve(vpath);
      const refusesFiles = r !== undefined && (await this.vfs.fs(r.mount)).capabilities.realDirectories;
      if (!refusesFiles) {
        const info = await this.vfs.stat(vpath, { signal });
        if (!info.isDir) throw notDir();
      }
      pages = this.vfs.list(vpath, { signal });
      first = await pages.next().catch(async (err: unknown) => {
        if (!refusesFiles || !isFsError(err, FsErrorCode.NotDirectory)) throw err;
        // the refusal the stat would have given (which names the component that is not a directory)
        const info = await this.vfs.stat(vpath, { signal });
        throw info.isDir ? err : notDir();
      });
    } catch (err) {
      linked?.dispose();
      throw err;
    }
    const filter = (page: FileInfo[]) => (this.patterns.empty ? page : page.filter((e) => !this.patterns.isHidden(e.path)));
    // a caller that stops early (after the first page, or before taking any) ends the backend's
    // listing too, which holds the directory open (fs-local) until it ends
    let ended = false;
    const end = async () => {
      if (ended) return;
      ended = true;
      linked?.dispose();
      await pages.return(undefined).catch(() => undefined);
    };
    const gen = (async function* () {
      let entries = 0;
      try {
        if (first.done) return;
        entries += first.value.length;
        yield filter(first.value);
        for await (const page of pages) {
          entries += page.length;
          yield filter(page);
        }
      } finally {
        await end();
        settleAfterBulkWork(entries);
      }
    })();
    // return() before the first next() does not run the generator's finally
    const stop = gen.return.bind(gen);
    gen.return = async (value) => {
      const r = await stop(value);
      await end();
      return r;
    };
    return gen;
  }

  /** Creates a directory (and its missing parents with `parents`). */
  mkdir(vpath: string, parents = false, o?: SessionOpOptions): Promise<void> {
    return this.run(o, (signal) => this.mkdirIn(vpath, parents, signal));
  }

  private async mkdirIn(vpath: string, parents: boolean, signal: AbortSignal): Promise<void> {
    const startedAt = Date.now();
    this.ensureWritable();
    this.checkName(vpath, 'write');
    if (vpath === '/' || this.vfs.isVirtualDir(vpath)) {
      if (parents) return;
      throw FsError.exists(vpath);
    }
    const r = this.vfs.resolve(vpath);
    if (parents) {
      // create_dirs is needed where each missing directory is created
      const missing: string[] = [];
      for (let p = vpath; p !== r.mount.vpath && p !== '/'; p = parentPath(p)) {
        const st = await this.vfs.statOrNull(p, { signal: signal });
        if (st) {
          if (!st.isDir) throw new FsError(FsErrorCode.NotDirectory, `${p}: not a directory`, { path: p });
          break;
        }
        missing.push(p);
      }
      if (missing.length === 0) return;
      for (const p of missing) {
        this.checkName(p, 'write');
        this.requirePerm(parentPath(p), `creating ${p}`, 'create_dirs');
      }
    } else {
      this.requirePerm(parentPath(vpath), `creating ${vpath}`, 'create_dirs');
      if (await this.vfs.statOrNull(vpath, { signal: signal })) throw FsError.exists(vpath);
    }
    const fs = await this.vfs.fs(r.mount);
    try {
      await fs.mkdir(r.fsPath, { recursive: parents, signal: signal });
    } catch (err) {
      await this.publishFailure('mkdir', r, startedAt, err);
      throw err;
    }
    await this.completed('mkdir', r, { startedAt });
  }

  /** Removes a file (not a directory). */
  removeFile(vpath: string, o?: SessionOpOptions): Promise<void> {
    return this.run(o, (signal) => this.removeFileIn(vpath, signal));
  }

  private async removeFileIn(vpath: string, signal: AbortSignal): Promise<void> {
    const startedAt = Date.now();
    this.ensureWritable();
    this.ensureNotVirtual(vpath, 'removal');
    this.checkName(vpath, 'read');
    this.checkName(vpath, 'write');
    const info = await this.vfs.stat(vpath, { signal: signal });
    if (info.isDir) throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory: remove it as a directory`, { path: vpath });
    this.requirePerm(parentPath(vpath), `removing ${vpath}`, 'delete', 'delete_files');
    const r = this.vfs.resolve(vpath);
    const fs = await this.vfs.fs(r.mount);
    await this.before('pre-delete', r, info.size);
    let removed: UsedSpace;
    try {
      // in this path's turn, so an upload of this process publishing to it does not come in between
      removed = await this.deps.pathWrites.removing(pathWriteKey(this.user.id, r), () => removeFileCounting(fs, r.fsPath, info, { signal }));
    } catch (err) {
      await this.publishFailure('delete', r, startedAt, err, { size: info.size });
      throw err;
    }
    await this.adjustQuota(r, -removed.size, -removed.files);
    await this.completed('delete', r, { startedAt, size: info.size });
  }

  /** Removes a directory and everything in it. */
  removeDir(vpath: string, o?: SessionOpOptions): Promise<void> {
    return this.run(o, (signal) => this.removeDirIn(vpath, signal));
  }

  private async removeDirIn(vpath: string, signal: AbortSignal): Promise<void> {
    const startedAt = Date.now();
    this.ensureWritable();
    this.ensureNotVirtual(vpath, 'removal');
    if (this.vfs.containsMount(vpath)) throw denied(`${vpath} contains a virtual folder: removal is not allowed`);
    this.checkName(vpath, 'read');
    this.checkName(vpath, 'write');
    const info = await this.vfs.stat(vpath, { signal: signal });
    if (!info.isDir) throw new FsError(FsErrorCode.NotDirectory, `${vpath} is not a directory: remove it as a file`, { path: vpath });
    this.requirePerm(parentPath(vpath), `removing ${vpath}`, 'delete', 'delete_dirs');
    for (const p of this.perms.pathsBelow(vpath)) this.requirePerm(p, `removing ${vpath}`, 'delete');
    const r = this.vfs.resolve(vpath);
    const fs = await this.vfs.fs(r.mount);
    const { removed, error } = await removeTreeCounting(fs, r.fsPath, { signal: signal });
    settleAfterBulkWork(removed.files);
    await this.adjustQuota(r, -removed.size, -removed.files);
    if (error) {
      await this.publishFailure('rmdir', r, startedAt, error);
      throw error;
    }
    await this.completed('rmdir', r, { startedAt, size: removed.size });
  }

  /** Moves the used counters of a mount's quota scope (deletes: no reservation needed). */
  async adjustQuota(r: Resolved, size: number, files: number): Promise<void> {
    if (!size && !files) return;
    const scope = quotaScope(this.user, r.mount, this.deps.usage, this.deps.quota);
    await this.deps.tracker.commit([{ key: scope.key, reserved: [0, 0], applied: [size, files] }], () => scope.write(size, files));
  }

  // ---- rename / copy ----------------------------------------------------------

  private async prepareTwoPaths(src: string, dst: string, what: 'rename' | 'copy', signal: AbortSignal) {
    this.ensureWritable();
    if (what === 'rename') this.ensureNotVirtual(src, 'renaming');
    else if (src === '/') throw denied('copying the root directory is not allowed');
    this.ensureNotVirtual(dst, what === 'rename' ? 'replacing' : 'overwriting');
    if (src === dst) throw new FsError(FsErrorCode.Invalid, 'the source and the target are the same path');
    this.checkName(src, 'read');
    this.checkName(dst, 'write');
    const info = await this.vfs.stat(src, { signal: signal });
    if (info.isDir && isSubPath(src, dst)) throw new FsError(FsErrorCode.Invalid, `cannot ${what} ${src} into itself (${dst})`);
    if (info.isDir && what === 'rename' && this.vfs.containsMount(src)) {
      throw denied(`${src} contains a virtual folder: renaming is not allowed`);
    }
    const target = await this.vfs.statOrNull(dst, { signal: signal });
    if (target?.isDir) throw FsError.exists(dst);
    if (target && info.isDir) throw FsError.exists(dst);
    const parent = await this.vfs.statOrNull(parentPath(dst), { signal: signal });
    if (!parent) throw FsError.notFound(parentPath(dst));
    if (!parent.isDir) throw new FsError(FsErrorCode.NotDirectory, `${parentPath(dst)}: not a directory`);
    return { info, target, s: this.vfs.resolve(src), d: this.vfs.resolve(dst) };
  }

  /** Renames or moves a file or directory, also across virtual folders (then the data is copied, then removed). */
  rename(src: string, dst: string, o?: SessionOpOptions): Promise<void> {
    return this.run(o, (signal) => this.renameIn(src, dst, signal));
  }

  private async renameIn(src: string, dst: string, signal: AbortSignal): Promise<void> {
    const startedAt = Date.now();
    const { info, target, s, d } = await this.prepareTwoPaths(src, dst, 'rename', signal);
    const kind: FilePermission = info.isDir ? 'rename_dirs' : 'rename_files';
    const objectType: FsObjectType = info.isDir ? 'directory' : 'file';
    this.requirePerm(parentPath(src), `renaming ${src}`, 'rename', kind);
    this.requirePerm(parentPath(dst), `renaming to ${dst}`, 'rename', kind);
    if (target) this.requirePerm(parentPath(dst), `replacing ${dst}`, 'overwrite');
    if (info.isDir) {
      for (const p of this.perms.pathsBelow(src)) this.requirePerm(p, `renaming ${src}`, 'rename', 'rename_dirs');
    }
    try {
      if (s.mount === d.mount) {
        const fs = await this.vfs.fs(s.mount);
        await fs.rename(s.fsPath, d.fsPath, { signal: signal });
        if (target) await this.adjustQuota(d, -target.size, -1);
      } else {
        await this.crossMove(s, d, info, target, signal);
      }
    } catch (err) {
      await this.publishFailure('rename', s, startedAt, err, { to: d, size: info.size, objectType });
      throw err;
    }
    await this.completed('rename', s, { to: d, startedAt, size: info.isDir ? 0 : info.size, objectType });
  }

  private async crossMove(s: Resolved, d: Resolved, info: FileInfo, target: FileInfo | null, signal: AbortSignal): Promise<void> {
    const srcFs = await this.vfs.fs(s.mount);
    const used = info.isDir ? await srcFs.usedSpace(s.fsPath, { signal: signal }) : { size: info.size, files: 1 };
    const res = new StorageReservation(
      this.deps.tracker,
      quotaScope(this.user, d.mount, this.deps.usage, this.deps.quota),
      target?.size ?? 0,
      target ? used.files - 1 : used.files,
    );
    await res.begin(used.size);
    let movedOnServer = false;
    try {
      movedOnServer = await this.moveOnServer(s, d, signal);
      if (!movedOnServer) {
        if (info.isDir) await this.copyTree(s, d, signal);
        else await this.copyFile(s, d, info.size, signal);
      }
    } catch (err) {
      res.release();
      throw err;
    }
    await res.commit(used.size);
    if (!movedOnServer) await srcFs.remove(s.fsPath, { recursive: info.isDir, signal: signal });
    await this.adjustQuota(s, -used.size, -used.files);
  }

  /**
   * The destination Fs of a cross-mount operation when both mounts reach the same
   * remote storage (provider hook `sameResource`) and `method` is implemented.
   */
  private async peerOnServer(s: Resolved, d: Resolved, method: 'renameFrom' | 'copyFrom'): Promise<{ src: Fs; dst: Fs } | undefined> {
    if (s.mount === d.mount) return undefined;
    const dst = await this.vfs.fs(d.mount);
    if (!dst[method] || !(await this.vfs.sameResource(s.mount, d.mount))) return undefined;
    return { src: await this.vfs.fs(s.mount), dst };
  }

  /** Moves across mounts server side when the backend can; false when the data must be streamed. */
  private async moveOnServer(s: Resolved, d: Resolved, signal: AbortSignal): Promise<boolean> {
    const peer = await this.peerOnServer(s, d, 'renameFrom');
    if (!peer) return false;
    try {
      await peer.dst.renameFrom!(peer.src, s.fsPath, d.fsPath, { signal: signal });
      return true;
    } catch (err) {
      if (isFsError(err, FsErrorCode.NotSupported)) return false;
      throw err;
    }
  }

  /** Copies a file or a directory tree. */
  copy(src: string, dst: string, o?: SessionOpOptions): Promise<void> {
    return this.run(o, (signal) => this.copyIn(src, dst, signal));
  }

  private async copyIn(src: string, dst: string, signal: AbortSignal): Promise<void> {
    const { info, target, s, d } = await this.prepareTwoPaths(src, dst, 'copy', signal);
    this.requirePerm(parentPath(src), `copying ${src}`, 'copy');
    this.requirePerm(parentPath(dst), `copying to ${dst}`, 'copy');
    if (target) this.requirePerm(parentPath(dst), `replacing ${dst}`, 'overwrite');
    const srcFs = await this.vfs.fs(s.mount);
    const used = info.isDir ? await srcFs.usedSpace(s.fsPath, { signal: signal }) : { size: info.size, files: 1 };
    const res = new StorageReservation(
      this.deps.tracker,
      quotaScope(this.user, d.mount, this.deps.usage, this.deps.quota),
      target?.size ?? 0,
      target ? used.files - 1 : used.files,
    );
    await res.begin(used.size);
    try {
      if (info.isDir) await this.copyTree(s, d, signal);
      else await this.copyFile(s, d, info.size, signal);
    } catch (err) {
      res.release();
      throw err;
    }
    await res.commit(used.size);
  }

  copiesOnServer(src: string, dst: string): Promise<boolean> {
    return copiesOnServer(this, src, dst);
  }

  quota(vpath: string, o?: SessionOpOptions): Promise<SessionQuota> {
    return this.run(o, async () => {
      // the stored usage includes the session's own deferred uploads
      await this.counters?.flush();
      return sessionQuota(this, vpath);
    });
  }

  private counters?: UploadCounters;

  uploadCounters(): UploadCounters {
    this.counters ??= new UploadCounters((err) => this.deps.logger.warn({ err }, 'cannot store the quota and transfer counters of uploads'));
    return this.counters;
  }

  /** Copies one file: server side within one mount when the backend can, streamed otherwise. */
  async copyFile(s: Resolved, d: Resolved, size: number | undefined, signal: AbortSignal): Promise<void> {
    const srcFs = await this.vfs.fs(s.mount);
    const dstFs = await this.vfs.fs(d.mount);
    if (s.mount === d.mount && srcFs.capabilities.serverSideCopy && srcFs.copy) {
      await srcFs.copy(s.fsPath, d.fsPath, { signal: signal });
      return;
    }
    const peer = await this.peerOnServer(s, d, 'copyFrom');
    if (peer) {
      try {
        await peer.dst.copyFrom!(peer.src, s.fsPath, d.fsPath, { signal: signal });
        return;
      } catch (err) {
        if (!isFsError(err, FsErrorCode.NotSupported)) throw err;
      }
    }
    const rs = await srcFs.openRead(s.fsPath, { signal: signal });
    const h = await dstFs.openWrite(d.fsPath, { size, overwrite: true, signal: signal });
    try {
      await pipeline(rs, h.stream, { signal: signal });
      await h.done;
    } catch (err) {
      rs.destroy();
      await h.abort(err).catch(() => undefined);
      throw err;
    }
  }

  /** Copies a directory tree entry by entry (target created first). */
  private async copyTree(s: Resolved, d: Resolved, signal: AbortSignal): Promise<void> {
    const srcFs = await this.vfs.fs(s.mount);
    const dstFs = await this.vfs.fs(d.mount);
    await dstFs.mkdir(d.fsPath, { recursive: true, signal: signal });
    for await (const page of srcFs.list(s.fsPath, { signal: signal })) {
      for (const e of page) {
        const cs: Resolved = { vpath: `${s.vpath}/${e.name}`, mount: s.mount, fsPath: s.fsPath === '/' ? `/${e.name}` : `${s.fsPath}/${e.name}` };
        const cd: Resolved = { vpath: `${d.vpath}/${e.name}`, mount: d.mount, fsPath: d.fsPath === '/' ? `/${e.name}` : `${d.fsPath}/${e.name}` };
        if (e.isDir) await this.copyTree(cs, cd, signal);
        else await this.copyFile(cs, cd, e.size, signal);
      }
    }
  }

  // ---- transfers (transfers.ts, session-io.ts) -----------------------------------

  openRead(vpath: string, o?: SessionReadOptions): Promise<SessionRead> {
    return openSessionRead(this, vpath, o);
  }

  openWrite(vpath: string, o?: SessionWriteOptions): Promise<SessionWrite> {
    return openSessionWrite(this, vpath, o);
  }

  truncate(vpath: string, size: number, o?: SessionOpOptions): Promise<void> {
    return this.run(o, (signal) => truncateFile(this, vpath, size, signal));
  }

  /** The key of the storage provider of a resolved path, for messages ("s3", "crypt"). */
  backendName(r: Resolved): string {
    try {
      return this.deps.factory.provider(r.mount.filesystem.provider).key;
    } catch {
      return `provider ${r.mount.filesystem.provider}`;
    }
  }

  // ---- metadata -----------------------------------------------------------------

  /** Sets a file's modification time. */
  setMtime(vpath: string, mtime: Date, o?: SessionOpOptions): Promise<void> {
    return this.run(o, (signal) => this.setMtimeIn(vpath, mtime, signal));
  }

  private async setMtimeIn(vpath: string, mtime: Date, signal: AbortSignal): Promise<void> {
    this.ensureWritable();
    this.checkName(vpath, 'read');
    this.checkName(vpath, 'write');
    this.requirePerm(parentPath(vpath), `changing the times of ${vpath}`, 'chtimes');
    await this.vfs.stat(vpath, { signal: signal });
    const r = this.vfs.resolve(vpath);
    const fs = await this.vfs.fs(r.mount);
    if (!fs.capabilities.settableMtime || !fs.chtimes) throw FsError.notSupported('setting the modification time', this.backendName(r));
    await fs.chtimes(r.fsPath, mtime, { signal: signal });
  }

  /** Releases the backends and the connection; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.vfs.close();
    } finally {
      this.disposeSignal();
      this.deps.connections.release(this.conn);
      // the deferred counters of the finished uploads (one still running joins later, stored by the timer)
      await this.counters?.flush();
    }
  }
}
