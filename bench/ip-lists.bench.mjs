#!/usr/bin/env node
// IP lists at scale: "which entries contain this address" with many entries,
// against node's net.BlockList on the same networks in the same run, and the
// cost of the allow-list check on every HTTP request. Run from the repository root:
//
//   node bench/ip-lists.bench.mjs            # --count N entries (default 10000), --rounds N lookups (default 200000)
//
// Workloads:
//   lookup    IpNetIndex.lookup (every containing entry, most specific first)  vs  net.BlockList.check (a yes/no answer)
//   request   GET /healthz through hapi inject, allow list on with --count entries  vs  allow list off (the
//             hook still checks the empty defender list): what the allow list adds to a request
// Prints ns/op (or µs/request) and the ratio to the baseline (below 1: faster than the baseline).
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!process.execArgv.includes('--conditions=ferry-src')) {
  const loader = path.join(root, 'node_modules/@tapjs/typescript/dist/esm/import.mjs');
  const r = spawnSync(
    process.execPath,
    [`--import=${loader}`, '--conditions=ferry-src', '--no-warnings', fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
      env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' },
    },
  );
  process.exit(r.status ?? 1);
}

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const COUNT = Number(arg('count', '10000'));
const ROUNDS = Number(arg('rounds', '200000'));

const { IpNetIndex, parseIpNet } = await import(path.join(root, 'core/src/util/ip-net.ts'));
const { createTestApp } = await import(path.join(root, 'core/src/testing.ts'));
const { IpListService } = await import(path.join(root, 'core/src/security/ip-list.service.ts'));

// COUNT entries: IPv4 /24 and /32 networks and IPv6 /48 and /128, deterministic
const nets = [];
for (let i = 0; i < COUNT; i++) {
  const a = 1 + (i % 223);
  const b = (i * 7) % 256;
  const c = (i * 13) % 256;
  if (i % 4 === 0) nets.push(`${a}.${b}.${c}.0/24`);
  else if (i % 4 === 1) nets.push(`${a}.${b}.${c}.${i % 256}/32`);
  else if (i % 4 === 2) nets.push(`2001:db8:${(i % 65536).toString(16)}::/48`);
  else nets.push(`2001:db8:${(i % 65536).toString(16)}::${(i % 9999).toString(16)}/128`);
}
// probes: half inside an entry, half outside
const probes = [];
for (let i = 0; i < 1000; i++) {
  const n = parseIpNet(nets[(i * 37) % nets.length]);
  if (i % 2 === 0)
    probes.push(n.family === 4 ? n.canonical.replace(/\.0\/24$/, '.77').replace(/\/32$/, '') : n.canonical.replace(/::\/48$/, '::1').replace(/\/128$/, ''));
  else probes.push(n.family === 4 ? `250.${i % 256}.1.1` : `2001:db9::${i.toString(16)}`);
}

function time(fn, rounds) {
  for (let i = 0; i < Math.min(rounds, 5000); i++) fn(i); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) fn(i);
  return Number(process.hrtime.bigint() - t0) / rounds;
}

const index = new IpNetIndex();
for (const n of nets) index.add(parseIpNet(n), n);
const bl = new net.BlockList();
for (const n of nets) {
  const p = parseIpNet(n);
  bl.addSubnet(n.split('/')[0], p.prefix, p.family === 4 ? 'ipv4' : 'ipv6');
}
const check = (p) => bl.check(p, net.isIPv4(p) ? 'ipv4' : 'ipv6');
const disagree = probes.filter((p) => index.lookup(p).length > 0 !== check(p));
if (disagree.length) throw new Error(`IpNetIndex and net.BlockList disagree on ${disagree.slice(0, 5).join(', ')}`);
let sink = 0;
const ours = time((i) => (sink += index.lookup(probes[i % probes.length]).length), ROUNDS);
// net.BlockList checks its rules one by one: fewer rounds
const base = time((i) => (sink += check(probes[i % probes.length]) ? 1 : 0), Math.max(1000, Math.floor(ROUNDS / 20)));
console.log(`entries: ${COUNT}, probes: ${probes.length} (half inside an entry; both agree on every probe)`);
console.log(`lookup   IpNetIndex ${ours.toFixed(0)} ns/op   net.BlockList ${base.toFixed(0)} ns/op   ratio ${(ours / base).toFixed(4)}x${sink < 0 ? '' : ''}`);

// HTTP: the check runs before routing on every request
const ta = await createTestApp({ config: { common: { ip_lists_cache_ttl: 3600 } } });
try {
  const REQS = 2000;
  const run = async (ipOf) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < REQS; i++) {
      const r = await ta.server.inject({ method: 'GET', url: '/healthz', remoteAddress: ipOf(i) });
      if (r.statusCode !== 200) throw new Error(`healthz from ${ipOf(i)}: ${r.statusCode}`);
    }
    return Number(process.hrtime.bigint() - t0) / REQS / 1000;
  };
  const conn = ta.app.orm.em.fork().getConnection();
  const now = Date.now();
  for (let i = 0; i < nets.length; i += 500) {
    const values = nets.slice(i, i + 500).map((n) => `(1, '${parseIpNet(n).canonical}', 1, 0, '', ${now}, ${now})`);
    await conn.execute(`insert into ip_lists (type, ipornet, mode, protocols, description, created_at, updated_at) values ${values.join(',')}`);
  }
  await conn.execute(`insert into settings (key, value, updated_at) values ('ip_lists_version', 'bench', ${now})`);
  // as another node's write would be seen once the TTL is over
  ta.app.container.resolve(IpListService).invalidate();
  const inside = probes.filter((_, i) => i % 2 === 0);
  const common = ta.config.common;
  // alternate the two settings (first pass: warm-up), keep the best pass of each
  let on = Infinity;
  let off = Infinity;
  for (let pass = 0; pass < 4; pass++) {
    common.allow_list_status = true;
    const a = await run((i) => inside[i % inside.length]);
    common.allow_list_status = false;
    const b = await run((i) => inside[i % inside.length]);
    if (pass) [on, off] = [Math.min(on, a), Math.min(off, b)];
  }
  console.log(`request  allow list on, ${COUNT} entries ${on.toFixed(1)} µs   allow list off ${off.toFixed(1)} µs   ratio ${(on / off).toFixed(3)}x`);
} finally {
  await ta.close();
}
