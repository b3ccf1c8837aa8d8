/**
 * Real `ferry serve` processes for the fault tests (not a test file: tap
 * reports it as "no tests found"): a config whose state lives in a given
 * directory, start, SIGKILL and start again on the same state, and the few
 * HTTP calls the tests make.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const ADMIN = { username: 'admin', password: 'faults-admin-password-1' };

/** The compiled CLI when FERRY_TEST_USE_DIST=1 (CI builds first), else the sources through tap's TypeScript loader. */
const CLI =
  process.env.FERRY_TEST_USE_DIST === '1'
    ? ['core/dist/src/cli.js']
    : ['--conditions=ferry-src', '--no-warnings', '--import=@tapjs/typescript/import', 'core/src/cli.ts'];

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SERVICE_') && !k.startsWith('TAP')) env[k] = v;
  return env;
}

export interface ConfigOptions {
  /** Where the node keeps its state (SQLite database, temp area, journal); default `<dir>/data`. */
  dataDir?: string;
  /** PostgreSQL URL; SQLite in the data directory when absent. */
  databaseUrl?: string;
  /** Extra YAML appended at the top level. */
  extra?: string;
  /** Extra YAML lines of the `common` section (indented by two spaces). */
  common?: string;
  plugins?: string[];
}

/** Writes `<dir>/ferry.yaml` and returns its path. */
export function writeConfig(dir: string, o: ConfigOptions = {}): string {
  const dataDir = o.dataDir ?? path.join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const db = o.databaseUrl ? `data_provider:\n  driver: postgresql\n  url: "${o.databaseUrl}"\n` : 'data_provider:\n  driver: sqlite\n  name: ferry.db\n';
  const plugins = (o.plugins ?? ['@ferry/fs-local']).map((p) => `  - name: "${p}"\n`).join('');
  const file = path.join(dir, 'ferry.yaml');
  writeFileSync(
    file,
    `common:\n  data_dir: "${dataDir}"\n  max_per_host_transfers: 0\n${o.common ?? ''}${db}httpd:\n  bindings:\n    - address: 127.0.0.1\n      port: 0\nkms:\n  master_key: faults-master-key-0123456789abcdef\nlog:\n  level: info\nplugins:\n${plugins}defaults:\n  admin_username: ${ADMIN.username}\n  admin_password: ${ADMIN.password}\n${o.extra ?? ''}`,
  );
  return file;
}

export interface Server {
  url: string;
  proc: ChildProcess;
  /** Everything the process wrote so far (JSON log lines). */
  output(): string;
  /** Sends a signal (SIGTERM by default) and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `ferry serve --config <file>` and resolves once it listens. */
export function serve(config: string): Promise<Server> {
  const proc = spawn(process.execPath, [...CLI, 'serve', '--config', config], { cwd: ROOT, env: cleanEnv() });
  let out = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 120_000);
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
      reject(new Error(`server exited (${code}) before listening: ${out}`));
    });
  });
}

export interface Answer {
  status: number;
  text: string;
  headers: Headers;
  json<T = Record<string, unknown>>(): T;
}

/** A JSON request with basic or bearer credentials. */
export async function call(
  url: string,
  method: string,
  o: { token?: string; basic?: { username: string; password: string }; body?: unknown; signal?: AbortSignal } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.basic) headers.authorization = 'Basic ' + Buffer.from(`${o.basic.username}:${o.basic.password}`).toString('base64');
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(url, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body), signal: o.signal });
  const text = await r.text();
  return { status: r.status, text, headers: r.headers, json: <T>() => JSON.parse(text) as T };
}

export async function token(base: string, kind: 'admin' | 'user', username: string, password: string): Promise<string> {
  const r = await call(`${base}/api/v2/${kind === 'admin' ? 'token' : 'user/token'}`, 'GET', { basic: { username, password } });
  if (r.status !== 200) throw new Error(`token: ${r.status} ${r.text}`);
  return r.json<{ access_token: string }>().access_token;
}

/** Answer of a streamed upload, or the error that ended it (the server went away). */
export type UploadOutcome = { status: number; body: string } | { error: string };

/**
 * A raw upload (POST /api/v2/user/files/upload) whose body the caller sends
 * piece by piece: `send` writes bytes, `end` finishes the body; `outcome`
 * settles with the answer or the connection's error.
 */
export function streamUpload(base: string, userToken: string, vpath: string, size: number) {
  const u = new URL(`${base}/api/v2/user/files/upload`);
  u.searchParams.set('path', vpath);
  const req = http.request(u, {
    method: 'POST',
    headers: { authorization: `Bearer ${userToken}`, 'content-length': String(size), 'content-type': 'application/octet-stream' },
  });
  const outcome = new Promise<UploadOutcome>((resolve) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
  });
  return {
    outcome,
    send: (b: Buffer) => new Promise<void>((resolve) => (req.write(b) ? resolve() : req.once('drain', () => resolve()))),
    end: (b?: Buffer) => void req.end(b),
    destroy: () => void req.destroy(),
  };
}

export interface Tree {
  /** Regular files by path relative to the root. */
  files: Map<string, number>;
  /** Every name met (files, directories, others), relative. */
  names: string[];
  size: number;
}

/** Walks a directory: regular files with their sizes, and every name. */
export async function walk(root: string): Promise<Tree> {
  const t: Tree = { files: new Map(), names: [], size: 0 };
  const visit = async (dir: string) => {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const full = path.join(dir, name);
      const rel = path.relative(root, full);
      t.names.push(rel);
      const st = await lstat(full);
      if (st.isDirectory()) await visit(full);
      else if (st.isFile()) {
        t.files.set(rel, st.size);
        t.size += st.size;
      }
    }
  };
  await visit(root);
  return t;
}
