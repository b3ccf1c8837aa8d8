#!/usr/bin/env node
// The WebDAV service (@ferry/service-webdav) against Apache httpd's mod_dav,
// same client (curl), same files, same run, over loopback:
//
//   node bench/webdav.bench.mjs        (or: node bench/run.mjs webdav)
//
// Starts `ferry serve` (core/dist, through core/bin/ferry) with fs-local and
// service-webdav on a free port, and a private Apache (mod_dav, mod_dav_fs,
// Basic authentication; installed by bench/setup-apache.sh) on another, both
// serving a directory of the scratch directory. Phases, side by side (Apache
// then Ferry in every round; the best round of each kept):
//
//   put, get   one BENCH_MB file (default 1024 MiB) with curl -T / curl -o;
//              ratio = Apache time / Ferry time (aim >= 0.9x) and Ferry's
//              peak resident memory (VmHWM, reset before each phase; aim < 150 MB)
//   parallel   BENCH_PAR clients (default 16) at once, each putting then
//              getting its own BENCH_PAR_MB file (default 32 MiB): aggregate ratio
//   propfind   PROPFIND Depth 1 of a directory of BENCH_ENTRIES files (default
//              10,000) with curl: ratio (aim >= 0.5x) and Ferry's peak RSS
//   streamed   Ferry alone: how much its resident memory rises (peak during the
//              request over the resident memory before it) for a PROPFIND
//              Depth 1 of BENCH_ENTRIES, BENCH_BIG_ENTRIES (default 100,000)
//              and twice that many entries, against the size of the XML
//              answered: a response built in memory holds at least all of its
//              XML (as strings, twice that), a streamed one far less (aim:
//              each rise under half its XML)
//
// Env: BENCH_MB, BENCH_PAR, BENCH_PAR_MB, BENCH_ENTRIES, BENCH_BIG_ENTRIES, BENCH_ROUNDS (default 2),
// FERRY_BENCH_DIR, FERRY_BENCH_NO_BUILD=1.
// A quick run: BENCH_MB=128 BENCH_PAR=4 BENCH_PAR_MB=8 BENCH_ENTRIES=2000 BENCH_ROUNDS=1 node bench/webdav.bench.mjs
// Writes bench/results/webdav.json.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MB, benchDir, envNumber, freePort, makeFile, resetPeakRss, rssOf, runBench, scratchWorkspace, waitPort, writeResults } from './lib/common.mjs';
import { buildFerry, startFerry } from './lib/ferry-server.mjs';
import { reportSideBySide, sideBySide } from './lib/side-by-side.mjs';

const SIZE_MB = envNumber('BENCH_MB', 1024);
const PAR = envNumber('BENCH_PAR', 16);
const PAR_MB = envNumber('BENCH_PAR_MB', 32);
const ENTRIES = envNumber('BENCH_ENTRIES', 10_000);
const BIG_ENTRIES = envNumber('BENCH_BIG_ENTRIES', 100_000);
const ROUNDS = envNumber('BENCH_ROUNDS', 2);
const USER = { username: 'bench', password: 'bench-user-password-1' };
const { dir: scratch, children, cleanup } = scratchWorkspace(3 * SIZE_MB + 2 * PAR * PAR_MB + 256, 'ferry-bench-webdav-');
const log = (...a) => console.log('[webdav]', ...a);

/** curl with the bench user's credentials; resolves to the seconds it took (rejects on an HTTP error). */
function curl(args) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const p = spawn('curl', ['-sS', '--fail', '-u', `${USER.username}:${USER.password}`, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e9) : reject(new Error(`curl ${args.join(' ')}: ${err}`))));
  });
}

/** A private Apache with mod_dav serving `root` at / with Basic authentication. */
async function startApache(root) {
  const setup = spawnSync('bash', [path.join(benchDir, 'setup-apache.sh')], { stdio: 'inherit' });
  if (setup.status !== 0) throw new Error('apache2 could not be installed (bench/setup-apache.sh)');
  // mkdtemp made the scratch directory 0700: www-data must pass through it
  chmodSync(scratch, 0o755);
  const d = path.join(scratch, 'apache');
  for (const sub of ['lock', 'logs']) mkdirSync(path.join(d, sub), { recursive: true });
  const www = Number(spawnSync('id', ['-u', 'www-data'], { encoding: 'utf8' }).stdout.trim());
  for (const p of [root, path.join(d, 'lock')]) chownSync(p, www, www);
  spawnSync('htpasswd', ['-bc', path.join(d, 'htpasswd'), USER.username, USER.password], { stdio: 'ignore' });
  const port = await freePort();
  const mods = ['mpm_event', 'authz_core', 'authn_core', 'authn_file', 'auth_basic', 'authz_user', 'mime', 'alias', 'dav', 'dav_fs', 'dav_lock'];
  const conf = path.join(d, 'httpd.conf');
  writeFileSync(
    conf,
    [
      `ServerRoot ${d}`,
      `Listen 127.0.0.1:${port}`,
      `PidFile ${d}/httpd.pid`,
      `ErrorLog ${d}/logs/error.log`,
      ...mods.map((m) => `LoadModule ${m}_module /usr/lib/apache2/modules/mod_${m}.so`),
      'User www-data',
      'Group www-data',
      'ServerName 127.0.0.1',
      'TypesConfig /etc/mime.types',
      `DavLockDB ${d}/lock/DavLock`,
      'LimitRequestBody 0',
      `Alias / ${root}/`,
      `<Directory ${root}>`,
      '  Dav On',
      '  AuthType Basic',
      '  AuthName bench',
      `  AuthUserFile ${d}/htpasswd`,
      '  Require valid-user',
      '</Directory>',
      '',
    ].join('\n'),
  );
  // its own process group, killed whole by the cleanup: Apache's workers outlive a killed parent
  const proc = spawn('/usr/sbin/apache2', ['-f', conf, '-DFOREGROUND'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  proc.detachedGroup = true;
  let err = '';
  proc.stderr.on('data', (x) => (err += x));
  children.push(proc);
  await waitPort(port).catch((e) => {
    throw new Error(`apache2: ${e.message}: ${err}`);
  });
  return { name: 'apache', url: `http://127.0.0.1:${port}`, root, proc };
}

const compare = (label, servers, fn, after) => sideBySide({ label, servers, rounds: ROUNDS, fn, after, log });
const report = (label, r, aim, rssAim) => reportSideBySide(label, r, { reference: 'apache', aim, rssAim });

async function main() {
  if (process.getuid?.() !== 0) throw new Error('run as root: Apache serves its directory as www-data');
  buildFerry(log);
  const src = path.join(scratch, 'src');
  const apacheRoot = path.join(scratch, 'apache-root');
  const ferryRoot = path.join(scratch, 'ferry-home');
  for (const d of [src, apacheRoot, ferryRoot]) mkdirSync(d, { recursive: true });
  const apache = await startApache(apacheRoot);
  const port = await freePort();
  const ferry = await startFerry({
    dir: path.join(scratch, 'ferry'),
    children,
    plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/service-webdav', config: { bindings: [{ address: '127.0.0.1', port }] } }],
    env: { SERVICE_COMMON__MAX_PER_HOST_TRANSFERS: String(Math.max(20, 2 * PAR)) },
  });
  await waitPort(port);
  await ferry.createUser({ ...USER, home_dir: ferryRoot, filesystem: { provider: 0 } });
  // cpu: Ferry's CPU seconds per phase too, a figure the load of a shared machine moves far less than the times
  const servers = [apache, { name: 'ferry', url: `http://127.0.0.1:${port}`, root: ferryRoot, proc: ferry.proc, cpu: true }];
  log(`scratch ${scratch}; Apache mod_dav on ${apache.url}, Ferry WebDAV on port ${port}; best of ${ROUNDS}`);
  const results = { rounds: ROUNDS };
  const sizeOf = (file, size) => {
    if (statSync(file).size !== size) throw new Error(`${file}: ${statSync(file).size} bytes, expected ${size}`);
  };

  const big = path.join(src, 'big.bin');
  makeFile(big, SIZE_MB);
  const size = statSync(big).size;
  for (const s of servers) await curl(['-T', big, `${s.url}/big.bin`]);
  results.put = await compare(
    `put ${SIZE_MB} MiB`,
    servers,
    (s) => curl(['-T', big, `${s.url}/up.bin`]),
    async (s) => {
      sizeOf(path.join(s.root, 'up.bin'), size);
      rmSync(path.join(s.root, 'up.bin'));
    },
  );
  const out = path.join(scratch, 'got.bin');
  results.get = await compare(
    `get ${SIZE_MB} MiB`,
    servers,
    (s) => curl(['-o', out, `${s.url}/big.bin`]),
    async () => {
      sizeOf(out, size);
      rmSync(out);
    },
  );
  for (const s of servers) rmSync(path.join(s.root, 'big.bin'), { force: true });
  rmSync(big);

  if (PAR > 0) {
    const file = path.join(src, 'par.bin');
    makeFile(file, PAR_MB);
    const all = (s) => async () => {
      const t0 = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: PAR }, (_, i) =>
          curl(['-T', file, `${s.url}/par-${i}.bin`]).then(() => curl(['-o', path.join(scratch, `got-${s.name}-${i}`), `${s.url}/par-${i}.bin`])),
        ),
      );
      return Number(process.hrtime.bigint() - t0) / 1e9;
    };
    results.parallel = await compare(
      `parallel ${PAR} x ${PAR_MB} MiB`,
      servers,
      (s) => all(s)(),
      async (s) => {
        for (let i = 0; i < PAR; i++) {
          rmSync(path.join(s.root, `par-${i}.bin`), { force: true });
          rmSync(path.join(scratch, `got-${s.name}-${i}`), { force: true });
        }
      },
    );
  }

  const www = Number(spawnSync('id', ['-u', 'www-data'], { encoding: 'utf8' }).stdout.trim());
  for (const s of servers) {
    const d = path.join(s.root, 'many');
    mkdirSync(d, { recursive: true });
    for (let i = 0; i < ENTRIES; i++) writeFileSync(path.join(d, `f-${i}.txt`), 'x');
    if (s.name === 'apache') spawnSync('chown', ['-R', `${www}:${www}`, d]);
  }
  const body = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>';
  results.propfind = await compare(`propfind depth 1, ${ENTRIES} entries`, servers, (s) =>
    curl(['-X', 'PROPFIND', '-H', 'Depth: 1', '-H', 'Content-Type: application/xml', '--data', body, '-o', '/dev/null', `${s.url}/many/`]),
  );

  // streamed: Ferry's memory rise for a listing 10 times larger
  const listed = path.join(scratch, 'propfind.xml');
  const rise = async (dir) => {
    const pid = ferry.proc.pid;
    globalThis.gc?.();
    await new Promise((r) => setTimeout(r, 500));
    const before = rssOf(pid);
    resetPeakRss(pid);
    await curl(['-X', 'PROPFIND', '-H', 'Depth: 1', '-H', 'Content-Type: application/xml', '--data', body, '-o', listed, `${servers[1].url}/${dir}/`]);
    const r = { entries: readdirSync(path.join(ferryRoot, dir)).length, xml_mb: statSync(listed).size / MB, rise_mb: rssOf(pid, 'VmHWM') - before };
    rmSync(listed);
    return r;
  };
  if (BIG_ENTRIES > 0) {
    const d = path.join(ferryRoot, 'more');
    mkdirSync(d, { recursive: true });
    for (let i = 0; i < BIG_ENTRIES; i++) writeFileSync(path.join(d, `f-${i}.txt`), 'x');
    results.streamed = [await rise('many'), await rise('more')];
    for (let i = BIG_ENTRIES; i < 2 * BIG_ENTRIES; i++) writeFileSync(path.join(d, `f-${i}.txt`), 'x');
    results.streamed.push(await rise('more'));
    rmSync(d, { recursive: true, force: true });
  }

  console.log(`\nWebDAV, curl, Apache mod_dav vs Ferry (best of ${ROUNDS}; a shared machine: other work may have run at the same time)`);
  report(`put ${SIZE_MB} MiB`, results.put, 0.9, 150);
  report(`get ${SIZE_MB} MiB`, results.get, 0.9, 150);
  if (results.parallel) report(`parallel ${PAR} x ${PAR_MB} MiB`, results.parallel, 0.9);
  report(`propfind depth 1, ${ENTRIES} entries`, results.propfind, 0.5, 150);
  if (results.streamed) {
    const line = (r) => `${r.entries} entries (${r.xml_mb.toFixed(1)} MB of XML) +${r.rise_mb.toFixed(1)} MB`;
    const streamed = results.streamed.every((r) => r.rise_mb < r.xml_mb / 2);
    console.log(
      `  propfind memory: Ferry's resident memory rise for ${results.streamed.map(line).join(', ')} (aim: each under half its XML${streamed ? '' : ', MISSED'})`,
    );
  }
  writeResults('webdav', results);
  await ferry.stop();
}

runBench('webdav', main, cleanup);
