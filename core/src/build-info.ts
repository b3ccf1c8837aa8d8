import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildInfo {
  version: string;
  build_date: string;
  commit_hash: string;
}

let cached: BuildInfo | undefined;

/**
 * Version from core's package.json; build date and commit from
 * build-info.json written by `npm run build`, or from git for a source checkout.
 */
export function buildInfo(): BuildInfo {
  if (cached) return cached;
  const here = path.dirname(fileURLToPath(import.meta.url));
  let dir = here;
  let pkgVersion = '0.0.0';
  for (let i = 0; i < 4; i++) {
    const p = path.join(dir, 'package.json');
    if (existsSync(p)) {
      pkgVersion = JSON.parse(readFileSync(p, 'utf8')).version;
      break;
    }
    dir = path.dirname(dir);
  }
  const infoFile = path.join(dir, 'build-info.json');
  if (existsSync(infoFile)) {
    const info = JSON.parse(readFileSync(infoFile, 'utf8')) as Partial<BuildInfo>;
    cached = { version: pkgVersion, build_date: info.build_date ?? '', commit_hash: info.commit_hash ?? '' };
    return cached;
  }
  let commit = process.env.FERRY_COMMIT_HASH ?? '';
  if (!commit) {
    try {
      commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: here, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    } catch {
      commit = 'unknown';
    }
  }
  cached = { version: pkgVersion, build_date: 'dev', commit_hash: commit };
  return cached;
}
