/**
 * Real `ferry serve` processes for the fault tests (not a test file: tap
 * reports it as "no tests found"): a config whose state lives in a given
 * directory, start, SIGKILL and start again on the same state, and the few
 * HTTP calls the tests make.
 */
import { lstat, readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { ferryCall as call, ferryToken as token, startFerry, writeFerryConfig, type FerryAnswer, type FerryProcess } from '@ferry/testkit';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const ADMIN = { username: 'admin', password: 'faults-admin-password-1' };

export interface ConfigOptions {
  /** Where the node keeps its state (SQLite database, temp area, journal); default `<dir>/data`. */
  dataDir?: string;
  /** PostgreSQL URL; SQLite in the data directory when absent. */
  databaseUrl?: string;
  /** Extra YAML appended at the top level. */
  extra?: string;
  /** Extra lines of the `common` section (not indented). */
  common?: string[];
  plugins?: string[];
}

/** Writes `<dir>/ferry.yaml` and returns its path. */
export function writeConfig(dir: string, o: ConfigOptions = {}): string {
  return writeFerryConfig(path.join(dir, 'ferry.yaml'), {
    dataDir: o.dataDir ?? path.join(dir, 'data'),
    databaseUrl: o.databaseUrl,
    common: ['max_per_host_transfers: 0', ...(o.common ?? [])],
    masterKey: 'faults-master-key-0123456789abcdef',
    admin: ADMIN,
    logLevel: 'info',
    plugins: o.plugins,
    extra: o.extra,
  });
}

export type Server = FerryProcess;

/** Starts `ferry serve --config <file>` and resolves once it listens. */
export function serve(config: string): Promise<Server> {
  return startFerry(config, { cwd: ROOT, timeoutMs: 120_000 });
}

export type Answer = FerryAnswer;

/** A JSON request with basic or bearer credentials; a token (admin or user). */
export { call, token };

/**
 * Creates user `username` through the admin API (status 1, every permission,
 * home `home`; `more`: other members, e.g. virtual folders or a filesystem),
 * checks the 201 (one assertion) and returns the user's token.
 */
export async function createUser(
  t: Test,
  base: string,
  admin: string,
  user: { username: string; password: string; home: string; more?: Record<string, unknown> },
): Promise<string> {
  const created = await call(`${base}/api/v2/users`, 'POST', {
    token: admin,
    body: { username: user.username, password: user.password, status: 1, home_dir: user.home, permissions: { '/': ['*'] }, ...user.more },
  });
  t.equal(created.status, 201, created.text);
  return token(base, 'user', user.username, user.password);
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
