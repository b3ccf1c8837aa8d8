import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TOKENS, type EventBus, type LogEvent, type Logger } from '@ferry/core';
import { createTestApp, type TestApp } from '@ferry/core/testing';
import type * as Ssh2Types from 'ssh2';
// ssh2 as the service loads it (its packets padded from the pool, src/ssh2-module.ts): the real clients' tests run against the shipped path
import ssh2 from '../src/ssh2-module.js';
import type { Test } from 'tap';

/** The plugin as the tests load it: by its package name (its sources under the ferry-src condition). */
export const PLUGIN = { name: '@ferry/service-sftp' };

export interface SshStatus {
  is_active: boolean;
  bindings: { address: string; port: number; apply_proxy_config: boolean }[] | null;
  host_keys: { path: string; fingerprint: string; algorithms: string[] }[] | null;
}

export interface Harness {
  ta: TestApp;
  token: string;
  port: number;
  /** The login events published since the start. */
  logs: LogEvent[];
  /** Creates a user through the REST API (all permissions on '/' unless given); returns its home directory. */
  addUser(username: string, extra?: Record<string, unknown>): Promise<string>;
  status(): Promise<SshStatus>;
}

/** A started app serving SFTP on a free port of 127.0.0.1. */
export async function startSftp(
  t: Test,
  o: { sftp?: Record<string, unknown>; config?: Record<string, unknown>; backends?: string[]; logger?: Logger } = {},
): Promise<Harness> {
  const plugin = { ...PLUGIN, config: { bindings: [{ address: '127.0.0.1', port: 0 }], ...o.sftp } };
  const backends = (o.backends ?? ['@ferry/fs-local']).map((name) => ({ name }));
  const ta = await createTestApp({ plugins: [...backends, plugin], ...(o.config ? { config: o.config } : {}), ...(o.logger ? { logger: o.logger } : {}) });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  const logs: LogEvent[] = [];
  t.teardown(ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('log', (e) => void logs.push(e)));
  await ta.app.start();
  const status = async () => {
    const r = await ta.inject('GET', '/api/v2/status', { token });
    return (r.result as { ssh: SshStatus }).ssh;
  };
  const port = (await status()).bindings![0]!.port;
  const addUser = async (username: string, extra: Record<string, unknown> = {}) => {
    const home = path.join(ta.dataDir, 'homes', username);
    const payload = { username, password: `${username}-pass-1`, status: 1, home_dir: home, permissions: { '/': ['*'] }, ...extra };
    const r = await ta.inject('POST', '/api/v2/users', { token, payload });
    if (r.statusCode !== 201) throw new Error(r.payload);
    return home;
  };
  return { ta, token, port, logs, addUser, status };
}

/** An ed25519 key pair in `dir` made by ssh-keygen: the private key file and the public key line. */
export async function sshKey(dir: string, name = 'id_ed25519'): Promise<{ file: string; pub: string }> {
  const file = path.join(dir, name);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ferry-test', '-f', file]);
  return { file, pub: readFileSync(`${file}.pub`, 'utf8').trim() };
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program (`env` added to this process's); resolves with its exit code and output (never rejects on a failing exit). */
export function run(cmd: string, args: string[], cwd?: string, env?: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

/** The options every OpenSSH client run uses: the key only, no host key checks, batch mode. */
export const opensshOptions = (key: string) => [
  '-i',
  key,
  '-o',
  'IdentitiesOnly=yes',
  '-o',
  'StrictHostKeyChecking=no',
  '-o',
  'UserKnownHostsFile=/dev/null',
  '-o',
  'BatchMode=yes',
  '-o',
  'LogLevel=ERROR',
];

/** Runs OpenSSH's sftp with a batch of commands (a failing command stops the batch with exit code 1). */
export function sftpBatch(o: { port: number; user: string; key: string; dir: string; lines: string[] }): Promise<Run> {
  const batch = path.join(o.dir, `batch-${Math.random().toString(36).slice(2)}`);
  writeFileSync(batch, o.lines.join('\n') + '\n');
  return run('sftp', ['-b', batch, '-P', String(o.port), ...opensshOptions(o.key), `${o.user}@127.0.0.1`], o.dir);
}

export type Ssh2ConnectConfig = Ssh2Types.ConnectConfig;

/** An ssh2 client connection (password, keyboard-interactive, raw SFTP); rejects with the client's error. */
export function connectSsh(config: Ssh2Types.ConnectConfig): Promise<Ssh2Types.Client> {
  return new Promise((resolve, reject) => {
    const c = new ssh2.Client();
    c.once('ready', () => resolve(c));
    c.once('error', reject);
    // (a no-op once ready)
    c.once('close', () => reject(new Error('the connection closed before the login')));
    c.connect({ host: '127.0.0.1', readyTimeout: 20_000, ...config });
  });
}

/** The SFTP channel of an ssh2 client connection. */
export function openSftp(c: Ssh2Types.Client): Promise<Ssh2Types.SFTPWrapper> {
  return new Promise((resolve, reject) => c.sftp((err, sftp) => (err ? reject(err) : resolve(sftp))));
}

/** The defender's score of 127.0.0.1 (every client of these tests). */
export async function defenderScore(h: Harness): Promise<number> {
  const r = await h.ta.inject('GET', '/api/v2/defender/hosts', { token: h.token });
  if (r.statusCode !== 200) throw new Error(r.payload);
  const hosts = JSON.parse(r.payload) as { ip: string; score: number }[];
  return hosts.find((e) => e.ip === '127.0.0.1')?.score ?? 0;
}

/** Enables TOTP for SSH on a user's account (made by addUser) through the user API; returns a code generator. */
export const enableTotp = (h: Harness, username: string): Promise<() => string> => h.ta.enableTotp(username, `${username}-pass-1`, ['SSH']);

/** A raw SFTP channel: packets sent by type and body, answers read one by one (type byte first). */
export interface RawSftp {
  send(type: number, body: Buffer): void;
  next(): Promise<Buffer>;
  /** The VERSION's extensions, by name. */
  extensions: Map<string, string>;
}

export const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
export const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};
export const sftpStr = (s: string | Buffer) => Buffer.concat([u32(Buffer.byteLength(s)), Buffer.from(s)]);

/** SFTP packets (type byte first) as a raw channel receives them, one by one. */
export function packetReader(ch: Ssh2Types.ClientChannel): { next(): Promise<Buffer> } {
  let buf = Buffer.alloc(0);
  const waiting: ((p: Buffer) => void)[] = [];
  const ready: Buffer[] = [];
  ch.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
      const len = buf.readUInt32BE(0);
      const p = buf.subarray(4, 4 + len);
      buf = buf.subarray(4 + len);
      const w = waiting.shift();
      if (w) w(p);
      else ready.push(p);
    }
  });
  return { next: () => new Promise<Buffer>((resolve) => (ready.length > 0 ? resolve(ready.shift()!) : waiting.push(resolve))) };
}

/** Opens the sftp subsystem of a connection by hand and exchanges INIT and VERSION. */
export async function rawSftp(c: Ssh2Types.Client): Promise<RawSftp> {
  const ch = await new Promise<Ssh2Types.ClientChannel>((resolve, reject) => c.subsys('sftp', (err, chan) => (err ? reject(err) : resolve(chan))));
  const { next } = packetReader(ch);
  const send = (type: number, body: Buffer) => void ch.write(Buffer.concat([u32(body.length + 1), Buffer.from([type]), body]));
  send(1, u32(3));
  const version = await next();
  const extensions = new Map<string, string>();
  for (let p = 5; p < version.length;) {
    const nl = version.readUInt32BE(p);
    const name = version.toString('utf8', p + 4, p + 4 + nl);
    p += 4 + nl;
    const dl = version.readUInt32BE(p);
    extensions.set(name, version.toString('utf8', p + 4, p + 4 + dl));
    p += 4 + dl;
  }
  return { send, next, extensions };
}

/** The status code and message of a STATUS packet. */
export function statusOf(p: Buffer): { type: number; id: number; code: number; message: string } {
  return { type: p[0]!, id: p.readUInt32BE(1), code: p.readUInt32BE(5), message: p.toString('utf8', 13, 13 + p.readUInt32BE(9)) };
}
