/**
 * The world of the escape suite (not a test file): a Ferry server listening
 * on 127.0.0.1, users whose homes are on the local backends (provider 0
 * fs-local and provider 4 fs-crypt), symlinks planted in those homes, and a
 * canary outside every home whose content, names and inode metadata are
 * recorded so that any read, listing, write, rename, removal or touch from
 * inside a home can be proved afterwards.
 *
 * Layout under the server's data directory:
 *   homes/<user>/          the homes (fixture below)
 *   outside/<user>/        canary of <user>: files with unique random content,
 *                          names never sent in any request; encrypted with the
 *                          user's passphrase for provider 4 (so a read through
 *                          the backend decrypts to the recognisable plaintext)
 *   homes/vic/             a third user's home (never logged in): also canary
 */
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, readlink, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { inflateRawSync, constants as zc } from 'node:zlib';
import { createTestApp, type TestApp } from '@ferry/core/testing';
import { TOKENS, type EventManager } from '@ferry/core';
import { CryptFs } from '@ferry/fs-crypt';

/** Fixed seed of everything random in the suite. */
export const SEED = 0x5eedfe77;

/** mulberry32: a small deterministic PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seededBytes(rand: () => number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

const hex = (rand: () => number, n: number) => seededBytes(rand, n).toString('hex');

// ---- HTTP over real sockets --------------------------------------------------------------

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** False when the connection was cut before the body ended. */
  complete: boolean;
  error?: string;
}

export interface RequestOptions {
  token?: string;
  basic?: { username: string; password: string };
  body?: Buffer | string;
  json?: unknown;
  headers?: Record<string, string>;
}

/**
 * Requests with the path sent exactly as given (no URL normalisation: `..`
 * and percent escapes reach the server as written), keep-alive sockets.
 */
export class Client {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  readonly host: string;
  readonly port: number;
  /** Every reply seen, handed to the listeners (the canary checks them). */
  readonly listeners: ((label: string, r: Reply) => void)[] = [];
  requests = 0;

  constructor(base: string) {
    const u = new URL(base);
    this.host = u.hostname;
    this.port = Number(u.port);
  }

  request(method: string, rawPath: string, o: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.basic) headers.authorization = 'Basic ' + Buffer.from(`${o.basic.username}:${o.basic.password}`).toString('base64');
    let body: Buffer | undefined;
    if (o.json !== undefined) {
      body = Buffer.from(JSON.stringify(o.json));
      headers['content-type'] ??= 'application/json';
    } else if (o.body !== undefined) {
      body = Buffer.isBuffer(o.body) ? o.body : Buffer.from(o.body);
      headers['content-type'] ??= 'application/octet-stream';
    }
    if (body) headers['content-length'] = String(body.length);
    this.requests++;
    const label = `${method} ${rawPath.length > 200 ? rawPath.slice(0, 200) + '…' : rawPath}`;
    return new Promise<Reply>((resolve) => {
      let settled = false;
      const done = (r: Reply) => {
        if (settled) return;
        settled = true;
        for (const l of this.listeners) l(label, r);
        resolve(r);
      };
      const req = http.request({ host: this.host, port: this.port, method, path: rawPath, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: res.complete }));
        res.on('error', (err) => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: false, error: String(err) }));
        res.on('aborted', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: false, error: 'aborted' }));
      });
      // A hung exchange (the server neither answers nor closes) ends as a failed reply instead of
      // holding the suite until tap's timeout; 20 s of silence is far past any answer here.
      req.setTimeout(IDLE_MS, () => req.destroy(new Error(`hung: nothing received for ${IDLE_MS / 1000} s`)));
      req.on('error', (err) => done({ status: 0, headers: {}, body: Buffer.alloc(0), complete: false, error: String(err) }));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export const q = encodeURIComponent;

/** Silence after which a request is abandoned as hung (socket idle time, not a deadline for the answer). */
const IDLE_MS = 20_000;

/** A multipart/form-data body (field `filenames`), boundary fixed. */
export function multipart(files: { name: string; data: string | Buffer }[]): { body: Buffer; headers: Record<string, string> } {
  const boundary = '----ferry-escapes-7f3a9c';
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="filenames"; filename="${f.name.replace(/"/g, '%22')}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
    );
    parts.push(Buffer.isBuffer(f.data) ? f.data : Buffer.from(f.data));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

// ---- the canary ----------------------------------------------------------------------------

/** Everything under `root` (links not followed): type, mode, size, mtime, ctime, inode, content digest, sorted listing. */
export function snapshotTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string) => {
    const st = lstatSync(p, { bigint: true });
    const rel = path.relative(root, p) || '.';
    const meta = `mode=${st.mode} ino=${st.ino} size=${st.size} mtime=${st.mtimeNs} ctime=${st.ctimeNs} nlink=${st.nlink}`;
    if (st.isSymbolicLink()) out[rel] = `link ${meta}`;
    else if (st.isDirectory()) {
      const names = readdirSync(p).sort();
      out[rel] = `dir ${meta} [${names.join(',')}]`;
      for (const n of names) walk(path.join(p, n));
    } else if (st.isFile()) out[rel] = `file ${meta} sha256=${createHash('sha256').update(readFileSync(p)).digest('hex')}`;
    else out[rel] = `other ${meta}`;
  };
  walk(root);
  return out;
}

/** Entries of a zip, tolerant: local headers found anywhere, each deflated entry inflated as far as it goes. */
export function zipPayloads(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let i = buf.indexOf('PK\x03\x04');
  while (i >= 0 && i + 30 <= buf.length) {
    const method = buf.readUInt16LE(i + 8);
    const start = i + 30 + buf.readUInt16LE(i + 26) + buf.readUInt16LE(i + 28);
    if (method === 8 && start < buf.length) {
      try {
        out.push(inflateRawSync(buf.subarray(start), { finishFlush: zc.Z_SYNC_FLUSH }));
      } catch {
        // not a deflate stream there (or damaged): the raw bytes are scanned anyway
      }
    }
    i = buf.indexOf('PK\x03\x04', i + 4);
  }
  return out;
}

export interface Leak {
  label: string;
  status: number;
  what: string;
}

/**
 * Recognises canary bytes and names in replies. Needles: 48-byte slices of
 * random content of each canary file, as stored on disk and, for encrypted
 * files, as plaintext. Names: canary names that no request ever contains,
 * so they can only appear in a reply through a listing of the canary.
 */
export class Canary {
  readonly needles: { what: string; bytes: Buffer }[] = [];
  readonly names: string[] = [];
  readonly roots: string[] = [];
  readonly leaks: Leak[] = [];
  private before: Record<string, string>[] = [];

  addNeedle(what: string, bytes: Buffer): void {
    for (const off of [0, Math.floor(bytes.length / 2) - 24, bytes.length - 48]) this.needles.push({ what, bytes: Buffer.from(bytes.subarray(off, off + 48)) });
  }

  /** The hex MD5 and SHA-256 of a canary file (what md5sum and sha256sum over SSH would print of it). */
  addDigests(what: string, data: Buffer): void {
    for (const alg of ['md5', 'sha256']) this.needles.push({ what: `${alg} of ${what}`, bytes: Buffer.from(createHash(alg).update(data).digest('hex')) });
  }

  /** Scans one reply; records what it recognises. */
  check(label: string, r: Reply): void {
    const bodies = [r.body, ...(r.body.includes('PK\x03\x04') ? zipPayloads(r.body) : [])];
    this.scan(label, r.status, [...bodies, Buffer.from(JSON.stringify(r.headers))]);
  }

  /** Scans the parts of one answer of any protocol (`status`: its HTTP status or SFTP code); records the first thing recognised. */
  scan(label: string, status: number, parts: Buffer[]): void {
    for (const b of parts) {
      for (const n of this.needles) {
        if (b.includes(n.bytes)) {
          this.leaks.push({ label, status, what: `content of ${n.what}` });
          return;
        }
      }
      for (const name of this.names) {
        if (b.includes(name)) {
          this.leaks.push({ label, status, what: `canary name ${name}` });
          return;
        }
      }
    }
  }

  /** Records the state of every canary root (after setup, before any request). */
  record(): void {
    this.before = this.roots.map(snapshotTree);
  }

  /** Per root: the entries that differ from the recorded state (empty when untouched). */
  changes(): { root: string; diff: string[] }[] {
    return this.roots.map((root, i) => {
      const now = snapshotTree(root);
      const was = this.before[i]!;
      const diff: string[] = [];
      for (const k of new Set([...Object.keys(was), ...Object.keys(now)])) {
        if (was[k] !== now[k]) diff.push(`${k}: ${was[k] ?? '(absent)'} -> ${now[k] ?? '(absent)'}`);
      }
      return { root, diff };
    });
  }
}

// ---- server and users ------------------------------------------------------------------

export type Provider = 0 | 4;

export interface User {
  name: string;
  password: string;
  provider: Provider;
  home: string;
  /** This user's canary directory (outside every home). */
  outside: string;
  token: string;
  /** A writer of stored files in the home (encrypted for provider 4), behind Ferry's back. */
  put(rel: string, data: Buffer | string): Promise<void>;
  /** Plaintext of the canary files, by name relative to `outside`. */
  canaryFiles: Map<string, Buffer>;
}

export interface World {
  ta: TestApp;
  base: string;
  client: Client;
  canary: Canary;
  admin: string;
  dataDir: string;
  outsideRoot: string;
  users: User[];
  events: EventManager;
  /** The SFTP service's port on 127.0.0.1 (0 unless started with `sftp`). */
  sftpPort: number;
  /** The WebDAV service's port on 127.0.0.1 (0 unless started with `webdav`). */
  webdavPort: number;
  /** The FTP service's control port on 127.0.0.1 (0 unless started with `ftp`). */
  ftpPort: number;
  close(): Promise<void>;
}

const OLD = new Date('2001-09-09T01:46:40Z');

/**
 * A file writer for a local root: plain, or encrypted as provider 4 stores
 * files (default scrypt cost, as the server uses for the user's files).
 */
async function writerFor(provider: Provider, root: string, tempDir: string, passphrase: string) {
  if (provider === 0) {
    return async (rel: string, data: Buffer | string) => {
      await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
      await writeFile(path.join(root, rel), data);
    };
  }
  const fs = new CryptFs({ root, tempDir, passphrase });
  return async (rel: string, data: Buffer | string) => {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    const h = await fs.openWrite('/' + rel);
    h.stream.end(data);
    await h.done;
  };
}

export interface WorldOptions {
  /** Extra canary directories per user (relative to its canary root), each with a secret.txt and the given extra files. */
  canaryDirs?: Record<string, { files?: number; dirs?: number }>;
  /** TUS uploads on the binding (upload_chunk_size MB). */
  tus?: boolean;
  providers?: Provider[];
  /** Also serve SFTP/SCP/SSH (the service-sftp plugin on a free port of 127.0.0.1). */
  sftp?: boolean;
  /** Also serve WebDAV (the service-webdav plugin on a free port of 127.0.0.1, plain HTTP). */
  webdav?: boolean;
  /** With `webdav`: serve public shares read-only under /shares/<id>/ too (public_shares). */
  webdavShares?: boolean;
  /** Also serve FTP (the service-ftp plugin on a free port of 127.0.0.1, plain; AUTH TLS not offered). */
  ftp?: boolean;
}

/** The standard canary tree of one user under `dir`, written with `put` (plaintext returned by name). */
async function plantCanary(
  dir: string,
  put: (rel: string, data: Buffer) => Promise<void>,
  rand: () => number,
  canary: Canary,
  user: string,
  extra: Record<string, { files?: number; dirs?: number }>,
): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const hiddenFile = `zq-hidden-${hex(rand, 6)}.txt`;
  const hiddenDir = `zq-hidden-dir-${hex(rand, 6)}`;
  canary.names.push(hiddenFile, hiddenDir);
  const content = (name: string) => Buffer.concat([Buffer.from(`CANARY ${user}/${name}: must never leave its directory\n`), seededBytes(rand, 2048)]);
  const plan: string[] = ['secret.txt', 'sub/deep.txt', hiddenFile, `${hiddenDir}/x.txt`];
  for (const [d, o] of Object.entries(extra)) {
    const hidden = `zq-hidden-${hex(rand, 6)}.txt`;
    canary.names.push(hidden);
    plan.push(`${d}/secret.txt`, `${d}/sub/deep.txt`, `${d}/${hidden}`);
    for (let i = 0; i < (o.files ?? 0); i++) plan.push(`${d}/f-${i}.txt`);
    for (let i = 0; i < (o.dirs ?? 0); i++) await mkdir(path.join(dir, d, `d-${i}`), { recursive: true });
  }
  for (const rel of plan) {
    const data = content(rel);
    await put(rel, data);
    files.set(rel, data);
    canary.addNeedle(`${user} canary ${rel}`, data.subarray(data.indexOf('\n') + 1));
    const stored = await readFile(path.join(dir, rel));
    if (!stored.equals(data)) canary.addNeedle(`${user} canary ${rel} (stored)`, stored.subarray(stored.length - 1024));
    canary.addDigests(`${user} canary ${rel}`, data);
    if (!stored.equals(data)) canary.addDigests(`${user} canary ${rel} (stored)`, stored);
  }
  return files;
}

/** Sets every mtime under `root` (links themselves untouched) to an old date. */
async function ageTree(root: string): Promise<void> {
  for (const e of await readdir(root, { withFileTypes: true })) {
    const p = path.join(root, e.name);
    if (e.isDirectory()) await ageTree(p);
    if (!e.isSymbolicLink()) await utimes(p, OLD, OLD);
  }
  await utimes(root, OLD, OLD);
}

export async function startWorld(o: WorldOptions = {}): Promise<World> {
  const binding: Record<string, unknown> = { address: '127.0.0.1', port: 0 };
  if (o.tus) binding.upload_chunk_size = 1;
  const services = [
    ...(o.sftp ? [{ name: '@ferry/service-sftp', config: { bindings: [{ address: '127.0.0.1', port: 0 }] } }] : []),
    ...(o.webdav
      ? [
          {
            name: '@ferry/service-webdav',
            config: { bindings: [{ address: '127.0.0.1', port: 0 }], ...(o.webdavShares ? { public_shares: { enabled: true } } : {}) },
          },
        ]
      : []),
    ...(o.ftp ? [{ name: '@ferry/service-ftp', config: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'plain' }] } }] : []),
  ];
  const ta = await createTestApp({
    plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-crypt' }, { name: '@ferry/actions-builtin' }, ...services],
    config: { httpd: { bindings: [binding] } },
  });
  // the app's start starts its services (SFTP, WebDAV, FTP servers) with the HTTP server
  await (services.length > 0 ? ta.app.start() : ta.server.start());
  const base = ta.server.info.uri;
  const client = new Client(base);
  const canary = new Canary();
  client.listeners.push((label, r) => canary.check(label, r));
  const admin = await ta.adminToken();
  const dataDir = ta.dataDir;
  const outsideRoot = path.join(dataDir, 'outside');
  const tempDir = path.join(dataDir, 'canary-tmp');
  await mkdir(tempDir, { recursive: true });
  const rand = prng(SEED);

  const createUser = async (name: string, provider: Provider, passphrase: string) => {
    const home = path.join(dataDir, 'homes', name);
    await mkdir(home, { recursive: true });
    const password = `${name}-password-${hex(rand, 4)}`;
    const filesystem = provider === 4 ? { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: passphrase } } } : { provider: 0 };
    const r = await client.request('POST', '/api/v2/users', {
      token: admin,
      json: { username: name, password, status: 1, home_dir: home, permissions: { '/': ['*'] }, filesystem },
    });
    if (r.status !== 201) throw new Error(`user ${name} not created: ${r.status} ${r.body.toString()}`);
    return { home, password };
  };

  // the victim: another user's home, never used, part of the canary
  const vic = await createUser('vic', 0, '');
  await plantCanary(vic.home, await writerFor(0, vic.home, tempDir, ''), rand, canary, 'vic', {});

  const users: User[] = [];
  for (const provider of o.providers ?? [0, 4]) {
    const name = provider === 0 ? 'loc' : 'cry';
    const passphrase = `passphrase-${name}-${hex(rand, 8)}`;
    const { home, password } = await createUser(name, provider, passphrase);
    const outside = path.join(outsideRoot, name);
    await mkdir(outside, { recursive: true });
    const canaryWriter = await writerFor(provider, outside, tempDir, passphrase);
    const canaryFiles = await plantCanary(outside, canaryWriter, rand, canary, name, o.canaryDirs ?? {});
    const put = await writerFor(provider, home, tempDir, passphrase);
    const r = await client.request('GET', '/api/v2/user/token', { basic: { username: name, password } });
    if (r.status !== 200) throw new Error(`token of ${name}: ${r.status} ${r.body.toString()}`);
    const token = (JSON.parse(r.body.toString()) as { access_token: string }).access_token;
    users.push({ name, password, provider, home, outside, token, put, canaryFiles });
  }
  await ageTree(outsideRoot);
  await ageTree(vic.home);
  canary.roots.push(outsideRoot, vic.home);
  canary.record();

  const events = ta.app.container.resolve<EventManager>(TOKENS.EventManager);
  // the services' ports as /api/v2/status reports them (ssh, webdav and ftp sections)
  type Section = { bindings?: { port: number }[] | null } | undefined;
  const status =
    services.length > 0 ? (JSON.parse((await client.request('GET', '/api/v2/status', { token: admin })).body.toString()) as Record<string, Section>) : {};
  const portOf = (wanted: boolean | undefined, section: string): number => {
    if (!wanted) return 0;
    const port = status[section]?.bindings?.[0]?.port ?? 0;
    if (!port) throw new Error(`no ${section} binding in /status: ${JSON.stringify(status[section])}`);
    return port;
  };
  return {
    sftpPort: portOf(o.sftp, 'ssh'),
    webdavPort: portOf(o.webdav, 'webdav'),
    ftpPort: portOf(o.ftp, 'ftp'),
    ta,
    base,
    client,
    canary,
    admin,
    dataDir,
    outsideRoot,
    users,
    events,
    async close() {
      client.close();
      await ta.close();
    },
  };
}

// ---- the planted fixture of a home ---------------------------------------------------------

export const INSIDE = 'inside content: mine';

/** Symlinks planted in a home: [path in the home, link target] (relative targets are relative to the link's directory). */
export function plantedLinks(u: User, dataDir: string): [string, string][] {
  return [
    ['link-dir', u.outside],
    ['link-file', path.join(u.outside, 'secret.txt')],
    ['dangling', path.join(u.outside, 'not-yet')],
    ['dangling-dir', path.join(u.outside, 'no-dir')],
    ['rel-up', `../../outside/${u.name}`],
    ['rel-file', `../../outside/${u.name}/sub/deep.txt`],
    ['chain1', 'chain2'],
    ['chain2', 'rel-up'],
    ['chain-in', 'sub'],
    ['inner/up', '../..'],
    ['link-root', '/'],
    ['link-data', dataDir],
    ['loop-a', 'loop-b'],
    ['loop-b', 'loop-a'],
    ['nest/out', u.outside],
    ['nest/link-file', path.join(u.outside, 'secret.txt')],
    ['nest/dangling', path.join(u.outside, 'not-yet')],
    ['nest/in', '../sub'],
    ['shared/out', u.outside],
    ['shared/out-file', path.join(u.outside, 'secret.txt')],
  ];
}

/** Links that point outside the home (or dangle): refused, and left out of listings and zips. */
export const OUTSIDE_LINKS = [
  'link-dir',
  'link-file',
  'dangling',
  'dangling-dir',
  'rel-up',
  'rel-file',
  'chain1',
  'chain2',
  'link-root',
  'link-data',
  'loop-a',
  'loop-b',
];

export const FIXTURE_FILES = ['inside.txt', 'sub/f.txt', 'nest/ok.txt', 'shared/ok.txt', 'shared/sub/x.txt'];

/**
 * (Re)creates the home fixture: the files and the links above, and removes
 * anything else at the top of the home, so every attempt starts from the same
 * state whatever an earlier one created, moved or removed inside the home.
 */
export async function resetHome(u: User, dataDir: string): Promise<void> {
  const links = plantedLinks(u, dataDir);
  const dirs = ['', 'sub', 'nest', 'shared', 'shared/sub', 'inner'];
  // what each fixture directory may hold
  const expected = new Map<string, Set<string>>(dirs.map((d) => [d, new Set<string>()]));
  for (const p of [...dirs.filter((d) => d), ...FIXTURE_FILES, ...links.map(([l]) => l)]) {
    expected.get(path.posix.dirname(p) === '.' ? '' : path.posix.dirname(p))!.add(path.posix.basename(p));
  }
  for (const d of dirs) {
    const full = path.join(u.home, d);
    const st = await lstat(full).catch(() => undefined);
    if (st && !st.isDirectory()) await rm(full, { force: true });
    if (!st?.isDirectory()) await mkdir(full, { recursive: true });
    for (const name of await readdir(full)) if (!expected.get(d)!.has(name)) await rm(path.join(full, name), { recursive: true, force: true });
  }
  for (const f of FIXTURE_FILES) {
    const st = await lstat(path.join(u.home, f)).catch(() => undefined);
    if (st?.isFile()) continue;
    if (st) await rm(path.join(u.home, f), { recursive: true, force: true });
    await u.put(f, `${INSIDE} ${f}`);
  }
  for (const [l, target] of links) {
    const p = path.join(u.home, l);
    const st = await lstat(p).catch(() => undefined);
    if (st?.isSymbolicLink() && (await readlink(p)) === target) continue;
    if (st) await rm(p, { recursive: true, force: true });
    await symlink(target, p);
  }
}

/** Files in the home whose content came from the canary (a copy or a move out of it). */
export async function canaryInHome(canary: Canary, u: User): Promise<string[]> {
  const found: string[] = [];
  for (const [rel, data] of await homeFiles(u.home)) {
    for (const n of canary.needles) if (data.includes(n.bytes)) found.push(`${u.name} home ${rel} holds ${n.what}`);
  }
  return found;
}

/** Whether a file written into the home holds canary content (a copy or a move out of the canary). */
export async function holdsCanary(canary: Canary, u: User, rel: string): Promise<string | undefined> {
  const data = await readFile(path.join(u.home, rel)).catch(() => undefined);
  if (!data) return undefined;
  for (const n of canary.needles) if (data.includes(n.bytes)) return `${rel} in the home holds ${n.what}`;
  return undefined;
}

/** Regular files of a home (links not followed) with their stored content. */
export async function homeFiles(root: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.set(path.relative(root, p), await readFile(p));
    }
  };
  if (existsSync(root)) await walk(root);
  return out;
}

/** Waits (no clock) for `cond`, yielding to the event loop and the thread pool between tries. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, tries = 20_000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never happened: ${what}`);
}
