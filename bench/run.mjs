#!/usr/bin/env node
// Runs every benchmark of bench/ (files named *.bench.mjs), one after the
// other, each in its own process with the output passed through; each one
// prints its own figures and ratios against a baseline measured in the same
// run. At the end, the lines of each benchmark that name an aim are printed
// again together (a benchmark that printed none is named). `npm run bench` runs them all; names (or parts of names) select some:
//
//   node bench/run.mjs                  all
//   node bench/run.mjs http-transfer    bench/http-transfer.bench.mjs only
//
// A benchmark that needs the test servers of scripts/servers names them in a
// header line `// bench-servers: s3 azurite sftp` (names of SERVERS in
// bench/lib/backends.mjs). Before the first benchmark, the servers the
// selected benchmarks need are started when they are down (the same scripts
// as scripts/servers/up.sh, under its lock); a benchmark whose server cannot
// be started is reported as FAILED with the reason, and the others still run.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVERS } from './lib/backends.mjs';
import { ensureServers } from './lib/common.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const all = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .sort();
const chosen = filters.length ? all.filter((f) => filters.some((x) => f.includes(x))) : all;
if (chosen.length === 0) {
  console.error(`no benchmark matches ${filters.join(', ')} (have: ${all.join(', ')})`);
  process.exit(2);
}

/** The servers a benchmark declares in its `// bench-servers:` line. */
function serversOf(file) {
  const m = /^\/\/\s*bench-servers:(.*)$/m.exec(readFileSync(path.join(here, file), 'utf8'));
  const names = m
    ? m[1]
        .trim()
        .split(/[\s,]+/)
        .filter(Boolean)
    : [];
  for (const n of names) {
    if (!SERVERS[n]) throw new Error(`${file}: unknown server "${n}" in its bench-servers line (known: ${Object.keys(SERVERS).join(', ')})`);
  }
  return names;
}

const needs = new Map(chosen.map((f) => [f, serversOf(f)]));
const wanted = [...new Set([...needs.values()].flat())];
/** Server name -> why it is unavailable. */
const unavailable = new Map();
if (wanted.length) {
  console.log(`=== test servers for the selected benchmarks: ${wanted.join(', ')}`);
  for (const name of wanted) {
    try {
      await ensureServers([SERVERS[name]]);
    } catch (err) {
      unavailable.set(name, err instanceof Error ? err.message : String(err));
      console.error(`${name}: ${unavailable.get(name)}`);
    }
  }
}

const summary = [];
/** [file, the lines it printed that name an aim]: repeated at the end, so every figure is seen with its aim. */
const figures = [];

/** Runs one benchmark, its output passed through; resolves to its exit status and the lines naming an aim. */
function runBench(f) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(here, f)], { stdio: ['inherit', 'pipe', 'inherit'], cwd: path.resolve(here, '..') });
    const aims = [];
    let partial = '';
    child.stdout.on('data', (d) => {
      process.stdout.write(d);
      const lines = (partial + d).split('\n');
      partial = lines.pop();
      for (const l of lines) if (/\baims?\b/i.test(l)) aims.push(l.trim());
    });
    child.on('close', (code, signal) => {
      if (/\baims?\b/i.test(partial)) aims.push(partial.trim());
      resolve({ status: code ?? signal, aims });
    });
  });
}
for (const f of chosen) {
  const missing = needs.get(f).filter((n) => unavailable.has(n));
  if (missing.length) {
    console.log(`\n=== ${f}: not run, test server ${missing.join(', ')} unavailable`);
    summary.push(`FAILED ${f} (not run: test server ${missing.join(', ')} unavailable; start them with \`bash scripts/servers/up.sh\`)`);
    continue;
  }
  console.log(`\n=== ${f}`);
  const started = Date.now();
  const { status, aims } = await runBench(f);
  const secs = ((Date.now() - started) / 1000).toFixed(0);
  summary.push(`${status === 0 ? 'ok    ' : 'FAILED'} ${f} (${secs} s)`);
  figures.push([f, aims]);
}
console.log('\n=== figures with their aims (the lines of each benchmark naming an aim)');
for (const [f, aims] of figures) {
  console.log(`--- ${f}${aims.length ? '' : ': printed no aim'}`);
  for (const line of aims) console.log(`    ${line}`);
}
console.log('\n=== benchmarks');
for (const line of summary) console.log(line);
process.exit(summary.some((l) => l.startsWith('FAILED')) ? 1 : 0);
