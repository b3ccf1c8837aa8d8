#!/usr/bin/env node
// Runs every benchmark of bench/ (files named *.bench.mjs), one after the
// other, each in its own process with the output passed through; each one
// prints its own figures and ratios against a baseline measured in the same
// run. `npm run bench` runs them all; names (or parts of names) select some:
//
//   node bench/run.mjs                  all
//   node bench/run.mjs http-transfer    bench/http-transfer.bench.mjs only
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
const summary = [];
for (const f of chosen) {
  console.log(`\n=== ${f}`);
  const started = Date.now();
  const r = spawnSync(process.execPath, [path.join(here, f)], { stdio: 'inherit', cwd: path.resolve(here, '..') });
  const secs = ((Date.now() - started) / 1000).toFixed(0);
  summary.push(`${r.status === 0 ? 'ok    ' : 'FAILED'} ${f} (${secs} s)`);
}
console.log('\n=== benchmarks');
for (const line of summary) console.log(line);
process.exit(summary.some((l) => l.startsWith('FAILED')) ? 1 : 0);
