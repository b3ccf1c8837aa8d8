import { mkdir, opendir, rm } from 'node:fs/promises';
import path from 'node:path';

/** Folder under the node's data directory where uploads in progress are written. */
export const UPLOADS_TMP_DIR = 'uploads-tmp';

export function uploadsTmpDir(dataDir: string): string {
  return path.join(dataDir, UPLOADS_TMP_DIR);
}

/**
 * Empties `<dataDir>/uploads-tmp` (creating it if needed, mode 0700). Run
 * when the plugin registers, before any upload can start: whatever is there
 * was left by a process that died mid-upload. Returns how many entries were
 * removed.
 */
export async function cleanUploadsTmp(dataDir: string): Promise<number> {
  const dir = uploadsTmpDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let removed = 0;
  for await (const entry of await opendir(dir)) {
    await rm(path.join(dir, entry.name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}
