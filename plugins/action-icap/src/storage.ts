import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type { UserFiles } from '@ferry/core';
import { baseName, parentPath } from '@ferry/core';

/**
 * Replaces a file's content so that readers see the old bytes or the new
 * ones, never a mix. Backends with atomic uploads publish a write only when
 * it is complete; otherwise the bytes go to a hidden sibling that is renamed
 * over the file (rename is atomic there). A backend with neither is refused.
 * Writes go through the core's user files (storage quota counted).
 */
export async function overwriteAtomically(files: UserFiles, vpath: string, content: Readable, size: number, signal?: AbortSignal): Promise<void> {
  const caps = await files.capabilities(vpath);
  if (caps.atomicUpload) {
    await files.write(vpath, content, { overwrite: true, size, signal });
    return;
  }
  if (!caps.atomicRename) {
    content.destroy();
    throw new Error('this storage backend can neither publish writes atomically nor rename atomically: the file is not overwritten');
  }
  const parent = parentPath(vpath);
  const tmp = `${parent === '/' ? '' : parent}/.${baseName(vpath)}.icap-${crypto.randomBytes(6).toString('hex')}`;
  try {
    await files.write(tmp, content, { overwrite: false, size, signal });
    await files.rename(tmp, vpath, { signal });
  } catch (err) {
    await files.remove(tmp).catch(() => {});
    throw err;
  }
}
