import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FileInfo, Fs, FsCapabilities, OpOptions, ReadOptions, WriteHandle } from '../fs/fs.contract.js';
import { FsError, FsErrorCode, isFsError } from '../fs/fs-error.js';
import { removeFileCounting, removeTreeCounting } from '../fs/remove-tree.js';
import { FsFactory } from './fs-factory.js';
import { isSubPath, normalizeVirtualPath, parentPath } from '../fs/path.js';
import type { EffectiveUser } from '../accounts/effective-user.js';
import { UserService } from '../accounts/user.service.js';
import { quotaScope, StorageReservation } from './quota-guard.js';
import { pathWriteKey } from './path-write-key.js';
import { PathWrites, QuotaTracker } from './quota-tracker.js';
import { QuotaService } from './quota.service.js';
import { UsageStore } from './usage-store.js';
import { VirtualFs, type Resolved } from './vfs.js';
import { settleAfterBulkWork } from './gc-pacer.js';
import type { UserFileWriteOptions, UserFiles, UserFilesAccess } from '../sdk/user-files.js';

export type { UserFileWriteOptions, UserFiles, UserFilesAccess } from '../sdk/user-files.js';

interface Deps {
  tracker: QuotaTracker;
  pathWrites: PathWrites;
  usage: UsageStore;
  quota: QuotaService;
}

class QuotaMeter extends Transform {
  bytes = 0;
  constructor(private readonly reserve: (n: number) => boolean) {
    super({ highWaterMark: 256 * 1024 });
  }
  /** True once a chunk did not fit in the quota. */
  refused = false;
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    if (!this.reserve(chunk.length)) {
      this.refused = true;
      return cb(new FsError(FsErrorCode.Quota, 'size quota exceeded'));
    }
    this.bytes += chunk.length;
    cb(null, chunk);
  }
}

const child = (r: Resolved, name: string): Resolved => ({
  vpath: r.vpath === '/' ? `/${name}` : `${r.vpath}/${name}`,
  mount: r.mount,
  fsPath: r.fsPath === '/' ? `/${name}` : `${r.fsPath}/${name}`,
});

class VirtualUserFiles implements UserFiles {
  readonly username: string;

  constructor(
    private readonly vfs: VirtualFs,
    private readonly user: EffectiveUser,
    private readonly deps: Deps,
  ) {
    this.username = user.username;
  }

  path(input: string): string {
    return normalizeVirtualPath(input);
  }

  private fsOf(r: Resolved): Promise<Fs> {
    return this.vfs.fs(r.mount);
  }

  private scope(r: Resolved) {
    return quotaScope(this.user, r.mount, this.deps.usage, this.deps.quota);
  }

  private async adjustQuota(r: Resolved, size: number, files: number): Promise<void> {
    if (!size && !files) return;
    const scope = this.scope(r);
    await this.deps.tracker.commit([{ key: scope.key, reserved: [0, 0], applied: [size, files] }], () => scope.write(size, files));
  }

  private notVirtual(vpath: string, what: string): void {
    if (vpath === '/') throw new FsError(FsErrorCode.Permission, `${what} of the root directory is not allowed`, { path: vpath });
    if (this.vfs.isVirtualDir(vpath)) throw new FsError(FsErrorCode.Permission, `${vpath} is a virtual folder: ${what} is not allowed`, { path: vpath });
  }

  stat(vpath: string, o?: OpOptions): Promise<FileInfo> {
    return this.vfs.stat(this.path(vpath), o);
  }

  statOrNull(vpath: string, o?: OpOptions): Promise<FileInfo | null> {
    return this.vfs.statOrNull(this.path(vpath), o);
  }

  list(vpath: string, o?: OpOptions): AsyncGenerator<FileInfo[]> {
    return this.vfs.list(this.path(vpath), o);
  }

  async openRead(vpath: string, o?: ReadOptions): Promise<Readable> {
    const vp = this.path(vpath);
    const info = await this.vfs.stat(vp, o);
    if (info.isDir) throw new FsError(FsErrorCode.IsDirectory, `${vp} is a directory`, { path: vp });
    const r = this.vfs.resolve(vp);
    return (await this.fsOf(r)).openRead(r.fsPath, o);
  }

  async write(vpath: string, source: Readable, o: UserFileWriteOptions = {}): Promise<{ size: number }> {
    try {
      return await this.store(this.path(vpath), source, o);
    } catch (err) {
      // a source never consumed would hold its own resources (an open file, a request) until collected
      if (!source.destroyed) source.destroy();
      throw err;
    }
  }

  private async store(vp: string, source: Readable, o: UserFileWriteOptions): Promise<{ size: number }> {
    if (vp === '/' || this.vfs.isVirtualDir(vp)) throw new FsError(FsErrorCode.IsDirectory, `${vp} is a directory`, { path: vp });
    const existing = await this.vfs.statOrNull(vp, o);
    if (existing?.isDir) throw new FsError(FsErrorCode.IsDirectory, `${vp} is a directory`, { path: vp });
    if (existing && o.overwrite === false) throw FsError.exists(vp);
    const r = this.vfs.resolve(vp);
    const fs = await this.fsOf(r);
    const parent = parentPath(vp);
    if (fs.capabilities.realDirectories || this.vfs.isVirtualDir(parent)) {
      const p = await this.vfs.statOrNull(parent, o);
      if (!p) throw new FsError(FsErrorCode.NotFound, `${parent}: the parent directory does not exist`, { path: parent });
      if (!p.isDir) throw new FsError(FsErrorCode.NotDirectory, `${parent}: not a directory`, { path: parent });
    }
    const storage = new StorageReservation(this.deps.tracker, this.scope(r), existing?.size ?? 0, existing ? 0 : 1);
    await storage.begin(o.size);
    let handle: WriteHandle | undefined;
    const meter = new QuotaMeter((n) => storage.take(n));
    try {
      handle = await fs.openWrite(r.fsPath, { size: o.size, mtime: o.mtime, overwrite: true, signal: o.signal });
      await pipeline(source, meter, handle.stream, ...(o.signal ? [{ signal: o.signal }] : []));
      const result = await handle.done;
      const size = result.size ?? meter.bytes;
      await storage.commit(size);
      return { size };
    } catch (err) {
      if (handle) await handle.abort(err).catch(() => undefined);
      storage.release();
      if (meter.refused) throw new FsError(FsErrorCode.Quota, `${vp}: size quota exceeded: ${storage.scope.label} is used up`, { path: vp });
      throw err;
    }
  }

  async mkdir(vpath: string, o: OpOptions & { parents?: boolean } = {}): Promise<void> {
    const vp = this.path(vpath);
    if (vp === '/' || this.vfs.isVirtualDir(vp)) {
      if (o.parents) return;
      throw FsError.exists(vp);
    }
    const existing = await this.vfs.statOrNull(vp, o);
    if (existing) {
      if (!existing.isDir) throw new FsError(FsErrorCode.NotDirectory, `${vp}: exists and is not a directory`, { path: vp });
      if (o.parents) return;
      throw FsError.exists(vp);
    }
    const r = this.vfs.resolve(vp);
    await (await this.fsOf(r)).mkdir(r.fsPath, { recursive: !!o.parents, signal: o.signal });
  }

  async remove(vpath: string, o: OpOptions = {}): Promise<void> {
    const vp = this.path(vpath);
    this.notVirtual(vp, 'removal');
    const info = await this.vfs.stat(vp, o);
    const r = this.vfs.resolve(vp);
    const fs = await this.fsOf(r);
    if (info.isDir) {
      if (this.vfs.containsMount(vp)) throw new FsError(FsErrorCode.Permission, `${vp} contains a virtual folder: removal is not allowed`, { path: vp });
      const { removed, error } = await removeTreeCounting(fs, r.fsPath, { signal: o.signal });
      settleAfterBulkWork(removed.files);
      await this.adjustQuota(r, -removed.size, -removed.files);
      if (error) throw error;
    } else {
      // in this path's turn, so an upload of this process publishing to it does not come in between
      const removed = await this.deps.pathWrites.removing(pathWriteKey(this.user.id, r), () => removeFileCounting(fs, r.fsPath, info, { signal: o.signal }));
      await this.adjustQuota(r, -removed.size, -removed.files);
    }
  }

  private async twoPaths(src: string, dst: string, what: 'rename' | 'copy', o: OpOptions) {
    const s = this.path(src);
    const d = this.path(dst);
    if (what === 'rename') this.notVirtual(s, 'renaming');
    else if (s === '/') throw new FsError(FsErrorCode.Permission, 'copying the root directory is not allowed');
    this.notVirtual(d, what === 'rename' ? 'replacing' : 'overwriting');
    if (s === d) throw new FsError(FsErrorCode.Invalid, 'the source and the target are the same path');
    const info = await this.vfs.stat(s, o);
    if (info.isDir && isSubPath(s, d)) throw new FsError(FsErrorCode.Invalid, `cannot ${what} ${s} into itself (${d})`);
    if (info.isDir && what === 'rename' && this.vfs.containsMount(s)) {
      throw new FsError(FsErrorCode.Permission, `${s} contains a virtual folder: renaming is not allowed`, { path: s });
    }
    const target = await this.vfs.statOrNull(d, o);
    if (target && (target.isDir || info.isDir)) throw FsError.exists(d);
    const parent = await this.vfs.statOrNull(parentPath(d), o);
    if (!parent) throw FsError.notFound(parentPath(d));
    if (!parent.isDir) throw new FsError(FsErrorCode.NotDirectory, `${parentPath(d)}: not a directory`);
    return { info, target, s: this.vfs.resolve(s), d: this.vfs.resolve(d) };
  }

  async rename(src: string, dst: string, o: OpOptions = {}): Promise<void> {
    const { info, target, s, d } = await this.twoPaths(src, dst, 'rename', o);
    if (s.mount === d.mount) {
      await (await this.fsOf(s)).rename(s.fsPath, d.fsPath, { signal: o.signal });
      if (target) await this.adjustQuota(d, -target.size, -1);
      return;
    }
    const srcFs = await this.fsOf(s);
    const used = info.isDir ? await srcFs.usedSpace(s.fsPath, o) : { size: info.size, files: 1 };
    const res = new StorageReservation(this.deps.tracker, this.scope(d), target?.size ?? 0, target ? used.files - 1 : used.files);
    await res.begin(used.size);
    let onServer = false;
    try {
      onServer = await this.onServer(s, d, 'renameFrom', o);
      if (!onServer) await this.copyAny(s, d, info, o);
    } catch (err) {
      res.release();
      throw err;
    }
    await res.commit(used.size);
    if (!onServer) await srcFs.remove(s.fsPath, { recursive: info.isDir, signal: o.signal });
    await this.adjustQuota(s, -used.size, -used.files);
  }

  async copy(src: string, dst: string, o: OpOptions = {}): Promise<void> {
    const { info, target, s, d } = await this.twoPaths(src, dst, 'copy', o);
    const srcFs = await this.fsOf(s);
    const used = info.isDir ? await srcFs.usedSpace(s.fsPath, o) : { size: info.size, files: 1 };
    const res = new StorageReservation(this.deps.tracker, this.scope(d), target?.size ?? 0, target ? used.files - 1 : used.files);
    await res.begin(used.size);
    try {
      await this.copyAny(s, d, info, o);
    } catch (err) {
      res.release();
      throw err;
    }
    await res.commit(used.size);
  }

  /** Cross-mount move or copy done by the destination backend when both mounts reach the same storage. */
  private async onServer(s: Resolved, d: Resolved, method: 'renameFrom' | 'copyFrom', o: OpOptions): Promise<boolean> {
    if (s.mount === d.mount) return false;
    const dst = await this.fsOf(d);
    if (!dst[method] || !(await this.vfs.sameResource(s.mount, d.mount))) return false;
    try {
      await dst[method]!(await this.fsOf(s), s.fsPath, d.fsPath, { signal: o.signal });
      return true;
    } catch (err) {
      if (isFsError(err, FsErrorCode.NotSupported)) return false;
      throw err;
    }
  }

  private async copyAny(s: Resolved, d: Resolved, info: FileInfo, o: OpOptions): Promise<void> {
    if (!info.isDir) return this.copyFile(s, d, info.size, o);
    const srcFs = await this.fsOf(s);
    await (await this.fsOf(d)).mkdir(d.fsPath, { recursive: true, signal: o.signal });
    for await (const page of srcFs.list(s.fsPath, o)) {
      for (const e of page) await this.copyAny(child(s, e.name), child(d, e.name), e, o);
    }
  }

  private async copyFile(s: Resolved, d: Resolved, size: number, o: OpOptions): Promise<void> {
    const srcFs = await this.fsOf(s);
    if (s.mount === d.mount && srcFs.capabilities.serverSideCopy && srcFs.copy) return srcFs.copy(s.fsPath, d.fsPath, o);
    if (await this.onServer(s, d, 'copyFrom', o)) return;
    const rs = await srcFs.openRead(s.fsPath, o);
    const h = await (await this.fsOf(d)).openWrite(d.fsPath, { size, overwrite: true, signal: o.signal });
    try {
      await pipeline(rs, h.stream, ...(o.signal ? [{ signal: o.signal }] : []));
      await h.done;
    } catch (err) {
      rs.destroy();
      await h.abort(err).catch(() => undefined);
      throw err;
    }
  }

  async chtimes(vpath: string, mtime: Date, o: OpOptions = {}): Promise<void> {
    const vp = this.path(vpath);
    await this.vfs.stat(vp, o);
    const r = this.vfs.resolve(vp);
    const fs = await this.fsOf(r);
    if (!fs.capabilities.settableMtime || !fs.chtimes) throw FsError.notSupported('setting the modification time');
    await fs.chtimes(r.fsPath, mtime, o);
  }

  async metadata(vpath: string, o: OpOptions = {}): Promise<Record<string, string>> {
    const vp = this.path(vpath);
    const r = this.vfs.resolve(vp);
    const fs = await this.fsOf(r);
    if (!fs.metadata) throw FsError.notSupported('reading user metadata');
    return fs.metadata(r.fsPath, o);
  }

  async capabilities(vpath: string): Promise<FsCapabilities> {
    return (await this.fsOf(this.vfs.resolve(this.path(vpath)))).capabilities;
  }

  close(): Promise<void> {
    return this.vfs.close();
  }
}

/** The core's UserFilesAccess (TOKENS.UserFiles): the effective user's tree, as the file API builds it. */
@injectable()
export class UserFilesService implements UserFilesAccess {
  private readonly usage: UsageStore;

  constructor(
    @inject(TOKENS.Orm) orm: MikroORM,
    @inject(FsFactory) private readonly factory: FsFactory,
    @inject(QuotaTracker) private readonly tracker: QuotaTracker,
    @inject(PathWrites) private readonly pathWrites: PathWrites,
    @inject(QuotaService) private readonly quota: QuotaService,
    @inject(UserService) private readonly users: UserService,
  ) {
    this.usage = new UsageStore(orm);
  }

  async open(username: string): Promise<UserFiles> {
    const user = await this.users.findEffectiveUser(username);
    if (!user) throw new FsError(FsErrorCode.NotFound, `user "${username}" does not exist`);
    return new VirtualUserFiles(new VirtualFs(user, this.factory), user, {
      tracker: this.tracker,
      pathWrites: this.pathWrites,
      usage: this.usage,
      quota: this.quota,
    });
  }
}
