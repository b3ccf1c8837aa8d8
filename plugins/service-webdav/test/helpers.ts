import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp } from '@ferry/core/testing';
import type { Test } from 'tap';

/** The plugin as the tests load it: by its package name (its sources under the ferry-src condition). */
export const PLUGIN = { name: '@ferry/service-webdav' };

export interface WebdavStatus {
  is_active: boolean;
  bindings: { address: string; port: number; prefix: string }[] | null;
}

export interface Harness {
  ta: TestApp;
  token: string;
  port: number;
  /** http://127.0.0.1:PORT + prefix, no trailing slash. */
  base: string;
  /** Creates a user through the REST API (all permissions on '/' unless given); returns its home directory. Password: `<username>-pass-1`. */
  addUser(username: string, extra?: Record<string, unknown>): Promise<string>;
  status(): Promise<WebdavStatus>;
}

/** A started app serving WebDAV on a free port of 127.0.0.1. */
export async function startWebdav(
  t: Test,
  o: { webdav?: Record<string, unknown>; config?: Record<string, unknown>; backends?: string[]; databaseUrl?: string; dataDir?: string } = {},
): Promise<Harness> {
  const plugin = { ...PLUGIN, config: { bindings: [{ address: '127.0.0.1', port: 0 }], ...o.webdav } };
  const backends = (o.backends ?? ['@ferry/fs-local']).map((name) => ({ name }));
  const ta = await createTestApp({
    plugins: [...backends, plugin],
    ...(o.config ? { config: o.config } : {}),
    ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
    ...(o.dataDir ? { dataDir: o.dataDir } : {}),
  });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  await ta.app.start();
  const status = async () => {
    const r = await ta.inject('GET', '/api/v2/status', { token });
    return (r.result as { webdav: WebdavStatus }).webdav;
  };
  const port = (await status()).bindings![0]!.port;
  const prefix = String(o.webdav?.prefix ?? '/').replace(/\/+$/, '');
  const addUser = async (username: string, extra: Record<string, unknown> = {}) => {
    const home = path.join(ta.dataDir, 'homes', username);
    const payload = { username, password: `${username}-pass-1`, status: 1, home_dir: home, permissions: { '/': ['*'] }, ...extra };
    const r = await ta.inject('POST', '/api/v2/users', { token, payload });
    if (r.statusCode !== 201) throw new Error(r.payload);
    return home;
  };
  return { ta, token, port, base: `http://127.0.0.1:${port}${prefix}`, addUser, status };
}

// the real client programs' runner, shared by the front-ends' tests
import { run, type Run } from '@ferry/testkit';

export { run, type Run };

/** A request with Basic credentials (fetch). */
export function dav(
  h: Harness,
  user: string,
  method: string,
  urlPath: string,
  o: { headers?: Record<string, string>; body?: string | Buffer; password?: string } = {},
) {
  const auth = 'Basic ' + Buffer.from(`${user}:${o.password ?? `${user}-pass-1`}`).toString('base64');
  return fetch(h.base + urlPath, { method, headers: { authorization: auth, ...o.headers }, ...(o.body !== undefined ? { body: o.body } : {}) });
}

export interface CurlResult {
  status: number;
  headers: Record<string, string>;
  body: string;
}

let curlSeq = 0;
/** Runs curl against the harness (path under the prefix, `--path-as-is`), as `user` with its password unless `auth` says otherwise. */
export async function curl(h: Harness, dir: string, urlPath: string, args: string[] = [], auth: string | null = 'u1'): Promise<CurlResult> {
  const n = ++curlSeq;
  const bodyFile = path.join(dir, `curl-body-${n}`);
  const headFile = path.join(dir, `curl-head-${n}`);
  const creds = auth === null ? [] : ['-u', auth.includes(':') ? auth : `${auth}:${auth}-pass-1`];
  const r = await run('curl', ['-s', '--path-as-is', '-o', bodyFile, '-D', headFile, '-w', '%{http_code}', ...creds, ...args, h.base + urlPath]);
  const headers: Record<string, string> = {};
  const raw = existsSync(headFile) ? readFileSync(headFile, 'utf8') : '';
  // the last response's headers (after a 100 Continue)
  const last =
    raw
      .trim()
      .split(/\r?\n\r?\n/)
      .pop() ?? '';
  for (const line of last.split(/\r?\n/).slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(r.stdout.trim()), headers, body: existsSync(bodyFile) ? readFileSync(bodyFile, 'utf8') : '' };
}
