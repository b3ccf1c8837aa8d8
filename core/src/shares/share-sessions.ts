import { inject, injectable } from 'tsyringe';
import type { User } from '../data/entities/index.js';
import type { FileInfo } from '../fs/fs.contract.js';
import { FsError, FsErrorCode } from '../fs/fs-error.js';
import { isSubPath, normalizeVirtualPath } from '../fs/path.js';
import { FileSessions } from '../vfs/file-sessions.service.js';
import type { OpenShareRequest, ServiceShares, ShareSession } from '../sdk/share-sessions.js';
import { canRead, ShareService } from './share.service.js';

const baseName = (p: string) => p.slice(p.lastIndexOf('/') + 1);

/**
 * Shares opened by front-ends (ServiceHost.shares): ShareService.authorize's
 * checks (the same as the REST API's share routes), then a file session of
 * the owner, confined to the shared paths by resolve().
 */
@injectable()
export class ShareSessions implements ServiceShares {
  constructor(
    @inject(ShareService) private readonly shares: ShareService,
    @inject(FileSessions) private readonly sessions: FileSessions,
  ) {}

  async open(o: OpenShareRequest): Promise<ShareSession> {
    const creds = o.credential ? { username: o.credential.username, password: o.credential.password } : {};
    const { share } = await this.shares.authorize(o.id, o.ip, creds, canRead, { protocol: o.protocol });
    const files = await this.sessions.open({
      username: (share.user as User).username,
      ip: o.ip,
      protocol: o.protocol,
      sessionKey: FileSessions.sessionKey([`share:${share.share_id}:${o.ip}:${o.protocol}`]),
      clientVersion: o.clientVersion,
      command: `${o.command ?? 'open'} share ${share.share_id}`,
      signal: o.signal,
    });
    const paths = [...share.paths];
    let dirRoot: string | null = null;
    try {
      if (paths.length === 1) {
        const info = await files.vfs.statOrNull(paths[0]!, { signal: files.signal });
        if (info?.isDir) dirRoot = paths[0]!;
      }
    } catch (err) {
      await files.close();
      throw err;
    }
    const id = share.share_id;
    const shares = this.shares;
    const member = (name: string) => paths.find((p) => baseName(p) === name);
    return {
      id,
      name: share.name,
      files,
      resolve(rel: string): string | null {
        const p = normalizeVirtualPath(rel);
        if (dirRoot !== null) return p === '/' ? dirRoot : dirRoot === '/' ? p : dirRoot + p;
        if (p === '/') return null;
        const slash = p.indexOf('/', 1);
        const name = slash < 0 ? p.slice(1) : p.slice(1, slash);
        const root = member(name);
        if (root === undefined) throw new FsError(FsErrorCode.NotFound, `${p}: not in the share`, { path: p });
        return slash < 0 ? root : root + p.slice(slash);
      },
      relative(vpath: string): string {
        if (dirRoot !== null) return dirRoot === '/' ? vpath : vpath.slice(dirRoot.length) || '/';
        if (vpath === '/') return '/';
        const root = paths.find((r) => isSubPath(r, vpath) && member(baseName(r)) === r);
        if (root === undefined) throw new FsError(FsErrorCode.Escape, `${vpath}: not in the share`);
        return '/' + baseName(root) + vpath.slice(root.length);
      },
      async rootMembers(): Promise<FileInfo[]> {
        if (dirRoot !== null) return [];
        const out: FileInfo[] = [];
        for (const p of paths) {
          if (member(baseName(p)) !== p) continue;
          // a shared path gone or no longer readable by the owner is left out
          const info = await files.stat(p, { signal: files.signal }).catch(() => null);
          if (info) out.push({ ...info, name: baseName(p), path: p });
        }
        return out;
      },
      consume: () => shares.consume(id),
      close: () => files.close(),
    };
  }
}
