#!/usr/bin/env node
// Checks the dependency direction of the sources (GUIDE.md section 1):
// - no import cycle between core/src folders (value imports: the load order between folders);
// - no import circle between files of core/src, plugins/*/src or libs/*/src, type-only imports
//   (`import type`, `export type ... from`, braces of `type` names, `import('...')` types) included:
//   a circle of types still ties the files' contracts together;
// - core/src/sdk (the contracts plugins implement or call) is a leaf: what it imports, directly or
//   not, type-only included, lies in sdk/ or the contract and utility files of SDK_REACHES, never in
//   a domain folder (accounts, vfs, event-manager...): domain classes implement the sdk's interfaces;
// - no file over 500 lines without a comment saying why ("longer than 500 lines: <reason>").
// Run by `npm run lint`.
//   node scripts/check-layers.mjs          exit 1 and name each problem
//   node scripts/check-layers.mjs DIR      the same on another checkout's tree (the script's tests)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
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

/** The source folders checked: core/src and the src/ of every plugin and library package. */
function sourceRoots() {
  const roots = [src];
  for (const kind of ['plugins', 'libs']) {
    const dir = path.join(root, kind);
    if (!existsSync(dir)) continue;
    for (const pkg of readdirSync(dir).sort()) {
      const s = path.join(dir, pkg, 'src');
      if (existsSync(s) && statSync(s).isDirectory()) roots.push(s);
    }
  }
  return roots;
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

/** The relative imports of a file: {spec, typeOnly}. */
function importsOf(text) {
  const out = [];
  for (const m of text.matchAll(
    /(?:^|\n)\s*(import|export)\s+([^'";]*?)\s*from\s+['"](\.{1,2}\/[^'"]+)['"]|import\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/g,
  )) {
    const spec = m[3] ?? m[4] ?? m[5];
    // `import('...')` right after `typeof` or in a type position cannot be told apart cheaply: count it as a value.
    out.push({ spec, typeOnly: Boolean(m[3]) && isTypeOnly(m[2] ?? '') });
  }
  return out;
}

const resolveTs = (file, spec) => path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
const rel = (f) => path.relative(root, f);

/** Tarjan's strongly connected components of `nodes` over `next(node)`; only those of 2 or more. */
function circles(nodes, next) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const out = [];
  function visit(v) {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of next(v)) {
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
      if (c.length > 1) out.push(c);
    }
  }
  for (const v of nodes) if (!idx.has(v)) visit(v);
  return out;
}

const problems = [];
const all = sourceRoots().flatMap(files);
const known = new Set(all);
const fileEdges = new Map(); // file -> Map(file -> {spec, typeOnly})
const edges = new Map(); // core/src unit -> Map(unit -> example "file -> import")
for (const file of all) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').length;
  if (lines > MAX_LINES && !/longer than 500 lines:/i.test(text)) {
    problems.push(`${rel(file)}: ${lines} lines and no comment saying why (write "longer than 500 lines: <reason>")`);
  }
  const out = new Map();
  fileEdges.set(file, out);
  const inCore = file.startsWith(src + path.sep);
  const from = inCore ? unitOf(file) : undefined;
  for (const { spec, typeOnly } of importsOf(text)) {
    const target = resolveTs(file, spec);
    if (known.has(target)) {
      const prev = out.get(target);
      out.set(target, { spec, typeOnly: prev ? prev.typeOnly && typeOnly : typeOnly });
    }
    if (!inCore || !target.startsWith(src + path.sep)) continue;
    const to = unitOf(target);
    if (to === from) continue;
    // Value imports only for the folder order: a type-only import is erased at build time and
    // creates no load-order dependency between folders (file circles below count it).
    if (typeOnly) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${rel(file)} -> ${spec}`);
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
for (const c of circles([...edges.keys()].filter(isFolder), (v) => [...(edges.get(v)?.keys() ?? [])].filter(isFolder))) {
  const set = new Set(c);
  const why = [];
  for (const a of c) for (const [b, ex] of edges.get(a) ?? []) if (set.has(b)) why.push(`  ${a} -> ${b}: ${ex}`);
  problems.push(`import cycle between core/src folders ${c.sort().join(', ')}:\n${why.join('\n')}`);
}

// What core/src/sdk may reach (paths relative to core/src; a trailing / names a folder): the storage
// contract (fs/), the event shapes, the config's types and leaf utilities. Nothing else of core.
const SDK_REACHES = ['sdk/', 'fs/', 'util/', 'config/schema.ts', 'config/oidc.schema.ts', 'secrets/', 'events/event-types.ts', 'tokens.ts', 'errors.ts'];
const sdkMayReach = (f) => SDK_REACHES.some((p) => (p.endsWith('/') ? f.startsWith(path.join(src, p)) : f === path.join(src, p)));
{
  const via = new Map(); // reached file -> the file that imported it first
  const queue = all.filter((f) => f.startsWith(path.join(src, 'sdk') + path.sep));
  for (const f of queue) via.set(f, undefined);
  while (queue.length) {
    const f = queue.shift();
    for (const [to, { spec }] of fileEdges.get(f)) {
      if (via.has(to)) continue;
      via.set(to, f);
      if (!sdkMayReach(to)) {
        problems.push(`core/src/sdk is a leaf, but ${rel(f)} imports ${spec} (${rel(to)}): move the contract into sdk/`);
      } else queue.push(to);
    }
  }
}

for (const c of circles(all, (v) => fileEdges.get(v).keys())) {
  const set = new Set(c);
  const why = [];
  for (const a of [...c].sort())
    for (const [b, { spec, typeOnly }] of fileEdges.get(a)) if (set.has(b)) why.push(`  ${rel(a)} -> ${spec}${typeOnly ? ' (type only)' : ''}`);
  problems.push(`import circle of ${c.length} files:\n${why.join('\n')}`);
}

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(
  `layers: ${all.length} files, ${edges.size} core/src units, no folder cycle, no file circle (type-only included), no unexplained file over ${MAX_LINES} lines`,
);
