#!/usr/bin/env node
// Runs the whole test suite: starts the real servers the tests need, runs
// tap over every package, and ends with a line CI reads:
// "N passed, N failed, N skipped". tap's exit code is kept.
//
//   node scripts/test.mjs                 all packages
//   node scripts/test.mjs core/test/x.ts  only these files or folders
//   FERRY_TEST_DB=postgres node scripts/test.mjs   run against PostgreSQL
//   FERRY_TEST_DB_ONLY=1                   only the files that touch the database
//   FERRY_TEST_LIST=1                      print the chosen files, run nothing
//   FERRY_TEST_USE_DIST=1                  after npm run build: test the build (CI)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

if (process.env.FERRY_SKIP_SERVERS !== '1' && existsSync('scripts/servers/up.sh')) {
  const r = spawnSync('bash', ['scripts/servers/up.sh'], { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('test servers failed to start (scripts/servers/up.sh)');
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
}

let targets = process.argv.slice(2);
if (targets.length === 0) {
  targets = ['core/test', 'test/kit/test', 'test/e2e', 'test/fuzz', 'test/escapes', 'test/cluster', 'test/faults'];
  for (const kind of ['libs', 'plugins']) {
    for (const p of readdirSync(kind)) if (existsSync(`${kind}/${p}/test`)) targets.push(`${kind}/${p}/test`);
  }
  targets = targets.filter((t) => existsSync(t));
}

// Only *.test.ts files are tests (helpers and fixtures next to them are not).
function testFiles(target) {
  if (!statSync(target).isDirectory()) return [target];
  const out = [];
  for (const e of readdirSync(target, { withFileTypes: true })) {
    if (['node_modules', 'dist', 'fixtures'].includes(e.name)) continue;
    const p = path.join(target, e.name);
    if (e.isDirectory()) out.push(...testFiles(p));
    else if (e.name.endsWith('.test.ts')) out.push(p);
  }
  return out.sort();
}
targets = targets.flatMap(testFiles);

// What a test file needs to touch the database: it (or a helper it imports by
// a relative path) opens Ferry's data layer. Only such files depend on the
// database driver; the others (backends, libraries, suites of the test kit)
// give the same result on any database.
const DB_MARKERS = /\b(createTestApp|openOrm|createPgDatabase|usePostgres)\b|FERRY_TEST_DB|@ferry\/core\/testing|src\/testing\.js/;
const dbTouch = new Map();
function touchesDb(file) {
  if (dbTouch.has(file)) return dbTouch.get(file);
  dbTouch.set(file, false); // import cycles
  const text = readFileSync(file, 'utf8');
  let touches = DB_MARKERS.test(text);
  for (const m of text.matchAll(/from\s+'(\.{1,2}\/[^']+)'/g)) {
    if (touches) break;
    const dep = path.join(path.dirname(file), m[1]).replace(/\.js$/, '.ts');
    if (existsSync(dep)) touches = touchesDb(dep);
  }
  dbTouch.set(file, touches);
  return touches;
}

// A file that stores its accounts in the database only as a setting for what
// it checks (the path-escape suites: confinement is the filesystem's) says so
// with this marker and a reason; its result does not depend on the driver.
const DB_INDEPENDENT = /@ferry-test database-independent: \S/;
// A whole package can say the same in its package.json, when its tests check
// what a client sees and the database holds only their accounts, reached
// through core's SDK (whose own tests run on every database):
//   "ferryTest": { "databaseIndependent": "<why>", "databaseDependent": ["test/x.test.ts"] }
// The files in databaseDependent (those checking what the package itself keeps
// in the database) still run on every database.
function packageOf(file) {
  for (let dir = path.dirname(file); dir !== '.' && dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  }
  return null;
}
function packageSaysIndependent(file) {
  const dir = packageOf(file);
  if (!dir) return false;
  const conf = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).ferryTest;
  if (typeof conf?.databaseIndependent !== 'string' || conf.databaseIndependent.trim() === '') return false;
  const own = path.relative(dir, file).split(path.sep).join('/');
  return !(conf.databaseDependent ?? []).includes(own);
}
const dbIndependent = (file) => DB_INDEPENDENT.test(readFileSync(file, 'utf8')) || packageSaysIndependent(file);

// FERRY_TEST_DB_ONLY=1 (set by .ci/run for its PostgreSQL pass): only the
// files that touch the database run again; the rest ran on SQLite already.
if (process.env.FERRY_TEST_DB_ONLY === '1') {
  const all = targets.length;
  targets = targets.filter((f) => touchesDb(f) && !dbIndependent(f));
  console.log(`# database-touching test files: ${targets.length} of ${all} (the others do not depend on the database)`);
}
if (process.env.FERRY_TEST_LIST === '1') {
  // Dry run: the files that would run, one a line.
  for (const t of targets) console.log(t);
  process.exit(0);
}

// After a build (FERRY_TEST_USE_DIST=1, as in CI) the packages' modules load
// from their dist/ (scripts/test-dist-hooks.mjs) instead of being compiled
// again in every test process; these node arguments replace .taprc's, whose
// "ferry-src" condition would point package imports at the sources.
const nodeArgs =
  process.env.FERRY_TEST_USE_DIST === '1'
    ? ['--no-warnings=ExperimentalWarning', `--import=${pathToFileURL(path.join(root, 'scripts/test-dist-register.mjs')).href}`].map((a) => `--node-arg=${a}`)
    : [];
const tapBin = path.join(root, 'node_modules', '.bin', 'tap');
const child = spawn(tapBin, ['--reporter=tap', ...nodeArgs, ...targets], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
let summary = null;
let buf = '';
// Failures are listed again at the end, with the names of the subtests they
// sit in and the first lines of their diagnostics, so that the tail of a long
// run (all a CI record may keep) says what failed.
const failures = [];
// How long each test file took (tap's top-level "ok N - file # time=...ms"):
// the slowest files and each package's total are printed at the end, to
// show where the suite's time goes.
const fileTimes = [];
const subtests = [];
let lastFailure = null; // the failure whose YAML block may follow
let yaml = null; // { indent, key } while inside a YAML block
const SKIPPED_KEYS = new Set(['source', 'compare', 'stack', 'typeName']);
function noteDetail(f, indent, body) {
  if (indent === yaml.indent) yaml.key = body.split(':')[0];
  if (!f || SKIPPED_KEYS.has(yaml.key) || f.detail.length >= 16) return;
  if (yaml.key === 'at') {
    const m = /^(fileName|lineNumber): (.*)$/.exec(body);
    if (m && m[1] === 'fileName') f.at = m[2];
    if (m && m[1] === 'lineNumber') f.detail.push(`at: ${f.at}:${m[2]}`);
    return;
  }
  f.detail.push(' '.repeat(Math.max(0, indent - yaml.indent)) + body.trimEnd());
}
function noteLine(line) {
  const indent = /^ */.exec(line)[0].length;
  const level = Math.floor(indent / 4);
  const body = line.slice(indent);
  if (yaml) {
    if (body === '...' && indent === yaml.indent) yaml = null;
    else if (body !== '') noteDetail(lastFailure, indent, body);
    return;
  }
  if (body === '---') {
    yaml = { indent, key: '' };
    return;
  }
  lastFailure = null;
  const sub = /^# Subtest: (.*)$/.exec(body);
  if (sub) {
    subtests.length = level;
    subtests[level] = sub[1];
    return;
  }
  const top = level === 0 ? /^(?:not )?ok \d+ - (\S+\.test\.ts)\b.*# time=([\d.]+)ms/.exec(body) : null;
  if (top) fileTimes.push([top[1], Number(top[2])]);
  const bad = /^not ok \d+ - (.*?)(?: # .*)?$/.exec(body);
  if (bad) {
    lastFailure = { path: [...subtests.slice(0, level), bad[1]], detail: [] };
    failures.push(lastFailure);
  }
}
child.stdout.on('data', (d) => {
  process.stdout.write(d);
  buf += d.toString();
  const lines = buf.split('\n');
  buf = lines.pop() ?? '';
  for (const line of lines) {
    noteLine(line);
    const m = /^# \{ (total: .*) \}\s*$/.exec(line);
    if (m) {
      summary = {};
      for (const part of m[1].split(',')) {
        const [k, v] = part.split(':').map((s) => s.trim());
        summary[k] = Number(v);
      }
    }
  }
});
child.on('close', (code) => {
  const s = summary ?? { pass: 0, fail: 1 };
  // A failed subtest fails its parents too: only the innermost are listed.
  const key = (f) => f.path.join('\u0000');
  const leaves = failures.filter((f) => !failures.some((g) => g !== f && key(g).startsWith(key(f) + '\u0000')));
  if (leaves.length > 0) {
    console.log(`# failed (${leaves.length}):`);
    for (const f of leaves.slice(0, 50)) {
      console.log(`#   ${f.path.join(' > ')}`);
      for (const d of f.detail) console.log(`#     ${d}`);
    }
  }
  if (fileTimes.length > 1) {
    const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;
    const byPackage = new Map();
    for (const [file, ms] of fileTimes) {
      const pkg = file.split(path.sep).slice(0, 2).join('/');
      byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
    }
    console.log('# time by package (test files run two at a time, so these add up to about twice the wall time):');
    for (const [pkg, ms] of [...byPackage].sort((a, b) => b[1] - a[1])) console.log(`#   ${secs(ms).padStart(9)}  ${pkg}`);
    console.log('# slowest test files:');
    for (const [file, ms] of [...fileTimes].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`#   ${secs(ms).padStart(9)}  ${file}`);
  }
  const skipped = (s.skip ?? 0) + (s.todo ?? 0);
  console.log(`${s.pass ?? 0} passed, ${s.fail ?? 0} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(code ?? 1);
});
