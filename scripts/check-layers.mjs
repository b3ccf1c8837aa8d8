#!/usr/bin/env node
// Checks the dependency direction of core/src (GUIDE.md section 1): no import
// cycle between its folders, and no file over 500 lines without a comment
// saying why ("longer than 500 lines: <reason>"). Run by `npm run lint`.
//   node scripts/check-layers.mjs          exit 1 and name each problem
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'core/src');
const MAX_LINES = 500;

function files(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'migrations') out.push(...files(p));
    } else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

// A file directly in core/src belongs to the folder named like it ('app', 'errors'...),
// so that composition roots are checked too; a file in a folder belongs to its top folder.
const unitOf = (file) => path.relative(src, file).split(path.sep)[0].replace(/\.ts$/, '');

function isTypeOnly(clause) {
  if (/^type\b/.test(clause)) return true;
  const braces = clause.match(/^\{([\s\S]*)\}$/);
  if (!braces) return false;
  const names = braces[1]
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith('type '));
}

const problems = [];
const edges = new Map(); // unit -> Map(unit -> example "file -> import")
for (const file of files(src)) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').length;
  if (lines > MAX_LINES && !/longer than 500 lines:/i.test(text)) {
    problems.push(`${path.relative(root, file)}: ${lines} lines and no comment saying why (write "longer than 500 lines: <reason>")`);
  }
  const from = unitOf(file);
  // Value imports only: a type-only import (`import type`, or braces holding only `type` names)
  // is erased at build time and creates no load-order dependency between folders.
  for (const m of text.matchAll(
    /(?:^|\n)\s*(import|export)\s+([^'";]*?)\s*from\s+['"](\.{1,2}\/[^'"]+)['"]|import\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/g,
  )) {
    const spec = m[3] ?? m[4] ?? m[5];
    const clause = m[2] ?? '';
    if (m[3] && isTypeOnly(clause)) continue;
    const target = path.resolve(path.dirname(file), spec);
    if (!target.startsWith(src + path.sep)) continue;
    const to = unitOf(target.replace(/\.js$/, '.ts'));
    if (to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${path.relative(root, file)} -> ${spec}`);
  }
}

// Folder units only: the root files (app, container, index, testing, errors...) are leaves or roots by design.
const isFolder = (u) => {
  try {
    return statSync(path.join(src, u)).isDirectory();
  } catch {
    return false;
  }
};
// Tarjan's strongly connected components over folder units
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const on = new Set();
const sccs = [];
function visit(v) {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  on.add(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!isFolder(w)) continue;
    if (!idx.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const c = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      c.push(w);
    } while (w !== v);
    if (c.length > 1) sccs.push(c);
  }
}
for (const v of [...edges.keys()].filter(isFolder)) if (!idx.has(v)) visit(v);
for (const c of sccs) {
  const set = new Set(c);
  const why = [];
  for (const a of c) for (const [b, ex] of edges.get(a) ?? []) if (set.has(b)) why.push(`  ${a} -> ${b}: ${ex}`);
  problems.push(`import cycle between core/src folders ${c.sort().join(', ')}:\n${why.join('\n')}`);
}

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`core/src layers: ${edges.size} units, no folder cycle, no unexplained file over ${MAX_LINES} lines`);
