#!/usr/bin/env node
// The SFTP service (@ferry/service-sftp) against OpenSSH's own sftp-server,
// same client, same cipher, same files, same run, over loopback:
//
//   node bench/sftp-service.bench.mjs        (or: node bench/run.mjs sftp-service)
//
// bench-servers: sftp
//
// Starts `ferry serve` (core/dist, through core/bin/ferry) with fs-local and
// service-sftp on a free port, and a private OpenSSH sshd (Subsystem sftp
// /usr/lib/openssh/sftp-server) on another, both serving a directory of the
// scratch directory (/dev/shm when it has room). The sshd runs as root, so
// only root logs in to it with a key (PermitRootLogin prohibit-password):
// run the bench as root. Phases, each side by side (OpenSSH, then Ferry, in
// every round; the best round of each kept):
//
//   put, get   one BENCH_MB file (default 1024 MiB) with the OpenSSH `sftp`
//              client in batch mode, key login; ratio = OpenSSH time / Ferry
//              time (aim >= 0.8x), and Ferry's peak resident memory (VmHWM,
//              reset before each phase through /proc/<pid>/clear_refs;
//              aim < 150 MB)
//   parallel   BENCH_PAR sessions (default 16) at once, each putting then
//              getting its own BENCH_PAR_MB file (default 64 MiB): aggregate
//              ratio each way (aim >= 0.8x)
//   small      `put -r` of a directory of BENCH_SMALL files (default 10,000)
//              of 1 KiB (aim >= 0.5x)
//   requests   what one request costs, one at a time (what `put -r` of small
//              files is made of), BENCH_REQ of each (default 2,000) with node's
//              ssh2 client on one session: LSTAT of a missing file, LSTAT of a
//              file, OPEN + WRITE 1 KiB + CLOSE of a new file; the mean wall
//              time of each on both servers, and Ferry's process CPU per
//              request (all its threads); aim none (reported)
//   logins     logins per second for BENCH_LOGIN_SECS seconds (default 3)
//              with BENCH_LOGIN_PAR clients (default 4), node's ssh2 client
//              (connect, authenticate, disconnect): with a key, and with a
//              password. OpenSSH's password logins are those of the system
//              user of the project's test sshd (scripts/servers/start-sftp.sh,
//              started when down: its password is known, no account is made
//              for the bench), checked by sshd without PAM (crypt of
//              /etc/shadow); Ferry's against its argon2id hash.
//
// Env: BENCH_MB, BENCH_PAR, BENCH_PAR_MB, BENCH_SMALL, BENCH_REQ, BENCH_ROUNDS (default 2),
// BENCH_CIPHER (default aes128-gcm@openssh.com), BENCH_LOGIN_SECS,
// BENCH_LOGIN_PAR, BENCH_PHASES (comma list of put,get,parallel,small,requests,logins;
// default all), FERRY_BENCH_DIR, FERRY_BENCH_NO_BUILD=1, FERRY_BENCH_NODE_ARGS (node
// options of the Ferry process, e.g. --cpu-prof --cpu-prof-dir=DIR).
// A quick run: BENCH_MB=128 BENCH_PAR_MB=16 BENCH_SMALL=1000 node bench/sftp-service.bench.mjs
// Writes bench/results/sftp-service.json.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ssh2 from 'ssh2';
import { SFTP } from './lib/backends.mjs';
import { MB, cpuSecondsOf, ensureServers, envNumber, freePort, makeFile, scratchWorkspace, waitPort, writeResults, runBench } from './lib/common.mjs';
import { sideBySide } from './lib/side-by-side.mjs';
import { buildFerry, startFerry } from './lib/ferry-server.mjs';

const SIZE_MB = envNumber('BENCH_MB', 1024);
const PAR = envNumber('BENCH_PAR', 16);
const PAR_MB = envNumber('BENCH_PAR_MB', 64);
const SMALL = envNumber('BENCH_SMALL', 10_000);
const REQ = envNumber('BENCH_REQ', 2000);
const ROUNDS = envNumber('BENCH_ROUNDS', 2);
const LOGIN_SECS = envNumber('BENCH_LOGIN_SECS', 3);
const LOGIN_PAR = envNumber('BENCH_LOGIN_PAR', 4);
const CIPHER = process.env.BENCH_CIPHER || 'aes128-gcm@openssh.com';
const NODE_ARGS = (process.env.FERRY_BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const PHASES = new Set((process.env.BENCH_PHASES || 'put,get,parallel,small,requests,logins').split(',').map((s) => s.trim()));
const USER = { username: 'bench', password: 'bench-user-password-1' };

const { dir: scratch, children, cleanup } = scratchWorkspace(3 * SIZE_MB + 2 * PAR * PAR_MB + 256, 'ferry-bench-sftp-');

function log(...a) {
  console.log('[sftp-service]', ...a);
}

const loads = [];
const noteLoad = () => loads.push(os.loadavg()[0]);

/** Runs a program in the background; resolves with its output, rejects on a failing exit. */
function exec(cmd, args, o = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...o });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')}: exit ${code}: ${err || out}`))));
  });
}

/** The OpenSSH `sftp` client running `lines` in batch mode with the key; resolves to the seconds it took. */
async function sftp(server, lines) {
  const batch = path.join(scratch, `batch-${Math.random().toString(36).slice(2)}`);
  writeFileSync(batch, lines.join('\n') + '\n');
  const args = ['-q', '-b', batch, '-P', String(server.port), '-c', CIPHER, '-i', key, '-o', 'IdentitiesOnly=yes', '-o', 'StrictHostKeyChecking=no'];
  args.push('-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR', `${server.user}@127.0.0.1`);
  const t0 = process.hrtime.bigint();
  await exec('sftp', args);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  rmSync(batch, { force: true });
  return secs;
}

let key;

/** A private sshd serving `root` (key only) and the test server's user (password) with sftp-server. */
async function startSshd() {
  const d = path.join(scratch, 'sshd');
  mkdirSync(d, { recursive: true });
  mkdirSync('/run/sshd', { recursive: true });
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(d, 'host_key')]);
  writeFileSync(path.join(d, 'authorized_keys'), readFileSync(`${key}.pub`));
  const port = await freePort();
  const conf = path.join(d, 'sshd_config');
  writeFileSync(
    conf,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(d, 'host_key')}`,
      `PidFile ${path.join(d, 'sshd.pid')}`,
      `AuthorizedKeysFile ${path.join(d, 'authorized_keys')}`,
      'PasswordAuthentication yes',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      `AllowUsers root ${SFTP.username}`,
      'UsePAM no',
      'StrictModes no',
      'PrintMotd no',
      'MaxStartups 200',
      'MaxSessions 200',
      'LogLevel ERROR',
      'Subsystem sftp /usr/lib/openssh/sftp-server',
      '',
    ].join('\n'),
  );
  const proc = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (x) => (err += x));
  children.push(proc);
  await waitPort(port).catch((e) => {
    throw new Error(`sshd: ${e.message}: ${err}`);
  });
  return { name: 'openssh', port, user: 'root', proc };
}

async function startFerrySftp() {
  const port = await freePort();
  const ferry = await startFerry({
    dir: path.join(scratch, 'ferry'),
    children,
    plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/service-sftp', config: { bindings: [{ address: '127.0.0.1', port }] } }],
    env: { SERVICE_COMMON__MAX_PER_HOST_TRANSFERS: String(Math.max(20, 2 * PAR)) },
    nodeArgs: NODE_ARGS,
  });
  await waitPort(port);
  // cpu: Ferry's CPU seconds per phase (all its work is in its process), steadier than the wall times
  return { ...ferry, name: 'ferry', port, cpu: true };
}

/** Runs `fn(server)` for OpenSSH then Ferry, ROUNDS times (lib/side-by-side.mjs), the load noted before each run. */
const compare = (label, servers, fn, after) =>
  sideBySide({ label, servers: [servers.openssh, servers.ferry], rounds: ROUNDS, fn, after, beforeEach: noteLoad, log });

/** Where a server's files live on disk, and the path its clients name. */
const roots = {};
const remote = (s, name) => (s.name === 'ferry' ? `/${name}` : path.join(roots.openssh, name));
const local = (s, name) => path.join(s.name === 'ferry' ? roots.ferry : roots.openssh, name);

/** One login with node's ssh2 client; resolves once authenticated and disconnected. */
function login(port, auth) {
  return new Promise((resolve, reject) => {
    const c = new ssh2.Client();
    c.once('ready', () => {
      c.once('close', resolve);
      c.end();
    });
    c.once('error', reject);
    c.connect({ host: '127.0.0.1', port, readyTimeout: 20_000, algorithms: { cipher: [CIPHER] }, ...auth });
  });
}

/** Logins per second: LOGIN_PAR clients logging in one after the other for LOGIN_SECS. */
async function loginRate(port, auth) {
  await login(port, auth); // the first one checks the credentials
  let n = 0;
  const end = Date.now() + LOGIN_SECS * 1000;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: LOGIN_PAR }, async () => {
      while (Date.now() < end) {
        await login(port, auth);
        n++;
      }
    }),
  );
  return n / (Number(process.hrtime.bigint() - t0) / 1e9);
}

/** An SFTP session of node's ssh2 client; resolves to { client, sftp }. */
function sftpSession(port, auth) {
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    client.once('ready', () => client.sftp((err, sftp) => (err ? reject(err) : resolve({ client, sftp }))));
    client.once('error', reject);
    client.connect({ host: '127.0.0.1', port, readyTimeout: 20_000, algorithms: { cipher: [CIPHER] }, ...auth });
  });
}

/** SFTP's NO_SUCH_FILE status (what an LSTAT of a missing file must answer). */
const NO_SUCH_FILE = 2;

/** A callback-style SFTP call as a promise; `missing`: it must fail with NO_SUCH_FILE (anything else rejects). */
const call = (fn, missing = false) =>
  new Promise((resolve, reject) =>
    fn((err, v) => {
      if (missing) return err?.code === NO_SUCH_FILE ? resolve() : reject(err ?? new Error('expected NO_SUCH_FILE, the file was found'));
      return err ? reject(err) : resolve(v);
    }),
  );

/**
 * The requests phase on one server: the mean wall time (us) of each kind of
 * request, REQ of each one after the other in `dir` (a directory of the
 * server's, empty), and the CPU (us) `pid` used per request when given.
 */
async function requestCosts(port, auth, dir, pid) {
  const { client, sftp } = await sftpSession(port, auth);
  const kib = Buffer.alloc(1024, 7);
  const kinds = {
    lstat_missing: (i) => call((cb) => sftp.lstat(`${dir}/missing-${i}`, cb), true),
    upload_1k: async (i) => {
      const h = await call((cb) => sftp.open(`${dir}/f${i}`, 'w', cb));
      await call((cb) => sftp.write(h, kib, 0, kib.length, 0, cb));
      await call((cb) => sftp.close(h, cb));
    },
    lstat_file: (i) => call((cb) => sftp.lstat(`${dir}/f${i}`, cb)),
  };
  const out = {};
  try {
    for (const [kind, fn] of Object.entries(kinds)) {
      const cpu0 = pid ? cpuSecondsOf(pid) : 0;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < REQ; i++) await fn(i);
      out[kind] = { wall_us: Number(process.hrtime.bigint() - t0) / 1e3 / REQ };
      if (pid) out[kind].cpu_us = ((cpuSecondsOf(pid) - cpu0) * 1e6) / REQ;
    }
  } finally {
    client.end();
  }
  return out;
}

async function main() {
  if (process.getuid?.() !== 0) throw new Error('run as root: only root logs in to a private sshd without editing /etc');
  for (const p of ['/usr/sbin/sshd', '/usr/lib/openssh/sftp-server']) statSync(p);
  buildFerry(log);
  await ensureServers([SFTP]);
  noteLoad();
  key = path.join(scratch, 'client_key');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const pub = readFileSync(`${key}.pub`, 'utf8').trim();
  roots.openssh = path.join(scratch, 'openssh-root');
  roots.ferry = path.join(scratch, 'ferry-home');
  const src = path.join(scratch, 'src');
  for (const d of [roots.openssh, roots.ferry, src]) mkdirSync(d, { recursive: true });

  const openssh = await startSshd();
  const ferry = await startFerrySftp();
  await ferry.createUser({ ...USER, home_dir: roots.ferry, public_keys: [pub], filesystem: { provider: 0 } });
  ferry.user = USER.username;
  const servers = { openssh, ferry };
  log(`scratch ${scratch}; OpenSSH sshd on ${openssh.port}, Ferry SFTP on ${ferry.port}; cipher ${CIPHER}; best of ${ROUNDS}`);
  const results = { cipher: CIPHER, rounds: ROUNDS };

  if (PHASES.has('put') || PHASES.has('get')) {
    const big = path.join(src, 'big.bin');
    log(`writing a ${SIZE_MB} MiB file`);
    makeFile(big, SIZE_MB);
    const size = statSync(big).size;
    const check = (file) => {
      const got = statSync(file).size;
      if (got !== size) throw new Error(`${file}: ${got} bytes, expected ${size}`);
    };
    // warm both (logins, page cache)
    for (const s of [openssh, ferry]) await sftp(s, [`put ${big} ${remote(s, 'big.bin')}`]);
    if (PHASES.has('put')) {
      results.put = await compare(
        `put ${SIZE_MB} MiB`,
        servers,
        (s) => sftp(s, [`put ${big} ${remote(s, 'up.bin')}`]),
        async (s) => {
          check(local(s, 'up.bin'));
          rmSync(local(s, 'up.bin'));
        },
      );
    }
    if (PHASES.has('get')) {
      const out = path.join(scratch, 'got.bin');
      results.get = await compare(
        `get ${SIZE_MB} MiB`,
        servers,
        (s) => sftp(s, [`get ${remote(s, 'big.bin')} ${out}`]),
        async () => {
          check(out);
          rmSync(out);
        },
      );
    }
    for (const s of [openssh, ferry]) rmSync(local(s, 'big.bin'), { force: true });
    rmSync(big);
  }

  if (PHASES.has('parallel') && PAR > 0) {
    const file = path.join(src, 'par.bin');
    makeFile(file, PAR_MB);
    const all = (s, line) => async () => {
      const t0 = process.hrtime.bigint();
      await Promise.all(Array.from({ length: PAR }, (_, i) => sftp(s, [line(i)])));
      return Number(process.hrtime.bigint() - t0) / 1e9;
    };
    const clean = (names) => async (s) => {
      for (let i = 0; i < PAR; i++) {
        const f = names(s, i);
        if (statSync(f).size !== PAR_MB * MB) throw new Error(`${f}: short`);
        rmSync(f);
      }
    };
    results.parallel_put = await compare(
      `${PAR} x put ${PAR_MB} MiB`,
      servers,
      (s) => all(s, (i) => `put ${file} ${remote(s, `p${i}.bin`)}`)(),
      clean((s, i) => local(s, `p${i}.bin`)),
    );
    for (const s of [openssh, ferry]) for (let i = 0; i < PAR; i++) await exec('cp', [file, local(s, `g${i}.bin`)]);
    const gotDir = path.join(scratch, 'got');
    mkdirSync(gotDir, { recursive: true });
    results.parallel_get = await compare(
      `${PAR} x get ${PAR_MB} MiB`,
      servers,
      (s) => all(s, (i) => `get ${remote(s, `g${i}.bin`)} ${path.join(gotDir, `g${i}.bin`)}`)(),
      clean((_s, i) => path.join(gotDir, `g${i}.bin`)),
    );
    for (const s of [openssh, ferry]) for (let i = 0; i < PAR; i++) rmSync(local(s, `g${i}.bin`));
    for (const k of ['parallel_put', 'parallel_get']) {
      const r = results[k];
      r.openssh_mbps = (PAR * PAR_MB) / r.openssh_s;
      r.ferry_mbps = (PAR * PAR_MB) / r.ferry_s;
    }
    rmSync(file);
  }

  if (PHASES.has('small') && SMALL > 0) {
    const tree = path.join(src, 'small');
    mkdirSync(tree);
    const kib = Buffer.alloc(1024, 7);
    for (let i = 0; i < SMALL; i++) writeFileSync(path.join(tree, `f${i}.txt`), kib);
    results.small = await compare(
      `put -r ${SMALL} files`,
      servers,
      (s) => sftp(s, [`put -r ${tree} ${remote(s, 'small')}`]),
      async (s) => {
        const n = (await exec('find', [local(s, 'small'), '-type', 'f'])).split('\n').filter(Boolean).length;
        if (n !== SMALL) throw new Error(`${s.name}: ${n} files arrived, expected ${SMALL}`);
        rmSync(local(s, 'small'), { recursive: true });
      },
    );
    results.small.files = SMALL;
    rmSync(tree, { recursive: true });
  }

  if (PHASES.has('requests') && REQ > 0) {
    const privateKey = readFileSync(key);
    const best = { openssh: {}, ferry: {} };
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of [openssh, ferry]) {
        noteLoad();
        const dir = `r${round}`;
        mkdirSync(local(s, dir));
        const got = await requestCosts(s.port, { username: s.user, privateKey }, remote(s, dir), s.name === 'ferry' ? ferry.proc.pid : undefined);
        rmSync(local(s, dir), { recursive: true });
        for (const [kind, r] of Object.entries(got)) {
          if (!best[s.name][kind] || r.wall_us < best[s.name][kind].wall_us) best[s.name][kind] = r;
        }
        log(
          `requests ${s.name} round ${round + 1}: ${Object.entries(got)
            .map(([k, r]) => `${k} ${r.wall_us.toFixed(0)} us`)
            .join(', ')}`,
        );
      }
    }
    results.requests = { count: REQ };
    for (const kind of Object.keys(best.ferry)) {
      const o = best.openssh[kind];
      const f = best.ferry[kind];
      results.requests[kind] = { openssh_us: o.wall_us, ferry_us: f.wall_us, ferry_cpu_us: f.cpu_us, ratio: o.wall_us / f.wall_us };
    }
  }

  if (PHASES.has('logins')) {
    const privateKey = readFileSync(key);
    const rates = { openssh: {}, ferry: {} };
    for (let i = 0; i < ROUNDS; i++) {
      for (const [name, kind, port, auth] of [
        ['openssh', 'key', openssh.port, { username: 'root', privateKey }],
        ['ferry', 'key', ferry.port, { username: USER.username, privateKey }],
        ['openssh', 'password', openssh.port, { username: SFTP.username, password: SFTP.password }],
        ['ferry', 'password', ferry.port, { username: USER.username, password: USER.password }],
      ]) {
        noteLoad();
        const r = await loginRate(port, auth);
        rates[name][kind] = Math.max(rates[name][kind] ?? 0, r);
        log(`logins ${name} ${kind} round ${i + 1}: ${r.toFixed(1)}/s`);
      }
    }
    results.logins = {
      clients: LOGIN_PAR,
      seconds: LOGIN_SECS,
      key: { openssh_per_s: rates.openssh.key, ferry_per_s: rates.ferry.key, ratio: rates.ferry.key / rates.openssh.key },
      password: { openssh_per_s: rates.openssh.password, ferry_per_s: rates.ferry.password, ratio: rates.ferry.password / rates.openssh.password },
    };
  }
  noteLoad();
  // stopped with SIGTERM so that a --cpu-prof profile (FERRY_BENCH_NODE_ARGS) is written
  await ferry.stop();
  results.load_average_1m = { min: Math.min(...loads), max: Math.max(...loads) };

  const x = (n) => `${n.toFixed(2)}x`;
  const s = (n) => `${n.toFixed(2)} s`;
  console.log('');
  console.log(
    `SFTP service vs OpenSSH sftp-server, OpenSSH sftp client, ${CIPHER}, best of ${ROUNDS} (ratio = OpenSSH time / Ferry time); load average ${results.load_average_1m.min.toFixed(1)}-${results.load_average_1m.max.toFixed(1)}`,
  );
  for (const [k, label] of [
    ['put', `put ${SIZE_MB} MiB`],
    ['get', `get ${SIZE_MB} MiB`],
  ]) {
    const r = results[k];
    if (r)
      console.log(
        `  ${label.padEnd(24)} openssh ${s(r.openssh_s)}   ferry ${s(r.ferry_s)}   ${x(r.ratio)} (aim >= 0.80x)   Ferry peak RSS ${r.ferry_peak_rss_mb.toFixed(0)} MB (aim < 150)${r.ferry_cpu_s !== undefined ? `   Ferry CPU ${s(r.ferry_cpu_s)}` : ''}`,
      );
  }
  for (const [k, label] of [
    ['parallel_put', `${PAR} x put ${PAR_MB} MiB`],
    ['parallel_get', `${PAR} x get ${PAR_MB} MiB`],
  ]) {
    const r = results[k];
    if (r) {
      console.log(
        `  ${label.padEnd(24)} openssh ${r.openssh_mbps.toFixed(0)} MB/s   ferry ${r.ferry_mbps.toFixed(0)} MB/s   ${x(r.ratio)} (aim >= 0.80x)   Ferry peak RSS ${r.ferry_peak_rss_mb.toFixed(0)} MB`,
      );
    }
  }
  if (results.small) {
    const r = results.small;
    console.log(`  ${`put -r ${SMALL} x 1 KiB`.padEnd(24)} openssh ${s(r.openssh_s)}   ferry ${s(r.ferry_s)}   ${x(r.ratio)} (aim >= 0.50x)`);
  }
  if (results.requests) {
    const labels = { lstat_missing: 'LSTAT, missing file', lstat_file: 'LSTAT, a file', upload_1k: 'OPEN+WRITE 1K+CLOSE' };
    for (const [kind, label] of Object.entries(labels)) {
      const r = results.requests[kind];
      console.log(
        `  ${label.padEnd(24)} openssh ${r.openssh_us.toFixed(0)} us   ferry ${r.ferry_us.toFixed(0)} us   ${x(r.ratio)} (Ferry CPU ${r.ferry_cpu_us.toFixed(0)} us a request)   aim none (reported)`,
      );
    }
  }
  if (results.logins) {
    const l = results.logins;
    for (const k of ['key', 'password']) {
      console.log(
        `  logins, ${k.padEnd(8)}         openssh ${l[k].openssh_per_s.toFixed(1)}/s   ferry ${l[k].ferry_per_s.toFixed(1)}/s   ${x(l[k].ratio)} (${LOGIN_PAR} clients)   aim none (reported)`,
      );
    }
  }
  writeResults('sftp-service', results);
  // a graceful stop: a Ferry started with --cpu-prof (FERRY_NODE_OPTIONS) writes its profile
  await ferry.stop();
}

runBench('sftp-service', main, cleanup);
