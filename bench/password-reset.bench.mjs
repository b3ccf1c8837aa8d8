#!/usr/bin/env node
// Forgot-password answers in the same time whether or not the account exists
// (core/src/auth/password-reset.service.ts: the account lookup and the mail
// happen after the answer). Run from the repository root:
//
//   node bench/password-reset.bench.mjs          # --rounds N (default 300)
//
// A real app (SQLite in memory, fs-local) listening on 127.0.0.1 in a child
// process; the client and an smtp-server receiving the codes in this one (a
// client in the server's process would wait for the server's background work
// before reading its answer). Each round sends, in
// alternating order, POST /api/v2/users/{known}/forgot-password (one of 10 users
// with an email: a code is mailed) and POST /api/v2/users/{unknown}/forgot-password
// over HTTP (fetch, keep-alive) and times each answer, in two phases:
// isolated (each request sent once the previous one's background work, the
// lookup and the mail, which start 100-200 ms after the answer, is done:
// the mail received and 300 ms more for
// either kind: what the server does before answering) and
// back to back (the mails of the known account are sent while the next
// requests are served, slowing whichever request comes next). Prints median,
// p90 and mean per kind and the ratios known / unknown (aim for isolated:
// 1.00 within noise), the same for the server's own time of each answer
// (arrival to the response's finish, both phases together and each: free of
// the client's scheduling on a shared machine; aim 1.00) and the server's CPU
// time for each answer of the isolated phase (cpu_isolated: the work before
// the answer, the figure least moved by a busy machine), with each ratio of
// medians a bootstrap 95% interval (ratio_median_95: how far noise alone
// moves it), the load average, the mails received (one per known request)
// and writes bench/results/password-reset.json.
import { spawnSync } from 'node:child_process';
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
  return Number(i >= 0 ? process.argv[i + 1] : dflt);
};
const ROUNDS = arg('rounds', 300);
const WARMUP = 20;
const KNOWN = 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (process.argv.includes('--serve')) {
  // the server: prints its URL, runs until its stdin closes
  const { createTestApp } = await import(path.join(root, 'core/src/testing.ts'));
  const ta = await createTestApp({
    plugins: [{ name: '@ferry/fs-local' }],
    config: {
      smtp: { host: '127.0.0.1', port: arg('smtp-port', 25) },
      // 10 known users, used in turn: at most 100 codes each per window
      password_reset: { max_requests_per_host: 100_000, max_codes_per_account: 100 },
    },
  });
  await ta.app.start();
  // server-side time of each forgot-password answer: from the request's arrival to the response's finish
  // (the answer written), free of the client's scheduling; printed as JSON when stdin closes
  // in arrival order (the requests are sequential): the client splits them by phase
  const serverMs = [];
  ta.server.ext('onRequest', (request, h) => {
    const m = /^\/api\/v2\/users\/([^/]+)\/forgot-password$/.exec(request.path);
    if (m) {
      const t0 = process.hrtime.bigint();
      const cpu0 = process.cpuUsage();
      request.raw.res.once('finish', () => {
        const cpu = process.cpuUsage(cpu0);
        serverMs.push({ known: m[1].startsWith('known-'), ms: Number(process.hrtime.bigint() - t0) / 1e6, cpuMs: (cpu.user + cpu.system) / 1000 });
      });
    }
    return h.continue;
  });
  const admin = await ta.adminToken();
  for (let k = 0; k < KNOWN; k++) {
    const u = await ta.inject('POST', '/api/v2/users', {
      token: admin,
      payload: {
        username: `known-${k}`,
        password: 'known-password-1',
        email: `known-${k}@example.com`,
        permissions: { '/': ['*'] },
        home_dir: path.join(ta.dataDir, `known-${k}`),
      },
    });
    if (u.statusCode !== 201) throw new Error(`user: ${u.statusCode} ${u.payload}`);
  }
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${ta.server.info.port}` }) + '\n');
  process.stdin.resume();
  await new Promise((r) => process.stdin.on('end', r));
  process.stdout.write(JSON.stringify({ serverMs }) + '\n');
  await ta.close();
  process.exit(0);
}

const { spawn } = await import('node:child_process');
const { SMTPServer } = await import('smtp-server');
const { writeResults } = await import(path.join(root, 'bench/lib/common.mjs'));

let mails = 0;
const smtp = new SMTPServer({
  secure: false,
  disabledCommands: ['STARTTLS'],
  authOptional: true,
  logger: false,
  onData(stream, _session, cb) {
    stream.resume();
    stream.on('end', () => {
      mails++;
      cb();
    });
  },
});
await new Promise((r) => smtp.listen(0, '127.0.0.1', r));
const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--serve', '--smtp-port', String(smtp.server.address().port)], {
  stdio: ['pipe', 'pipe', 'inherit'],
  env: process.env,
});
let childOut = '';
child.stdout.on('data', (d) => (childOut += d));
const url = await new Promise((resolve, reject) => {
  child.stdout.on('data', () => {
    const line = childOut.split('\n').find((l) => l.startsWith('{"url"'));
    if (line) resolve(JSON.parse(line).url);
  });
  child.on('exit', (code) => reject(new Error(`server exited (${code})`)));
});

async function forgot(username) {
  const t0 = process.hrtime.bigint();
  const r = await fetch(`${url}/api/v2/users/${username}/forgot-password`, { method: 'POST' });
  await r.text();
  if (r.status !== 200) throw new Error(`${username}: ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** Alternating known/unknown requests; `settle`: wait until the previous request's background work (lookup, mail) is done. */
async function phase(settle) {
  const times = { known: [], unknown: [] };
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    // alternate which goes first, so neither always follows the other's background work
    const order = i % 2 ? ['known', 'unknown'] : ['unknown', 'known'];
    for (const kind of order) {
      const before = mails;
      const ms = await forgot(kind === 'known' ? `known-${i % KNOWN}` : `nobody-${settle ? 's' : 'b'}-${i}`);
      if (i >= WARMUP) times[kind].push(ms);
      if (settle) {
        if (kind === 'known') for (let w = 0; w < 400 && mails === before; w++) await sleep(5);
        await sleep(300);
      }
    }
  }
  return times;
}
const isolated = await phase(true);
const mailsIsolated = mails;
const backToBack = await phase(false);
for (let w = 0; w < 400 && mails < 2 * (WARMUP + ROUNDS); w++) await sleep(10);

const stats = (a) => {
  const s = [...a].sort((x, y) => x - y);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median: +q(0.5).toFixed(3), p90: +q(0.9).toFixed(3), mean: +(s.reduce((x, y) => x + y, 0) / s.length).toFixed(3) };
};
const medianOf = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
/** 95% interval of the ratio of the medians (bootstrap, 1000 resamples of each kind): what noise alone moves it by. */
const ratioInterval = (known, unknown) => {
  const pick = (a) => Array.from(a, () => a[Math.floor(Math.random() * a.length)]);
  const r = Array.from({ length: 1000 }, () => medianOf(pick(known)) / medianOf(pick(unknown))).sort((x, y) => x - y);
  return [+r[25].toFixed(3), +r[974].toFixed(3)];
};
const summary = (times) => {
  const known = stats(times.known);
  const unknown = stats(times.unknown);
  return {
    known_ms: known,
    unknown_ms: unknown,
    ratio_median: +(known.median / unknown.median).toFixed(3),
    ratio_median_95: ratioInterval(times.known, times.unknown),
    ratio_mean: +(known.mean / unknown.mean).toFixed(3),
  };
};
child.stdin.end();
await new Promise((r) => child.once('exit', r));
// the server's own times per phase, in arrival order: each phase's first WARMUP rounds left out
const { serverMs } = JSON.parse(childOut.split('\n').find((l) => l.startsWith('{"serverMs"')));
const perPhase = 2 * (WARMUP + ROUNDS);
const serverTimes = (from) => {
  const measured = serverMs.slice(from + 2 * WARMUP, from + perPhase);
  const of = (known, key) => measured.filter((x) => x.known === known).map((x) => x[key]);
  return { known: of(true, 'ms'), unknown: of(false, 'ms'), cpu: { known: of(true, 'cpuMs'), unknown: of(false, 'cpuMs') } };
};
const serverIsolated = serverTimes(0);
const serverBackToBack = serverTimes(perPhase);
const server = {
  ...summary({ known: [...serverIsolated.known, ...serverBackToBack.known], unknown: [...serverIsolated.unknown, ...serverBackToBack.unknown] }),
  isolated: summary(serverIsolated),
  back_to_back: summary(serverBackToBack),
  // the server process's CPU time (user + system, all its threads) from arrival to finish, isolated phase: nothing else
  // runs in it then, so this is the work done before the answer, much less moved by other processes than the clock
  cpu_isolated: summary(serverIsolated.cpu),
};
const result = {
  rounds: ROUNDS,
  load_average: (await import('node:os')).loadavg().map((n) => +n.toFixed(2)),
  // arrival to finish of each answer in the server (no client scheduling), both phases and each: the aim is a ratio of 1.00 within noise
  server_side: server,
  // each request sent once the previous one's background work is done: the work done before answering
  isolated: summary(isolated),
  // requests back to back: the known accounts' mails are sent while the next requests are served
  back_to_back: summary(backToBack),
  mails_received: { isolated: mailsIsolated, total: mails, expected: 2 * (WARMUP + ROUNDS) },
};
console.log(JSON.stringify(result, null, 2));
writeResults('password-reset', result);
await new Promise((r) => smtp.close(r));
