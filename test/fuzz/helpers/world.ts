/**
 * The world the fuzzer works in: a server with one object of every kind
 * (so that item routes can be addressed), credentials of every kind, and a
 * snapshot of everything stored (database objects through the API, files on
 * disk) to prove that refused requests changed nothing.
 */
import crypto from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, lstatSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type Hapi from '@hapi/hapi';
import { createTestApp, type TestApp } from '@ferry/core/testing';

export const PASSWORD = 'fuzz-user-password-1';
export const SHARE_PASSWORD = 'fuzz-share-pw';
export const SIGNING_PASSPHRASE = 'fuzz-signing-passphrase';
export const ADMIN = { username: 'admin', password: 'admin-password-1' };

/** A browser's web session: the `ferry_web` cookie's value and the session's CSRF token. */
export interface WebSession {
  cookie: string;
  csrf: string;
}

export interface World {
  ta: TestApp;
  server: Hapi.Server;
  /** The user fuzzed requests act as, and its home. */
  user: string;
  home: string;
  /** Another user whose home must never be touched. */
  otherHome: string;
  adminToken: string;
  userToken: string;
  adminKey: string;
  userKey: string;
  /** A second admin with one narrow permission (403 on routes needing others). */
  limitedAdminToken: string;
  /** A token that was logged out. */
  revokedAdminToken: string;
  revokedUserToken: string;
  /** Web sessions of the user (cookie value, CSRF token): `read` for GET, `end` for DELETE (a fuzzed DELETE may log it out). */
  webSessions: { read: WebSession; end: WebSession };
  /** The admin's web sessions (cookie ferry_admin): one for reads, one that a DELETE may end. */
  adminWebSessions: { read: WebSession; end: WebSession };
  /** The JWT signing key (HS256), to forge expired and foreign tokens. */
  jwtKey: string;
  adminUid: number;
  userUid: number;
  shares: { read: string; write: string; writePw: string; file: string };
  /** A TUS upload created before the run, at offset 0 of 16 bytes (share `writePw`). */
  tusUpload: string;
  /** A user-side TUS upload of fz-user created before the run, at offset 0 of 16 bytes. */
  userTusUpload: string;
  /** Names of existing objects, by path parameter name. */
  names: Record<string, string>;
  api(method: string, url: string, payload?: unknown, token?: string): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
}

export async function createWorld(): Promise<World> {
  const ta = await createTestApp({
    plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/actions-builtin' }],
    config: {
      httpd: { signing_passphrase: SIGNING_PASSPHRASE, bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] },
    },
  });
  const server = ta.server;
  const api = async (method: string, url: string, payload?: unknown, token?: string) => {
    const r = await ta.inject(method, url, { token: token ?? adminToken, payload });
    let body: unknown = r.payload;
    try {
      body = JSON.parse(r.payload);
    } catch {
      // not JSON
    }
    return { status: r.statusCode, body: body as any, headers: r.headers as Record<string, unknown> };
  };
  const must = async (method: string, url: string, payload?: unknown, token?: string) => {
    const r = await api(method, url, payload, token);
    if (r.status >= 300) throw new Error(`setup ${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
    return r;
  };
  let adminToken = await ta.adminToken();

  const root = path.join(ta.dataDir, 'homes');
  const home = path.join(root, 'fz-user');
  const otherHome = path.join(root, 'fz-other');
  for (const d of [path.join(home, 'docs', 'sub'), path.join(home, 'ro'), otherHome, path.join(ta.dataDir, 'folders', 'fz-folder')])
    mkdirSync(d, { recursive: true });
  writeFileSync(path.join(home, 'top.txt'), 'top file\n');
  writeFileSync(path.join(home, 'docs', 'a.txt'), 'a file in docs\n');
  writeFileSync(path.join(home, 'docs', 'sub', 'b.bin'), crypto.randomBytes(300));
  writeFileSync(path.join(otherHome, 'secret.txt'), 'not yours\n');

  await must('POST', '/api/v2/roles', { name: 'fz-role', description: 'fuzz role' });
  await must('POST', '/api/v2/folders', { name: 'fz-folder', mapped_path: path.join(ta.dataDir, 'folders', 'fz-folder') });
  await must('POST', '/api/v2/groups', { name: 'fz-group', description: 'fuzz group' });
  await must('POST', '/api/v2/users', {
    username: 'fz-user',
    password: PASSWORD,
    home_dir: home,
    permissions: { '/': ['*'] },
    virtual_folders: [{ name: 'fz-folder', virtual_path: '/vfolder', quota_size: -1, quota_files: -1 }],
    groups: [{ name: 'fz-group', type: 2 }],
    filters: { allow_api_key_auth: true, max_upload_file_size: 1024 * 1024 },
  });
  await must('POST', '/api/v2/users', { username: 'fz-other', password: PASSWORD, home_dir: otherHome, permissions: { '/': ['*'] } });
  await must('POST', '/api/v2/admins', { username: 'fz-limited', password: 'limited-password-1', permissions: ['view_status'] });
  await must('PUT', '/api/v2/admin/profile', { allow_api_key_auth: true });
  await must('POST', '/api/v2/eventactions', { name: 'fz-action', type: 15 });
  await must('POST', '/api/v2/eventrules', {
    name: 'fz-rule',
    status: 0,
    trigger: 3,
    conditions: { schedules: [{ minute: '30', hour: '2', day_of_week: '*', day_of_month: '*', month: '*' }] },
    actions: [{ name: 'fz-action' }],
  });
  await must('POST', '/api/v2/iplists/1', { ipornet: '192.0.2.10', description: 'fuzz' });
  const adminKeyRes = await must('POST', '/api/v2/apikeys', { name: 'fz-admin-key', scope: 1, admin: ADMIN.username });
  const userKeyRes = await must('POST', '/api/v2/apikeys', { name: 'fz-user-key', scope: 2, user: 'fz-user' });

  const userToken = await ta.userToken('fz-user', PASSWORD);
  const share = async (payload: Record<string, unknown>) => String((await must('POST', '/api/v2/user/shares', payload, userToken)).headers['x-object-id']);
  const shares = {
    read: await share({ name: 'fz-read', scope: 1, paths: ['/docs'] }),
    write: await share({ name: 'fz-write-ro', scope: 2, paths: ['/ro'] }),
    writePw: await share({ name: 'fz-write-pw', scope: 2, paths: ['/docs'], password: SHARE_PASSWORD }),
    file: await share({ name: 'fz-file', scope: 1, paths: ['/top.txt'] }),
  };
  // /ro becomes read-only after its write share was created: uploads through that share are refused
  const userRow = (await must('GET', '/api/v2/users/fz-user')).body as Record<string, unknown>;
  await must('PUT', '/api/v2/users/fz-user', { ...userRow, permissions: { '/': ['*'], '/ro': ['list', 'download'] } });
  const tus = await ta.inject('POST', '/api/v2/shares-chunked-uploads', {
    basic: { username: 'x', password: SHARE_PASSWORD },
    headers: {
      'tus-resumable': '1.0.0',
      'upload-length': '16',
      'upload-metadata': `share_id ${Buffer.from(shares.writePw).toString('base64')},path ${Buffer.from('tus.bin').toString('base64')}`,
    },
  });
  if (tus.statusCode !== 201) throw new Error(`setup TUS create: ${tus.statusCode} ${tus.payload}`);
  const userTus = await ta.inject('POST', '/api/v2/user/chunked-uploads', {
    token: await ta.userToken('fz-user', PASSWORD),
    headers: { 'tus-resumable': '1.0.0', 'upload-length': '16', 'upload-metadata': `path ${Buffer.from('/user-tus.bin').toString('base64')}` },
  });
  if (userTus.statusCode !== 201) throw new Error(`setup user TUS create: ${userTus.statusCode} ${userTus.payload}`);

  const revokedAdminToken = await ta.adminToken();
  await must('GET', '/api/v2/logout', undefined, revokedAdminToken);
  const revokedUserToken = await ta.userToken('fz-user', PASSWORD);
  await must('GET', '/api/v2/user/logout', undefined, revokedUserToken);
  const openWebSession = async (): Promise<WebSession> => {
    const r = await server.inject({ method: 'POST', url: '/api/v2/user/web-session', payload: { username: 'fz-user', password: PASSWORD } });
    const cookie = /ferry_web=([^;]+)/.exec(String(r.headers['set-cookie'] ?? ''))?.[1];
    if (r.statusCode !== 200 || !cookie) throw new Error(`setup web session: ${r.statusCode} ${r.payload}`);
    return { cookie, csrf: (JSON.parse(r.payload) as { csrf_token: string }).csrf_token };
  };
  const webSessions = { read: await openWebSession(), end: await openWebSession() };
  const openAdminWebSession = async (): Promise<WebSession> => {
    const r = await server.inject({ method: 'POST', url: '/api/v2/admin/web-session', payload: ADMIN });
    const cookie = /ferry_admin=([^;]+)/.exec(String(r.headers['set-cookie'] ?? ''))?.[1];
    if (r.statusCode !== 200 || !cookie) throw new Error(`setup admin web session: ${r.statusCode} ${r.payload}`);
    return { cookie, csrf: (JSON.parse(r.payload) as { csrf_token: string }).csrf_token };
  };
  const adminWebSessions = { read: await openAdminWebSession(), end: await openAdminWebSession() };
  const limitedAdminToken = await ta.adminToken('fz-limited', 'limited-password-1');
  adminToken = await ta.adminToken();

  const adminUid = (await must('GET', `/api/v2/admins/${ADMIN.username}`)).body.id as number;
  const userUid = (await must('GET', '/api/v2/users/fz-user')).body.id as number;
  const keys = (await must('GET', '/api/v2/apikeys')).body as { id: string; name: string }[];
  const adminKeyId = keys.find((k) => k.name === 'fz-admin-key')!.id;

  return {
    ta,
    server,
    user: 'fz-user',
    home,
    otherHome,
    adminToken,
    userToken: await ta.userToken('fz-user', PASSWORD),
    adminKey: String(adminKeyRes.body.key),
    userKey: String(userKeyRes.body.key),
    limitedAdminToken,
    revokedAdminToken,
    revokedUserToken,
    webSessions,
    adminWebSessions,
    jwtKey: crypto.createHash('sha256').update(`ferry-jwt:${SIGNING_PASSPHRASE}`).digest('base64'),
    adminUid,
    userUid,
    shares,
    tusUpload: String(tus.headers.location),
    userTusUpload: String(userTus.headers.location),
    names: {
      username: 'fz-user',
      name: 'fz-role',
      id: adminKeyId,
      type: '1',
      ipornet: '192.0.2.10',
      connectionID: 'fz-no-such-connection',
    },
    api,
  };
}

/** Files under a directory: relative path → size and sha256 (directories as `dir`). */
export function fileTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (e.isDirectory()) {
        out[rel] = 'dir';
        walk(p);
      } else {
        const st = lstatSync(p);
        out[rel] = st.isFile() ? `${st.size} ${crypto.createHash('sha256').update(readFileSync(p)).digest('hex')}` : 'other';
      }
    }
  };
  walk(dir);
  return out;
}

/**
 * Everything the fuzzed requests could change: every stored object (dumpdata,
 * with secrets as stored), the defender's hosts, the user's shares, the state
 * of the TUS upload, and every file under the data directory.
 */
export async function snapshot(w: World): Promise<Record<string, unknown>> {
  const dump = await w.api('GET', '/api/v2/dumpdata?output-data=1');
  if (dump.status !== 200) throw new Error(`dumpdata: ${dump.status}`);
  const data = dump.body as Record<string, unknown[]>;
  // last use of the keys and last login change with every authenticated request: not data the requests can set
  for (const k of (data.api_keys ?? []) as Record<string, unknown>[]) delete k.last_use_at;
  for (const section of ['users', 'admins'] as const) for (const a of (data[section] ?? []) as Record<string, unknown>[]) delete a.last_login;
  // a share upload cut by the client gives its use back, its time stays recorded
  for (const s of (data.shares ?? []) as Record<string, unknown>[]) delete s.last_use_at;
  const tus = await w.ta.inject('HEAD', w.tusUpload, { basic: { username: 'x', password: SHARE_PASSWORD }, headers: { 'tus-resumable': '1.0.0' } });
  const userTus = await w.ta.inject('HEAD', w.userTusUpload, { token: w.userToken, headers: { 'tus-resumable': '1.0.0' } });
  return {
    dump: data,
    defender: (await w.api('GET', '/api/v2/defender/hosts')).body,
    shares: ((await w.api('GET', '/api/v2/user/shares', undefined, w.userToken)).body as Record<string, unknown>[]).map(({ last_use_at: _, ...s }) => s),
    tus: { status: tus.statusCode, offset: tus.headers['upload-offset'], length: tus.headers['upload-length'] },
    userTus: { status: userTus.statusCode, offset: userTus.headers['upload-offset'], length: userTus.headers['upload-length'] },
    files: fileTree(w.ta.dataDir),
  };
}
