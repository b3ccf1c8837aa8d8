// A real `ferry serve` process (the compiled CLI, core/dist) for benchmarks:
// build, configuration file, start, admin and user tokens, users created
// through the admin API.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { root } from './common.mjs';

export const ADMIN = { username: 'admin', password: 'bench-admin-password-1' };

/** Compiles the workspaces (tsc -b tsconfig.build.json) unless FERRY_BENCH_NO_BUILD=1. */
export function buildFerry(log = console.log) {
  if (process.env.FERRY_BENCH_NO_BUILD === '1') return;
  log('building (tsc -b tsconfig.build.json)');
  const b = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (b.status !== 0) log('build reported errors; using the emitted output');
}

const basic = (u) => 'Basic ' + Buffer.from(`${u.username}:${u.password}`).toString('base64');

/**
 * Starts Ferry with its data under `dir` (SQLite), listening on a free
 * loopback port, with the given plugins (`[{ name, config? }]`). Resolves to
 * { url, proc, adminToken, createUser(body) -> user token, stop() }.
 * `env`: extra environment; `nodeArgs`: extra node options (e.g. --cpu-prof).
 */
/**
 * The node options core/bin/ferry gives by default (FERRY_NODE_OPTIONS
 * replaces them all): a benchmark that adds options of its own keeps them.
 */
export function launcherNodeOptions() {
  const launcher = readFileSync(path.join(root, 'core/bin/ferry'), 'utf8');
  const m = /\$\{FERRY_NODE_OPTIONS-([^}]*)\}/.exec(launcher);
  if (!m) throw new Error('core/bin/ferry: default node options not found');
  return m[1].split(/\s+/).filter(Boolean);
}

/**
 * Writes `<dir>/ferry.yaml` for a benchmark server: SQLite in `<dir>/data`,
 * one binding on 127.0.0.1:`port` (0: any free port), logs in
 * `<dir>/ferry.log`, the bench admin, `plugins` ({name, config?}; null: the
 * shipped list of config/default.yaml). `pgUrl`: PostgreSQL instead of SQLite
 * (nodes of one cluster share it); `instanceId`: the node's name. Returns the
 * file's path.
 */
export function writeFerryConfig(dir, { port = 0, plugins = [{ name: '@ferry/fs-local' }], pgUrl = '', instanceId = '' } = {}) {
  mkdirSync(path.join(dir, 'data'), { recursive: true });
  const config = path.join(dir, 'ferry.yaml');
  const pluginLines = plugins
    ? ['plugins:', ...plugins.flatMap((p) => [`  - name: "${p.name}"`, ...(p.config ? [`    config: ${JSON.stringify(p.config)}`] : [])])]
    : [];
  writeFileSync(
    config,
    [
      'common:',
      `  data_dir: "${path.join(dir, 'data')}"`,
      ...(instanceId ? [`  instance_id: ${instanceId}`] : []),
      'data_provider:',
      ...(pgUrl ? ['  driver: postgresql', `  url: "${pgUrl}"`] : ['  driver: sqlite', '  name: ferry.db']),
      'httpd:',
      '  bindings:',
      '    - address: 127.0.0.1',
      `      port: ${port}`,
      'kms:',
      '  master_key: bench-master-key-0123456789abcdef',
      'log:',
      '  level: info',
      `  file: "${path.join(dir, 'ferry.log')}"`,
      ...pluginLines,
      'defaults:',
      `  admin_username: ${ADMIN.username}`,
      `  admin_password: ${ADMIN.password}`,
      '',
    ].join('\n'),
  );
  return config;
}

export async function startFerry({ dir, plugins = [{ name: '@ferry/fs-local' }], env = {}, nodeArgs = [], children = [], pgUrl = '', instanceId = '' }) {
  const config = writeFerryConfig(dir, { plugins, pgUrl, instanceId });
  // through core/bin/ferry, as `npm start` does: its memory defaults are part of what is measured
  // (FERRY_NODE_OPTIONS replaces the launcher's node options, so extra ones keep its default)
  const nodeOptions = nodeArgs.length ? { FERRY_NODE_OPTIONS: [...launcherNodeOptions(), ...nodeArgs].join(' ') } : {};
  const proc = spawn(path.join(root, 'core/bin/ferry'), ['serve', '--config', config], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    // the shipped list serves SFTP on 2022, WebDAV on 8090 and FTP on 2121: several nodes must not collide (any free port)
    env: {
      ...process.env,
      ...nodeOptions,
      ...(plugins === null
        ? {
            SERVICE_PLUGINS__SERVICE_SFTP__CONFIG__BINDINGS__0__PORT: '0',
            SERVICE_PLUGINS__SERVICE_WEBDAV__CONFIG__BINDINGS__0__PORT: '0',
            SERVICE_PLUGINS__SERVICE_FTP__CONFIG__BINDINGS__0__PORT: '0',
          }
        : {}),
      ...env,
    },
  });
  children.push(proc);
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  proc.stdout.resume();
  const logFile = path.join(dir, 'ferry.log');
  let url;
  for (let i = 0; i < 2400 && !url; i++) {
    // up to 2 minutes: a start takes long on a busy machine
    await sleep(50);
    if (proc.exitCode !== null) throw new Error(`ferry exited: ${err}`);
    let text = '';
    try {
      text = readFileSync(logFile, 'utf8');
    } catch {
      continue;
    }
    url = /"uri":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/.exec(text)?.[1];
  }
  if (!url) throw new Error(`ferry did not start: ${err}`);
  url = `http://127.0.0.1:${new URL(url).port}`;
  const tokenRes = await fetch(`${url}/api/v2/token`, { headers: { authorization: basic(ADMIN) } });
  if (tokenRes.status !== 200) throw new Error(`admin token: ${tokenRes.status} ${await tokenRes.text()}`);
  const adminToken = (await tokenRes.json()).access_token;

  /** Creates a user (admin API body) and resolves to its bearer token. */
  async function createUser(body) {
    const created = await fetch(`${url}/api/v2/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ permissions: { '/': ['*'] }, ...body }),
    });
    if (created.status !== 201) throw new Error(`user ${body.username}: ${created.status} ${await created.text()}`);
    const r = await fetch(`${url}/api/v2/user/token`, { headers: { authorization: basic(body) } });
    if (r.status !== 200) throw new Error(`user token ${body.username}: ${r.status} ${await r.text()}`);
    return (await r.json()).access_token;
  }

  /** SIGTERM, then waits for the exit (so --cpu-prof profiles are written). */
  async function stop() {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  }

  return { url, proc, adminToken, createUser, stop };
}
