import type { SessionQuota } from '../sdk/file-session.js';
import { quotaScope } from './quota-guard.js';
import type { SessionCore } from './session-core.js';

/**
 * What a front-end may ask about the storage behind a session's paths
 * (sdk/file-session.ts): the quota a path counts against and whether a copy
 * stays on the storage. Kept apart from file-session.ts, whose methods call
 * these.
 */

/** The quota scope of `vpath` (the user's, or its virtual folder's own) with the stored usage. */
export async function sessionQuota(s: SessionCore, vpath: string): Promise<SessionQuota> {
  const r = s.vfs.resolve(vpath);
  const scope = quotaScope(s.user, r.mount, s.deps.usage, s.deps.quota);
  const [size, files] = await scope.read();
  const limit = (n: number) => (n > 0 ? n : 0);
  return { size: { limit: limit(scope.limits[0]), used: size }, files: { limit: limit(scope.limits[1]), used: files } };
}

/** True when a copy of the file `src` to `dst` would not stream through Ferry (FileSession.copyFile's choice). */
export async function copiesOnServer(s: SessionCore, src: string, dst: string): Promise<boolean> {
  const from = s.vfs.resolve(src);
  const to = s.vfs.resolve(dst);
  const srcFs = await s.vfs.fs(from.mount);
  if (from.mount === to.mount) return srcFs.capabilities.serverSideCopy && typeof srcFs.copy === 'function';
  const dstFs = await s.vfs.fs(to.mount);
  return typeof dstFs.copyFrom === 'function' && (await s.vfs.sameResource(from.mount, to.mount));
}
