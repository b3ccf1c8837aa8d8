/**
 * Real `ferry serve` processes for the suites that test the whole server
 * (test/e2e, test/faults, test/cluster): the configuration file, the start
 * (resolved once the server logs that it listens), the output and the stop.
 * Each suite keeps its own defaults (admin, master key, timeouts) in its
 * helpers and calls these.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';

/** The compiled CLI when FERRY_TEST_USE_DIST=1 (CI builds first), else the sources through tap's TypeScript loader; relative to the repository root. */
export const FERRY_CLI =
  process.env.FERRY_TEST_USE_DIST === '1'
    ? ['core/dist/src/cli.js']
    : ['--conditions=ferry-src', '--no-warnings', '--import=@tapjs/typescript/import', 'core/src/cli.ts'];

/** The test process's environment without what tap and the test servers set (TAP*, SERVICE_*). */
export function ferryEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SERVICE_') && !k.startsWith('TAP')) env[k] = v;
  return env;
}

export interface FerryConfigOptions {
  /** The node's state (SQLite database, temporary area, secrets); created if missing. */
  dataDir: string;
  /** PostgreSQL URL; SQLite (`ferry.db` in the data directory) when absent. */
  databaseUrl?: string;
  /** `data_provider.pool_size`; the server's default when absent. */
  poolSize?: number;
  /** More lines of the `common` section (not indented). */
  common?: string[];
  /** More lines of the one binding (127.0.0.1, a free port), not indented. */
  binding?: string[];
  masterKey: string;
  admin: { username: string; password: string };
  /** `log.level`; no `log` section when absent (the caller's `extra` may hold one). */
  logLevel?: string;
  /** npm names of the plugins to load, one `  - name: "<p>"` line each; default: fs-local only. */
  plugins?: string[];
  /** Top-level YAML appended as is (must not repeat a section written here). */
  extra?: string;
}

/** Writes the YAML configuration to `file` (and creates the data directory); returns `file`. */
export function writeFerryConfig(file: string, o: FerryConfigOptions): string {
  mkdirSync(o.dataDir, { recursive: true });
  const lines = [
    'common:',
    `  data_dir: "${o.dataDir}"`,
    ...(o.common ?? []).map((l) => `  ${l}`),
    'data_provider:',
    ...(o.databaseUrl ? ['  driver: postgresql', `  url: "${o.databaseUrl}"`] : ['  driver: sqlite', '  name: ferry.db']),
    ...(o.poolSize === undefined ? [] : [`  pool_size: ${o.poolSize}`]),
    'httpd:',
    '  bindings:',
    '    - address: 127.0.0.1',
    '      port: 0',
    ...(o.binding ?? []).map((l) => `      ${l}`),
    'kms:',
    `  master_key: ${o.masterKey}`,
    ...(o.logLevel === undefined ? [] : ['log:', `  level: ${o.logLevel}`]),
    'plugins:',
    ...(o.plugins ?? ['@ferry/fs-local']).map((p) => `  - name: "${p}"`),
    'defaults:',
    `  admin_username: ${o.admin.username}`,
    `  admin_password: ${o.admin.password}`,
  ];
  writeFileSync(file, lines.join('\n') + '\n' + (o.extra ?? ''));
  return file;
}

export interface FerryProcess {
  url: string;
  proc: ChildProcess;
  /** Everything the process wrote so far, stdout and stderr (JSON log lines). */
  output(): string;
  /** Sends a signal (SIGTERM by default) unless the process has ended, and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface StartFerryOptions {
  /** The repository root: the CLI paths are relative to it. */
  cwd: string;
  /** How long the start may take before the promise rejects. */
  timeoutMs: number;
  /** Names the process in the errors ("server" by default, e.g. "node n1"). */
  label?: string;
  /** Node options before the CLI (e.g. --inspect). */
  nodeArgs?: string[];
  /**
   * SIGKILL the process when the test process exits, also when a test fails
   * before its teardown or tap ends the file at its time limit (default true:
   * a server left behind loads the machine for the suites that follow).
   */
  killOnExit?: boolean;
}

const killOnExit = new Set<ChildProcess>();
let exitHook = false;

/** Starts `ferry serve --config <config>` and resolves once it listens (rejects if it exits or times out first). */
export function startFerry(config: string, o: StartFerryOptions): Promise<FerryProcess> {
  const label = o.label ?? 'server';
  const proc = spawn(process.execPath, [...(o.nodeArgs ?? []), ...FERRY_CLI, 'serve', '--config', config], { cwd: o.cwd, env: ferryEnv() });
  if (o.killOnExit !== false) {
    killOnExit.add(proc);
    if (!exitHook) {
      exitHook = true;
      process.once('exit', () => {
        for (const p of killOnExit) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
      });
    }
  }
  let out = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // a server that did not start in time is not left running
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      reject(new Error(`${label} did not start within ${o.timeoutMs} ms: ${out}`));
    }, o.timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /"uri":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        proc.stdout!.on('data', (x: Buffer) => (out += x.toString()));
        resolve({
          url: m[1]!,
          proc,
          output: () => out,
          async kill(signal: NodeJS.Signals = 'SIGTERM') {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
            await exited;
          },
        });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code}) before listening: ${out}`));
    });
  });
}

/** An HTTP answer read whole. */
export interface FerryAnswer {
  status: number;
  headers: Headers;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface FerryCallOptions {
  token?: string;
  basic?: { username: string; password: string };
  /** Sent as JSON. */
  body?: unknown;
  /** A raw body (uploads), when there is no `body`. */
  raw?: Buffer | string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** One HTTP request with bearer or basic credentials; the answer's body is read whole. */
export async function ferryCall(url: string, method: string, o: FerryCallOptions = {}): Promise<FerryAnswer> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.basic) headers.authorization = 'Basic ' + Buffer.from(`${o.basic.username}:${o.basic.password}`).toString('base64');
  let body: string | Buffer | undefined;
  if (o.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(o.body);
  } else if (o.raw !== undefined) body = o.raw;
  const r = await fetch(url, { method, headers, body, signal: o.signal });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, json: <T>() => JSON.parse(text) as T };
}

/** An admin (`kind` 'admin') or user token; throws unless the answer is 200. */
export async function ferryToken(base: string, kind: 'admin' | 'user', username: string, password: string): Promise<string> {
  const r = await ferryCall(`${base}/api/v2/${kind === 'admin' ? 'token' : 'user/token'}`, 'GET', { basic: { username, password } });
  if (r.status !== 200) throw new Error(`${kind} token: ${r.status} ${r.text}`);
  return r.json<{ access_token: string }>().access_token;
}
