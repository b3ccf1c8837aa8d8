#!/usr/bin/env node
// Writes core/build-info.json (build date and commit) after `tsc -b`; GET /version reports it.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let commit = process.env.FERRY_COMMIT_HASH ?? '';
if (!commit) {
  try {
    commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    commit = 'unknown';
  }
}
const info = { build_date: new Date().toISOString(), commit_hash: commit };
writeFileSync(path.join(root, 'core', 'build-info.json'), JSON.stringify(info, null, 2) + '\n');
console.log(`build info: ${JSON.stringify(info)}`);
