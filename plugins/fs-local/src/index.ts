import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { FsError, FsErrorCode, definePlugin, fsErrorFromNode, packageInfo, type FsProviderDef, type FsScope } from '@ferry/core';
import { mibToBytes, osFsConfigSchema, pluginConfigSchema, type OsFsConfig } from './config.schema.js';
import { LOCAL_CAPABILITIES, LocalFs, type LocalFsOptions } from './local.fs.js';
import { cleanUploadsTmp, processUploadsTmpDir, uploadsTmpDir } from './temp-area.js';

export { LocalFs, LOCAL_CAPABILITIES, DEFAULT_BUFFER_SIZE } from './local.fs.js';
export type { LocalFsOptions, OpenedFile } from './local.fs.js';
export { LocalRoot, DirHandle, refuseReserved, type Located, type ResolveMode } from './confine.js';
export { closeHeldDirs, heldDirCount, HELD_DIR_IDLE_MS } from './held-dirs.js';
export { type WriteEncoder, queuedUploadBytes, GROWN_WRITE_QUEUE, WRITE_QUEUE_BUDGET } from './atomic-upload.js';
export {
  UPLOADS_TMP_DIR,
  uploadsTmpDir,
  processUploadsTmpDir,
  cleanUploadsTmp,
  HIDDEN_TMP_PREFIX,
  HIDDEN_TMP_STALE_MS,
  isReservedName,
  claimHiddenTmp,
  sweepHiddenTmp,
  type HiddenTmp,
} from './temp-area.js';
export { osFsConfigSchema, bufferSizeSchema, mibToBytes, type OsFsConfig } from './config.schema.js';

const pkg = packageInfo(import.meta.url);

/**
 * Checks the scope of a local-root provider and returns the LocalFs options
 * for it, creating the root if it does not exist yet (as a home directory is
 * created at first login), unless the account skips those checks
 * (`scope.skipRootCheck`: filters.disable_fs_checks). Shared with fs-crypt.
 */
export async function localFsOptions(scope: FsScope, buffers: { read_buffer_size?: number; write_buffer_size?: number }): Promise<LocalFsOptions> {
  if (!scope.root) {
    throw new FsError(FsErrorCode.Invalid, `a local filesystem needs a root directory (home_dir or mapped_path) for ${scope.username}`);
  }
  const root = path.resolve(scope.root);
  if (!scope.skipRootCheck) await ensureRoot(root);
  return {
    root,
    tempDir: processUploadsTmpDir(scope.dataDir),
    readBufferSize: mibToBytes(buffers.read_buffer_size),
    writeBufferSize: mibToBytes(buffers.write_buffer_size),
    logger: scope.logger,
  };
}

/** Roots created or found lately, with when to check again (ms since the epoch). */
const knownRoots = new Map<string, number>();
/** How long a root found is not checked again: an Fs is created for every session (every HTTP request). */
export const ROOT_CHECK_INTERVAL_MS = 10_000;

/** Creates `root` when missing; a root seen within ROOT_CHECK_INTERVAL_MS is not checked again. */
async function ensureRoot(root: string): Promise<void> {
  const now = Date.now();
  if ((knownRoots.get(root) ?? 0) > now) return;
  await mkdir(root, { recursive: true }).catch((err: unknown) => {
    throw fsErrorFromNode(err, '/');
  });
  if (knownRoots.size >= 10_000) {
    for (const [r, until] of knownRoots) if (until <= now) knownRoots.delete(r);
    if (knownRoots.size >= 10_000) knownRoots.clear();
  }
  knownRoots.set(root, now + ROOT_CHECK_INTERVAL_MS);
}

/** Provider 0: the local filesystem. */
export const localFsProvider: FsProviderDef<OsFsConfig> = {
  provider: 0,
  key: 'local',
  configKey: 'osconfig',
  optionsSchema: osFsConfigSchema,
  secretFields: [],
  requiresLocalRoot: true,
  capabilities: LOCAL_CAPABILITIES,
  async create(options, scope) {
    return new LocalFs(await localFsOptions(scope, options ?? {}));
  },
};

export default definePlugin<Record<string, never>>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: pluginConfigSchema,
  async register(ctx) {
    const removed = await cleanUploadsTmp(ctx.dataDir);
    if (removed > 0) ctx.logger.info({ removed, dir: uploadsTmpDir(ctx.dataDir) }, 'removed what uploads interrupted by a crash left');
    ctx.registerFsProvider(localFsProvider);
  },
});
