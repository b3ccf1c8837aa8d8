import { mkdtemp, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * A new writable directory on another device than `near` (from
 * `FERRY_TEST_XDEV_DIR`, `/dev/shm` or `/run/shm`), for tests of moves across
 * devices (EXDEV), or undefined when this machine has none. The caller removes it.
 */
export async function otherDeviceDir(near: string): Promise<string | undefined> {
  const here = (await stat(near)).dev;
  for (const candidate of [process.env.FERRY_TEST_XDEV_DIR, '/dev/shm', '/run/shm']) {
    if (!candidate) continue;
    try {
      if ((await stat(candidate)).dev === here) continue;
      return await mkdtemp(path.join(candidate, 'ferry-xdev-'));
    } catch {
      continue;
    }
  }
  return undefined;
}
