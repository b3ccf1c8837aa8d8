// Module resolve hooks for test runs after a build (FERRY_TEST_USE_DIST=1,
// as .ci/run does): a workspace package's own modules (core/src/x.ts,
// plugins/fs-s3/config.schema.ts, ...) load from what the build emitted
// (core/dist/src/x.js) instead of being compiled again by tap's TypeScript
// loader in every test process, which took about 5 s of CPU per test file.
// The test files and their helpers stay TypeScript (fixtures are found next
// to them). scripts/test.mjs loads scripts/test-dist-register.mjs with
// --import, which registers these hooks; package
// imports (@ferry/core, ...) already resolve to dist without the "ferry-src"
// condition, so sources and build output are never mixed in one process.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Directories of the workspace packages (those the build emits a dist/ for). */
const packages = [path.join(root, 'core'), path.join(root, 'test', 'kit')];
for (const kind of ['libs', 'plugins']) {
  for (const name of readdirSync(path.join(root, kind))) packages.push(path.join(root, kind, name));
}

/** Newest modification time (ms) of a package's TypeScript sources, tests and build output left out. */
function newestSource(dir) {
  let newest = 0;
  const walk = (d, top) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (top && ['test', 'dist', 'node_modules'].includes(e.name)) continue;
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full, false);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  walk(dir, true);
  return newest;
}

const checked = new Set();

/**
 * Throws when a package's build is older than its sources: tsc -b writes
 * dist/tsconfig.tsbuildinfo on every build that saw a change (and refreshes
 * its time when the sources changed in time only), so a source newer than it
 * was never built. Checked once per package and process.
 */
export function checkBuildCurrent(dir) {
  if (checked.has(dir)) return;
  const info = path.join(dir, 'dist', 'tsconfig.tsbuildinfo');
  const built = existsSync(info) ? statSync(info).mtimeMs : 0;
  if (newestSource(dir) > built) {
    throw new Error(`the build of ${path.relative(root, dir) || dir} is older than its sources: run npm run build first, or test without FERRY_TEST_USE_DIST`);
  }
  checked.add(dir);
}

/** The build's file for a package's source file (not its tests), or null. */
function distOf(file) {
  if (!file.endsWith('.ts') || file.endsWith('.d.ts')) return null;
  for (const dir of packages) {
    if (!file.startsWith(dir + path.sep)) continue;
    const rel = file.slice(dir.length + 1);
    if (/^(test|dist|node_modules)\//.test(rel)) return null;
    checkBuildCurrent(dir);
    const out = path.join(dir, 'dist', rel.replace(/\.ts$/, '.js'));
    if (!existsSync(out))
      throw new Error(
        `${path.relative(root, file)} has no build output (${path.relative(root, out)}): run npm run build first, or test without FERRY_TEST_USE_DIST`,
      );
    return out;
  }
  return null;
}

export async function resolve(specifier, context, nextResolve) {
  const r = await nextResolve(specifier, context);
  if (!r.url.startsWith('file:')) return r;
  const url = new URL(r.url);
  const file = fileURLToPath(url);
  const out = distOf(file);
  if (!out) {
    // a package imported by name resolves to its build already: the build must be current too
    const owner = packages.find((dir) => file.startsWith(path.join(dir, 'dist') + path.sep));
    if (owner) checkBuildCurrent(owner);
    return r;
  }
  // the query and fragment stay (tap's mockImport marks a mocked module's URL with its query)
  const dist = pathToFileURL(out);
  dist.search = url.search;
  dist.hash = url.hash;
  return { ...r, url: dist.href, format: 'module' };
}
