#!/usr/bin/env node
// The FTP service (@ferry/service-ftp) against vsftpd, same client (curl), same files, same run,
// over loopback, plain FTP and explicit FTPS (AUTH TLS, protected data connections):
//
//   node bench/ftp.bench.mjs        (or: node bench/run.mjs ftp)
//
// Starts `ferry serve` (core/dist, through core/bin/ferry) with fs-local and service-ftp on a free
// port (tls_mode explicit, a self-signed certificate for 127.0.0.1), and a private vsftpd
// (installed by bench/setup-vsftpd.sh) on another, serving anonymous uploads into a directory of
// the scratch directory, with the same certificate and TLS session reuse required, as Ferry does.
// Phases, side by side (vsftpd then Ferry in every round; the best round of each kept):
//
//   stor, retr      one BENCH_MB file (default 1024 MiB) with curl -T / curl -o, plain and FTPS;
//                   ratio = vsftpd time / Ferry time (aim >= 0.9x) and Ferry's peak resident
//                   memory (VmHWM, reset before each phase; aim < 150 MB)
//   parallel        BENCH_PAR clients (default 16) at once, each storing then retrieving its own
//                   BENCH_PAR_MB file (default 32 MiB), plain: aggregate ratio
//
// The plain phases also run against a bare Node.js FTP server (bench/lib/bare-ftp-server.mjs: the
// same socket-to-file work on one event loop and nothing else), so each plain figure also says how
// close Ferry is to what Node.js itself reaches (aim >= 0.9x of it), apart from vsftpd's C.
//
// Env: BENCH_MB, BENCH_PAR, BENCH_PAR_MB, BENCH_ROUNDS (default 2), FERRY_BENCH_DIR,
// FERRY_BENCH_NO_BUILD=1. A quick run: BENCH_MB=128 BENCH_PAR=4 BENCH_PAR_MB=8 BENCH_ROUNDS=1 node bench/ftp.bench.mjs
// Writes bench/results/ftp.json.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { benchDir, envNumber, freePort, makeFile, runBench, scratchWorkspace, startBareServer, waitPort, writeResults } from './lib/common.mjs';
import { buildFerry, startFerry } from './lib/ferry-server.mjs';
import { reportSideBySide, sideBySide } from './lib/side-by-side.mjs';

const SIZE_MB = envNumber('BENCH_MB', 1024);
const PAR = envNumber('BENCH_PAR', 16);
const PAR_MB = envNumber('BENCH_PAR_MB', 32);
const ROUNDS = envNumber('BENCH_ROUNDS', 2);
const USER = { username: 'bench', password: 'bench-user-password-1' };
const { dir: scratch, children, cleanup } = scratchWorkspace(3 * SIZE_MB + 2 * PAR * PAR_MB + 256, 'ferry-bench-ftp-');
const log = (...a) => console.log('[ftp]', ...a);

/** curl against `server` (its credentials; FTPS when `tls`); resolves to the seconds it took (rejects on an FTP error). */
function curl(server, tls, args) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const p = spawn('curl', ['-sS', '--fail', '--user', server.user, ...(tls ? ['--ssl-reqd', '-k'] : []), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e9) : reject(new Error(`curl ${args.join(' ')}: ${err}`))));
  });
}

/** A self-signed certificate for 127.0.0.1 (both servers use it). */
function certificate() {
  const crt = path.join(scratch, 'cert.pem');
  const key = path.join(scratch, 'key.pem');
  const r = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      crt,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`openssl: ${r.stderr}`);
  return { crt, key };
}

/** A private vsftpd: anonymous (no /etc change), uploads into `<anonRoot>/pub` owned by the package's ftp user, FTPS optional. */
async function startVsftpd(cert) {
  const setup = spawnSync('bash', [path.join(benchDir, 'setup-vsftpd.sh')], { stdio: 'inherit' });
  if (setup.status !== 0) throw new Error('vsftpd could not be installed (bench/setup-vsftpd.sh)');
  chmodSync(scratch, 0o755);
  const d = path.join(scratch, 'vsftpd');
  const anonRoot = path.join(d, 'root');
  const empty = path.join(d, 'empty');
  const pub = path.join(anonRoot, 'pub');
  for (const p of [pub, empty]) mkdirSync(p, { recursive: true });
  // vsftpd refuses a root the anonymous user can write, and wants its secure_chroot_dir root-owned and not writable
  chmodSync(anonRoot, 0o555);
  chmodSync(empty, 0o555);
  const ftp = spawnSync('id', ['-u', 'ftp'], { encoding: 'utf8' }).stdout.trim();
  chownSync(pub, Number(ftp), Number(spawnSync('id', ['-g', 'ftp'], { encoding: 'utf8' }).stdout.trim()));
  const port = await freePort();
  const pasv = await freePort();
  const conf = path.join(d, 'vsftpd.conf');
  writeFileSync(
    conf,
    [
      'listen=YES',
      'listen_address=127.0.0.1',
      `listen_port=${port}`,
      'background=NO',
      'anonymous_enable=YES',
      'local_enable=NO',
      'no_anon_password=YES',
      `anon_root=${anonRoot}`,
      'write_enable=YES',
      'anon_upload_enable=YES',
      'anon_other_write_enable=YES',
      'anon_umask=022',
      `secure_chroot_dir=${empty}`,
      'pasv_enable=YES',
      `pasv_min_port=${pasv}`,
      `pasv_max_port=${pasv + 50}`,
      'pasv_address=127.0.0.1',
      'seccomp_sandbox=NO',
      'ssl_enable=YES',
      'allow_anon_ssl=YES',
      'force_anon_logins_ssl=NO',
      'force_anon_data_ssl=NO',
      'require_ssl_reuse=YES',
      `rsa_cert_file=${cert.crt}`,
      `rsa_private_key_file=${cert.key}`,
      'xferlog_enable=NO',
      '',
    ].join('\n'),
  );
  const proc = spawn('/usr/sbin/vsftpd', [conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (x) => (err += x));
  children.push(proc);
  await waitPort(port).catch((e) => {
    throw new Error(`vsftpd: ${e.message}: ${err}`);
  });
  return { name: 'vsftpd', url: `ftp://127.0.0.1:${port}/pub`, root: pub, user: 'anonymous:', proc };
}

const compare = (label, servers, fn, after) => sideBySide({ label, servers, rounds: ROUNDS, fn, after, log });
const report = (label, r, aim, rssAim) => reportSideBySide(label, r, { reference: 'vsftpd', aim, rssAim, baseline: 'node', baselineAim: 0.9 });

async function main() {
  if (process.getuid?.() !== 0) throw new Error('run as root: vsftpd serves its directory as the ftp user');
  buildFerry(log);
  const src = path.join(scratch, 'src');
  const ferryRoot = path.join(scratch, 'ferry-home');
  for (const d of [src, ferryRoot]) mkdirSync(d, { recursive: true });
  const cert = certificate();
  const vsftpd = await startVsftpd(cert);
  const port = await freePort();
  const ferry = await startFerry({
    dir: path.join(scratch, 'ferry'),
    children,
    plugins: [
      { name: '@ferry/fs-local' },
      {
        name: '@ferry/service-ftp',
        config: { bindings: [{ address: '127.0.0.1', port, tls_mode: 'explicit' }], certificate_file: cert.crt, certificate_key_file: cert.key },
      },
    ],
    env: { SERVICE_COMMON__MAX_PER_HOST_TRANSFERS: String(Math.max(20, 2 * PAR)) },
  });
  await waitPort(port);
  await ferry.createUser({ ...USER, home_dir: ferryRoot, filesystem: { provider: 0 } });
  const nodeRoot = path.join(scratch, 'node-home');
  mkdirSync(nodeRoot);
  const bare = await startBareServer('bare-ftp-server.mjs', { root: nodeRoot }, children);
  const node = { name: 'node', url: bare.url.replace('http:', 'ftp:'), root: nodeRoot, user: 'bench:bench', proc: bare.proc, cpu: true };
  const ferryServer = {
    name: 'ferry',
    url: `ftp://127.0.0.1:${port}`,
    root: ferryRoot,
    user: `${USER.username}:${USER.password}`,
    proc: ferry.proc,
    cpu: true,
  };
  const servers = [vsftpd, ferryServer];
  // the bare Node.js server speaks plain FTP only
  const plainServers = [vsftpd, node, ferryServer];
  log(`scratch ${scratch}; vsftpd on ${vsftpd.url}, bare Node.js FTP on ${node.url}, Ferry FTP on port ${port}; best of ${ROUNDS}`);
  const results = { rounds: ROUNDS };
  const sizeOf = (file, size) => {
    if (statSync(file).size !== size) throw new Error(`${file}: ${statSync(file).size} bytes, expected ${size}`);
  };

  const big = path.join(src, 'big.bin');
  makeFile(big, SIZE_MB);
  const size = statSync(big).size;
  const out = path.join(scratch, 'got.bin');
  for (const s of plainServers) await curl(s, false, ['-T', big, `${s.url}/big.bin`]);
  for (const tls of [false, true]) {
    const kind = tls ? 'ftps' : 'plain';
    results[`stor_${kind}`] = await compare(
      `stor ${kind} ${SIZE_MB} MiB`,
      tls ? servers : plainServers,
      (s) => curl(s, tls, ['-T', big, `${s.url}/up.bin`]),
      async (s) => {
        sizeOf(path.join(s.root, 'up.bin'), size);
        rmSync(path.join(s.root, 'up.bin'));
      },
    );
    results[`retr_${kind}`] = await compare(
      `retr ${kind} ${SIZE_MB} MiB`,
      tls ? servers : plainServers,
      (s) => curl(s, tls, ['-o', out, `${s.url}/big.bin`]),
      async () => {
        sizeOf(out, size);
        rmSync(out);
      },
    );
  }
  for (const s of plainServers) rmSync(path.join(s.root, 'big.bin'), { force: true });
  rmSync(big);

  if (PAR > 0) {
    const file = path.join(src, 'par.bin');
    makeFile(file, PAR_MB);
    const all = async (s) => {
      const t0 = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: PAR }, (_, i) =>
          curl(s, false, ['-T', file, `${s.url}/par-${i}.bin`]).then(() =>
            curl(s, false, ['-o', path.join(scratch, `got-${s.name}-${i}`), `${s.url}/par-${i}.bin`]),
          ),
        ),
      );
      return Number(process.hrtime.bigint() - t0) / 1e9;
    };
    results.parallel = await compare(`parallel ${PAR} x ${PAR_MB} MiB`, plainServers, all, async (s) => {
      for (let i = 0; i < PAR; i++) {
        rmSync(path.join(s.root, `par-${i}.bin`), { force: true });
        rmSync(path.join(scratch, `got-${s.name}-${i}`), { force: true });
      }
    });
  }

  console.log(
    `\nFTP, curl, vsftpd (and a bare Node.js server, plain only) vs Ferry (best of ${ROUNDS}; a shared machine: other work may have run at the same time)`,
  );
  for (const kind of ['plain', 'ftps']) {
    report(`stor ${kind} ${SIZE_MB} MiB`, results[`stor_${kind}`], 0.9, 150);
    report(`retr ${kind} ${SIZE_MB} MiB`, results[`retr_${kind}`], 0.9, 150);
  }
  if (results.parallel) report(`parallel ${PAR} x ${PAR_MB} MiB`, results.parallel, 0.9);
  writeResults('ftp', results);
  await ferry.stop();
}

runBench('ftp', main, cleanup);
