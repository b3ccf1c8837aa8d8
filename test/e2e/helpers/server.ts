/**
 * Runs `ferry serve` as a real process for end-to-end tests (not a test
 * file: tap reports it as "no tests found").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const ADMIN = { username: 'admin', password: 'e2e-admin-password-1' };

/** The compiled CLI when FERRY_TEST_USE_DIST=1 (CI builds first), else the sources through tap's TypeScript loader. */
export const CLI =
  process.env.FERRY_TEST_USE_DIST === '1'
    ? ['core/dist/src/cli.js']
    : ['--conditions=ferry-src', '--no-warnings', '--import=@tapjs/typescript/import', 'core/src/cli.ts'];

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SERVICE_') && !k.startsWith('TAP')) env[k] = v;
  return env;
}

/**
 * Writes a config for a node whose state lives under `dir` (SQLite, or the
 * PostgreSQL URL given), loading `plugins` (npm names; default: fs-local only).
 */
export function writeConfig(dir: string, o: { databaseUrl?: string; extra?: string; plugins?: string[] } = {}): string {
  mkdirSync(path.join(dir, 'data'), { recursive: true });
  const db = o.databaseUrl ? `data_provider:\n  driver: postgresql\n  url: "${o.databaseUrl}"\n` : 'data_provider:\n  driver: sqlite\n  name: ferry.db\n';
  const plugins = (o.plugins ?? ['@ferry/fs-local']).map((p) => `  - name: "${p}"\n`).join('');
  const file = path.join(dir, 'ferry.yaml');
  writeFileSync(
    file,
    `common:\n  data_dir: "${path.join(dir, 'data')}"\n${db}httpd:\n  bindings:\n    - address: 127.0.0.1\n      port: 0\nkms:\n  master_key: e2e-master-key-0123456789abcdef\nlog:\n  level: info\nplugins:\n${plugins}defaults:\n  admin_username: ${ADMIN.username}\n  admin_password: ${ADMIN.password}\n${o.extra ?? ''}`,
  );
  return file;
}

export interface ServerProcess {
  url: string;
  proc: ChildProcess;
  output(): string;
  /** Sends a signal and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `ferry serve --config <file>` and resolves once it listens. */
export function serve(config: string, extraArgs: string[] = []): Promise<ServerProcess> {
  const proc = spawn(process.execPath, [...extraArgs, ...CLI, 'serve', '--config', config], { cwd: ROOT, env: cleanEnv() });
  let out = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /"uri":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
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
      reject(new Error(`server exited (${code}) before listening: ${out}`));
    });
  });
}

/** JSON request with basic or bearer credentials. */
export async function call(url: string, method: string, o: { token?: string; basic?: { username: string; password: string }; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.basic) headers.authorization = 'Basic ' + Buffer.from(`${o.basic.username}:${o.basic.password}`).toString('base64');
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(url, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await r.text();
  return { status: r.status, text, json: () => JSON.parse(text) as unknown };
}

export async function token(base: string, kind: 'admin' | 'user', username: string, password: string): Promise<string> {
  const r = await call(`${base}/api/v2/${kind === 'admin' ? 'token' : 'user/token'}`, 'GET', { basic: { username, password } });
  if (r.status !== 200) throw new Error(`token: ${r.status} ${r.text}`);
  return (r.json() as { access_token: string }).access_token;
}
