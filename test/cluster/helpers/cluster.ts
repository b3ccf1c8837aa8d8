/**
 * A cluster of real `ferry serve` processes on loopback sharing one fresh
 * PostgreSQL database (not a test file: tap reports it as "no tests found").
 * Each node has its own data directory (its own temporary area, secrets
 * file and logs); what the nodes share is the database, the master key and
 * the directories named in `shared` (homes, share uploads).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const ADMIN = { username: 'admin', password: 'cluster-admin-password-1' };

/** The compiled CLI when FERRY_TEST_USE_DIST=1 (CI builds first), else the sources through tap's TypeScript loader. */
const CLI =
  process.env.FERRY_TEST_USE_DIST === '1'
    ? ['core/dist/src/cli.js']
    : ['--conditions=ferry-src', '--no-warnings', '--import=@tapjs/typescript/import', 'core/src/cli.ts'];

export interface Node {
  name: string;
  url: string;
  proc: ChildProcess;
  /** Everything the process wrote so far (JSON log lines). */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SERVICE_') && !k.startsWith('TAP')) env[k] = v;
  return env;
}

/**
 * Writes the YAML configuration of node `name` under `dir`. `yaml`: extra
 * top-level sections (appended as is, so they must not repeat `common`,
 * `httpd` or the others written here; use `common`/`binding` for those).
 */
export function writeNodeConfig(
  dir: string,
  name: string,
  o: { databaseUrl: string; common?: string[]; binding?: string[]; plugins?: string[]; yaml?: string },
): string {
  const data = path.join(dir, name);
  mkdirSync(data, { recursive: true });
  const file = path.join(data, 'ferry.yaml');
  const lines = [
    'common:',
    `  data_dir: "${data}"`,
    `  instance_id: ${name}`,
    ...(o.common ?? []).map((l) => `  ${l}`),
    'data_provider:',
    '  driver: postgresql',
    `  url: "${o.databaseUrl}"`,
    '  pool_size: 4',
    'httpd:',
    '  bindings:',
    '    - address: 127.0.0.1',
    '      port: 0',
    ...(o.binding ?? []).map((l) => `      ${l}`),
    'kms:',
    '  master_key: cluster-master-key-0123456789abcdef',
    'plugins:',
    ...(o.plugins ?? ['@ferry/fs-local']).map((p) => `  - name: "${p}"`),
    'defaults:',
    `  admin_username: ${ADMIN.username}`,
    `  admin_password: ${ADMIN.password}`,
    o.yaml ?? '',
  ];
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

// every node started is killed when the test process exits, also when it fails before its teardown
// (a node that did not start, an uncaught error): no node outlives its test
const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

/** Starts `ferry serve --config <file>` and resolves once it listens. */
export function startNode(name: string, config: string): Promise<Node> {
  const proc = spawn(process.execPath, [...CLI, 'serve', '--config', config], { cwd: ROOT, env: cleanEnv() });
  started.add(proc);
  let out = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node ${name} did not start: ${out}`)), 90_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"uri":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/.exec(out);
      if (m && timer) {
        clearTimeout(timer);
        resolve({
          name,
          url: m[1]!,
          proc,
          output: () => out,
          async kill(signal: NodeJS.Signals = 'SIGTERM') {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
            await exited;
          },
        });
      }
    });
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node ${name} exited (${code}) before listening: ${out}`));
    });
  });
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface CallOptions {
  token?: string;
  apiKey?: string;
  basic?: { username: string; password: string };
  body?: unknown;
  /** A raw body (uploads). */
  raw?: Buffer | string;
  headers?: Record<string, string>;
  /** Client address, sent in X-Forwarded-For (the nodes trust it from 127.0.0.1). */
  ip?: string;
}

/** One HTTP request; the body is read whole (the suite moves small files only). */
export async function call(base: string, method: string, route: string, o: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.apiKey) headers['x-service-api-key'] = o.apiKey;
  if (o.basic) headers.authorization = 'Basic ' + Buffer.from(`${o.basic.username}:${o.basic.password}`).toString('base64');
  if (o.ip) headers['x-forwarded-for'] = o.ip;
  let body: string | Buffer | undefined;
  if (o.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(o.body);
  } else if (o.raw !== undefined) body = o.raw;
  const r = await fetch(base + route, { method, headers, body });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, json: <T>() => JSON.parse(text) as T };
}

export async function adminToken(base: string): Promise<string> {
  const r = await call(base, 'GET', '/api/v2/token', { basic: ADMIN });
  if (r.status !== 200) throw new Error(`admin token: ${r.status} ${r.text}`);
  return r.json<{ access_token: string }>().access_token;
}

export async function userToken(base: string, username: string, password: string, ip?: string): Promise<Reply> {
  return call(base, 'GET', '/api/v2/user/token', { basic: { username, password }, ip });
}

/**
 * Calls `probe` until it resolves true or `ms` have passed; resolves to the
 * last result. For changes that reach the other nodes within a bounded time
 * (cache TTLs): the bound is what is checked, not a speed.
 */
export async function eventually(probe: () => Promise<boolean>, ms: number, every = 100): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > end) return false;
    await sleep(every);
  }
}
