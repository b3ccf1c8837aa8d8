import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { TOKENS, type EventBus, type FsEvent } from '@ferry/core';
import { createTestApp, type TestApp } from '@ferry/core/testing';
import type { Test } from 'tap';

export const PLUGIN = { name: '@ferry/service-ftp' };
export const PASSWORD = (u: string) => `${u}-pass-1`;

export interface FtpStatus {
  is_active: boolean;
  bindings: { address: string; port: number; tls_mode: number; client_auth_type?: number }[] | null;
  passive_port_range: { start: number; end: number };
}

export interface Harness {
  ta: TestApp;
  token: string;
  port: number;
  fsEvents: FsEvent[];
  addUser(username: string, extra?: Record<string, unknown>): Promise<string>;
  status(): Promise<FtpStatus>;
}

/** A started app serving FTP on a free port of 127.0.0.1 (plugin config `ftp` merged over the defaults). */
export async function startFtp(t: Test, o: { ftp?: Record<string, unknown> } = {}): Promise<Harness> {
  const plugin = { ...PLUGIN, config: { bindings: [{ address: '127.0.0.1', port: 0 }], ...o.ftp } };
  const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, plugin] });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  const fsEvents: FsEvent[] = [];
  t.teardown(ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('fs', (e) => void fsEvents.push(e)));
  await ta.app.start();
  const status = async () => {
    const r = await ta.inject('GET', '/api/v2/status', { token });
    return (r.result as { ftp: FtpStatus }).ftp;
  };
  const port = (await status()).bindings![0]!.port;
  const addUser = async (username: string, extra: Record<string, unknown> = {}) => {
    const home = path.join(ta.dataDir, 'homes', username);
    const payload = { username, password: PASSWORD(username), status: 1, home_dir: home, permissions: { '/': ['*'] }, ...extra };
    const r = await ta.inject('POST', '/api/v2/users', { token, payload });
    if (r.statusCode !== 201) throw new Error(r.payload);
    return home;
  };
  return { ta, token, port, fsEvents, addUser, status };
}

// the real client programs' runner, shared by the front-ends' tests
import { run, type Run } from '@ferry/testkit';

export { run, type Run };

/** A test CA and a server certificate for 127.0.0.1 signed by it, made by openssl in `dir`. */
export async function testCertificates(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  const f = (n: string) => path.join(dir, n);
  const ok = async (args: string[]) => {
    const r = await run('openssl', args);
    if (r.code !== 0) throw new Error(r.stderr);
  };
  await ok([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=Ferry test CA',
  ]);
  await ok([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
    '-subj',
    '/CN=127.0.0.1',
  ]);
  writeFileSync(f('ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  await ok([
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.pem'),
    '-days',
    '2',
    '-extfile',
    f('ext.cnf'),
  ]);
  return { ca: f('ca.pem'), cert: f('server.pem'), key: f('server.key') };
}

/** A raw control connection: send lines (or bytes), read replies. */
export class RawFtp {
  private buf = '';
  private waiters: (() => void)[] = [];
  closed = false;
  private constructor(readonly socket: net.Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buf += d;
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('error', () => undefined);
  }
  static connect(port: number, host = '127.0.0.1', localAddress?: string): Promise<RawFtp> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host, ...(localAddress ? { localAddress } : {}) }, () => resolve(new RawFtp(s)));
      s.once('error', reject);
    });
  }
  send(data: string | Buffer): void {
    this.socket.write(data);
  }
  /** The next complete reply (multi-line replies as one string); '' once the connection closed. */
  async reply(): Promise<string> {
    for (;;) {
      const m = /^(\d{3})(?:-[\s\S]*?\r\n\1 .*|.*)\r\n/.exec(this.buf);
      if (m) {
        this.buf = this.buf.slice(m[0].length);
        return m[0].trimEnd();
      }
      if (this.closed) return '';
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
  async cmd(line: string): Promise<string> {
    this.send(`${line}\r\n`);
    return this.reply();
  }
  close(): void {
    this.socket.destroy();
  }
}
