import path from 'node:path';
import type { Fs, FileInfo, OpOptions } from '../fs/fs.contract.js';
import { isFsError, FsErrorCode } from '../fs/fs-error.js';
import { baseName, isSubPath, normalizeVirtualPath } from '../fs/path.js';
import type { FsFactory, FsOwner } from './fs-factory.js';
import type { StoredFilesystem } from '../data/entities/index.js';
import type { EffectiveUser, EffectiveVirtualFolder } from '../accounts/effective-user.js';

const DIR_MODE = 0o040755;

/** A filesystem mounted in a user's virtual tree: the user's own at '/', each virtual folder at its virtual_path. */
export interface Mount {
  /** Normalised virtual path of the mount point. */
  vpath: string;
  /** The virtual folder, absent for the user's own filesystem. */
  folder?: EffectiveVirtualFolder;
  filesystem: StoredFilesystem;
  /** Local root (home_dir or mapped_path) for providers that need one. */
  root: string;
}

/** A virtual path resolved onto a mount. */
export interface Resolved {
  vpath: string;
  mount: Mount;
  /** Path inside the mount's Fs ('/' for the mount point itself). */
  fsPath: string;
}

/** The backend path a filesystem event reports: the local file for local providers, the Fs path otherwise. */
export function eventFsPath(r: Resolved): string {
  return r.mount.root ? path.join(r.mount.root, r.fsPath) : r.fsPath;
}

function virtualDirInfo(vpath: string, from?: FileInfo): FileInfo {
  return {
    name: baseName(vpath),
    path: vpath,
    isDir: true,
    size: 0,
    mtime: from?.mtime ?? new Date(),
    mode: from?.isDir ? from.mode : DIR_MODE,
  };
}

/**
 * One user's virtual tree. The user's filesystem is mounted at '/', each
 * virtual folder's at its virtual path; a path belongs to the deepest mount
 * containing it. Fs instances are created lazily, once per mount, and closed
 * by close(). Mount points (and the directories leading to them) always
 * appear as directories, whether or not the parent filesystem has them.
 */
export class VirtualFs {
  /** Deepest first. */
  readonly mounts: Mount[];
  private readonly instances = new Map<Mount, Promise<Fs>>();
  private readonly descriptions = new Map<Mount, Promise<{ bucket?: string; endpoint?: string }>>();
  private readonly sameResources = new Map<string, Promise<boolean>>();
  private readonly owner: FsOwner;

  constructor(
    readonly user: EffectiveUser,
    private readonly factory: FsFactory,
    private readonly connectionId?: string,
  ) {
    this.owner = { username: user.username, role: user.role, custom_placeholders: user.custom_placeholders };
    const mounts: Mount[] = [{ vpath: '/', filesystem: user.filesystem, root: user.home_dir }];
    for (const f of user.virtual_folders) {
      let vpath: string;
      try {
        vpath = normalizeVirtualPath(f.virtual_path);
      } catch {
        continue;
      }
      if (vpath === '/' || mounts.some((m) => m.vpath === vpath)) continue;
      mounts.push({ vpath, folder: f, filesystem: f.filesystem, root: f.mapped_path });
    }
    this.mounts = mounts.sort((a, b) => b.vpath.length - a.vpath.length);
  }

  /** The mount a normalised virtual path belongs to. */
  mountOf(vpath: string): Mount {
    return this.mounts.find((m) => isSubPath(m.vpath, vpath))!;
  }

  resolve(vpath: string): Resolved {
    const mount = this.mountOf(vpath);
    const fsPath = mount.vpath === '/' ? vpath : vpath.slice(mount.vpath.length) || '/';
    return { vpath, mount, fsPath };
  }

  /** The Fs of a mount (created on first use). */
  fs(mount: Mount): Promise<Fs> {
    let p = this.instances.get(mount);
    if (!p) {
      // disable_fs_checks: the home directory and the folders' roots are neither checked nor created
      const skipRootCheck = this.user.filters.disable_fs_checks === true;
      p = this.factory.create(mount.filesystem, mount.root, this.owner, this.connectionId, { skipRootCheck });
      // a failed creation is retried by the next caller
      p.catch(() => this.instances.delete(mount));
      this.instances.set(mount, p);
    }
    return p;
  }

  /** Bucket/endpoint of a mount for filesystem events. */
  describe(mount: Mount): Promise<{ bucket?: string; endpoint?: string }> {
    let p = this.descriptions.get(mount);
    if (!p) {
      p = this.factory.describe(mount.filesystem, this.owner).catch(() => ({}));
      this.descriptions.set(mount, p);
    }
    return p;
  }

  /**
   * True when two different mounts reach the same remote storage, as their provider's
   * `sameResource()` hook decides (false when the providers differ or the provider has
   * no hook). Cross-mount moves and copies between such mounts are done server side.
   */
  sameResource(a: Mount, b: Mount): Promise<boolean> {
    const key = `${this.mounts.indexOf(a)}:${this.mounts.indexOf(b)}`;
    let p = this.sameResources.get(key);
    if (!p) {
      p = (async () => {
        if (a === b) return true;
        if (a.filesystem.provider !== b.filesystem.provider) return false;
        const def = this.factory.provider(a.filesystem.provider);
        if (!def.sameResource) return false;
        const [oa, ob] = await Promise.all([this.factory.options(a.filesystem, this.owner), this.factory.options(b.filesystem, this.owner)]);
        return def.sameResource(oa, ob);
      })().catch(() => false);
      this.sameResources.set(key, p);
    }
    return p;
  }

  /**
   * Names of the virtual directories directly inside `dir`: folder mount
   * points and directories on the way to deeper ones, mapped to the mount
   * when the child is itself a mount point.
   */
  virtualChildren(dir: string): Map<string, Mount | undefined> {
    const out = new Map<string, Mount | undefined>();
    for (const m of this.mounts) {
      if (m.vpath === '/' || m.vpath === dir || !isSubPath(dir, m.vpath)) continue;
      const rest = m.vpath.slice(dir === '/' ? 1 : dir.length + 1);
      const first = rest.split('/')[0]!;
      const isMountPoint = !rest.includes('/');
      if (isMountPoint) out.set(first, m);
      else if (!out.has(first)) out.set(first, undefined);
    }
    return out;
  }

  /** A folder mount point, or a directory leading to one: it cannot be removed, renamed or overwritten. */
  isVirtualDir(vpath: string): boolean {
    return vpath !== '/' && this.mounts.some((m) => m.vpath !== '/' && isSubPath(vpath, m.vpath));
  }

  /** True when a folder is mounted at `vpath` or below it. */
  containsMount(vpath: string): boolean {
    return this.mounts.some((m) => m.vpath !== '/' && isSubPath(vpath, m.vpath));
  }

  /** stat through the tree; virtual directories are reported even when no backend has them. */
  async stat(vpath: string, o?: OpOptions): Promise<FileInfo> {
    const r = this.resolve(vpath);
    const fs = await this.fs(r.mount);
    try {
      const info = await fs.stat(r.fsPath, o);
      if (this.isVirtualDir(vpath)) return virtualDirInfo(vpath, info);
      return { ...info, name: baseName(vpath), path: vpath };
    } catch (err) {
      if ((isFsError(err, FsErrorCode.NotFound) || isFsError(err, FsErrorCode.NotDirectory)) && this.isVirtualDir(vpath)) {
        return virtualDirInfo(vpath);
      }
      throw err;
    }
  }

  /** stat that returns null for a missing path. */
  async statOrNull(vpath: string, o?: OpOptions): Promise<FileInfo | null> {
    try {
      return await this.stat(vpath, o);
    } catch (err) {
      if (isFsError(err, FsErrorCode.NotFound)) return null;
      throw err;
    }
  }

  /**
   * Lists a directory in pages. Virtual directories inside it come first
   * (replacing backend entries of the same name), then the backend's entries.
   * A directory that exists only virtually lists its virtual children.
   */
  async *list(vpath: string, o?: OpOptions & { pageSize?: number }): AsyncGenerator<FileInfo[]> {
    const virtual = this.virtualChildren(vpath);
    const r = this.resolve(vpath);
    const fs = await this.fs(r.mount);
    const first: FileInfo[] = [];
    for (const [name, m] of virtual) {
      const child = vpath === '/' ? `/${name}` : `${vpath}/${name}`;
      let from: FileInfo | undefined;
      if (m) from = await (await this.fs(m)).stat('/', o).catch(() => undefined);
      else from = await fs.stat(r.mount.vpath === '/' ? child : child.slice(r.mount.vpath.length), o).catch(() => undefined);
      first.push(virtualDirInfo(child, from));
    }
    let iter: AsyncIterator<FileInfo[]> | undefined;
    let done = false;
    try {
      try {
        iter = fs.list(r.fsPath, o)[Symbol.asyncIterator]();
        const page = await iter.next();
        if (first.length) yield first;
        if (page.done) return void (done = true);
        yield this.relabel(vpath, page.value, virtual);
      } catch (err) {
        done = true;
        if (isFsError(err, FsErrorCode.NotFound) && (virtual.size > 0 || this.isVirtualDir(vpath))) {
          if (first.length) yield first;
          return;
        }
        throw err;
      }
      for (;;) {
        const page = await iter.next().catch((err: unknown) => {
          done = true;
          throw err;
        });
        if (page.done) return void (done = true);
        yield this.relabel(vpath, page.value, virtual);
      }
    } finally {
      // A consumer that stops early (break, an error, a cut download) ends the
      // backend's listing too, so it closes its directory handle now, not at GC.
      if (!done) await iter?.return?.();
    }
  }

  private relabel(dir: string, page: FileInfo[], virtual: Map<string, unknown>): FileInfo[] {
    const out: FileInfo[] = [];
    for (const e of page) {
      if (virtual.has(e.name)) continue;
      out.push({ ...e, path: dir === '/' ? `/${e.name}` : `${dir}/${e.name}` });
    }
    return out;
  }

  /** Closes every Fs this tree created. */
  async close(): Promise<void> {
    const all = [...this.instances.values()];
    this.instances.clear();
    await Promise.all(all.map((p) => p.then((fs) => fs.close()).catch(() => undefined)));
  }
}
