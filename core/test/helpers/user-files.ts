/**
 * Helpers for the file API tests (not a test file: tap reports it as
 * "no tests found"). Users and folders are created through the admin API.
 */
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { createTestApp, type TestApp, type TestAppOptions } from '../../src/testing.js';
import { Folder, User } from '../../src/data/entities/index.js';

export const PASSWORD = 'user-password-1';

export interface UserSpec {
  username: string;
  permissions?: Record<string, string[]>;
  filters?: Record<string, unknown>;
  folders?: { name: string; virtual_path: string; quota_size?: number; quota_files?: number }[];
  [k: string]: unknown;
}

/** Counters only a restore may set: tests set them in the database. */
const STORED_ONLY = ['used_quota_size', 'used_quota_files', 'used_upload_data_transfer', 'used_download_data_transfer', 'first_upload', 'first_download'];

export async function fileApp(o: TestAppOptions = {}): Promise<TestApp & { root: string }> {
  const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }], ...o });
  const root = path.join(ta.dataDir, 'homes');
  mkdirSync(root, { recursive: true });
  return Object.assign(ta, { root });
}

const adminTokens = new WeakMap<TestApp, Promise<string>>();
function adminToken(ta: TestApp): Promise<string> {
  let tok = adminTokens.get(ta);
  if (!tok) {
    tok = ta.adminToken();
    adminTokens.set(ta, tok);
  }
  return tok;
}

export async function api(ta: TestApp, method: string, url: string, payload?: unknown): Promise<unknown> {
  const r = await ta.inject(method, url, { token: await adminToken(ta), payload });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.payload}`);
  return r.payload ? JSON.parse(r.payload) : undefined;
}

/** Creates a user (POST /api/v2/users) whose home is `<dataDir>/homes/<username>`; returns its home path. */
export async function addUser(ta: TestApp & { root: string }, spec: UserSpec): Promise<string> {
  const { folders, ...rest } = spec;
  const home = path.join(ta.root, spec.username);
  mkdirSync(home, { recursive: true });
  await api(ta, 'POST', '/api/v2/users', {
    password: PASSWORD,
    permissions: { '/': ['*'] },
    home_dir: home,
    ...rest,
    virtual_folders: (folders ?? []).map((f) => ({ quota_size: -1, quota_files: -1, ...f })),
  });
  return home;
}

/** Creates a local virtual folder (POST /api/v2/folders) mapped to `<dataDir>/folders/<name>`; returns the mapped path. */
export async function addFolder(ta: TestApp, name: string): Promise<string> {
  const mapped = path.join(ta.dataDir, 'folders', name);
  mkdirSync(mapped, { recursive: true });
  await api(ta, 'POST', '/api/v2/folders', { name, mapped_path: mapped });
  return mapped;
}

/** Changes a user through GET + PUT /api/v2/users/{username} (stored counters directly in the database). */
export async function updateUser(ta: TestApp, username: string, changes: Record<string, unknown>): Promise<void> {
  const stored = Object.fromEntries(Object.entries(changes).filter(([k]) => STORED_ONLY.includes(k)));
  const rest = Object.fromEntries(Object.entries(changes).filter(([k]) => !STORED_ONLY.includes(k)));
  if (Object.keys(rest).length) {
    const current = (await api(ta, 'GET', `/api/v2/users/${encodeURIComponent(username)}`)) as Record<string, unknown>;
    await api(ta, 'PUT', `/api/v2/users/${encodeURIComponent(username)}`, { ...current, ...rest });
  }
  if (Object.keys(stored).length) await ta.app.orm.em.fork().nativeUpdate(User, { username }, stored);
}

export async function userRow(ta: TestApp, username: string): Promise<User> {
  return ta.app.orm.em.fork().findOneOrFail(User, { username });
}

export async function folderRow(ta: TestApp, name: string): Promise<Folder> {
  return ta.app.orm.em.fork().findOneOrFail(Folder, { name });
}

/** Starts the HTTP listener (port 0) and returns its base URL, for tests that need real sockets. */
export async function listen(ta: TestApp): Promise<string> {
  await ta.server.start();
  return ta.server.info.uri;
}

/** A multipart/form-data body with the given files (field `filenames` unless set). */
export function multipart(files: { name: string; data: string | Buffer; field?: string }[], fields: Record<string, string> = {}) {
  const boundary = '----ferry' + Math.random().toString(16).slice(2);
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  for (const f of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${f.field ?? 'filenames'}"; filename="${f.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
    );
    parts.push(Buffer.isBuffer(f.data) ? f.data : Buffer.from(f.data));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export interface SlowUpload {
  /** Settles with the response, or the socket error when the exchange was cut. */
  result: Promise<{ status?: number; body?: string; error?: Error }>;
  sent(): number;
  /** Destroys the client socket mid-upload. */
  cut(): void;
}

/** A raw upload over a real socket, sent chunk by chunk (`contentLength` false: chunked encoding). */
export function slowUpload(
  base: string,
  token: string,
  vpath: string,
  o: { chunks: number; size: number; delayMs: number; contentLength?: boolean },
): SlowUpload {
  const total = o.chunks * o.size;
  const headers: Record<string, string | number> = { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' };
  if (o.contentLength !== false) headers['content-length'] = total;
  const req = http.request(`${base}/api/v2/user/files/upload?path=${encodeURIComponent(vpath)}`, { method: 'POST', headers });
  let sent = 0;
  let stopped = false;
  const result = new Promise<{ status?: number; body?: string; error?: Error }>((resolve) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
      res.on('error', (error) => resolve({ status: res.statusCode, error }));
    });
    req.on('error', (error) => resolve({ error }));
  });
  void (async () => {
    for (let i = 0; i < o.chunks && !stopped; i++) {
      await sleep(o.delayMs);
      if (stopped || req.destroyed) return;
      if (!req.write(Buffer.alloc(o.size, i & 0xff))) await once(req, 'drain').catch(() => undefined);
      sent += o.size;
    }
    if (!stopped && !req.destroyed) req.end();
  })().catch(() => undefined);
  return {
    result,
    sent: () => sent,
    cut() {
      stopped = true;
      req.destroy();
    },
  };
}

/** A download over a real socket; counts the bytes received. */
export function socketDownload(base: string, token: string, vpath: string, headers: Record<string, string> = {}) {
  let received = 0;
  let req: http.ClientRequest;
  const result = new Promise<{ status?: number; complete: boolean; error?: Error }>((resolve) => {
    req = http.get(`${base}/api/v2/user/files?path=${encodeURIComponent(vpath)}`, { headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
      res.on('data', (d: Buffer) => (received += d.length));
      res.on('end', () => resolve({ status: res.statusCode, complete: res.complete }));
      res.on('error', (error) => resolve({ status: res.statusCode, complete: false, error }));
      res.on('aborted', () => resolve({ status: res.statusCode, complete: false }));
    });
    req.on('error', (error) => resolve({ complete: false, error }));
  });
  return { result, received: () => received, cut: () => req.destroy() };
}

/** Polls until `ok` holds (or ~5 s passed); returns the last value. */
export async function eventually<T>(read: () => Promise<T> | T, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  let v = await read();
  while (!ok(v) && Date.now() < end) {
    await sleep(20);
    v = await read();
  }
  return v;
}
