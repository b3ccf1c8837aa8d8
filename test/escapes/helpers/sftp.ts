/**
 * The world's users over SSH (not a test file): an ssh2 client per user
 * with its SFTP channel, every SFTP request that takes a path, SCP's
 * `scp -t` / `scp -f` and the SSH commands over exec channels. Every answer
 * (data, names and long names of listings, realpath results, error
 * messages, exec output and stderr) is scanned by the world's canary.
 */
import ssh2, { type SFTPWrapper } from 'ssh2';
import type { Canary, User, World } from './world.js';

const { STATUS_CODE, OPEN_MODE } = ssh2.utils.sftp;
export { STATUS_CODE, OPEN_MODE };

/** The answer of one SFTP request: `code` 0 (OK) or the status code, with what came back. */
export interface SftpAnswer<T = unknown> {
  code: number;
  message: string;
  value?: T;
  /** The channel broke under it (closed, or no answer): a crash as far as the client sees. */
  broken?: boolean;
}

/** The answer of an exec channel: stdout, stderr, exit code (null when the channel closed without one). */
export interface ExecAnswer {
  stdout: Buffer;
  stderr: Buffer;
  code: number | null;
}

const short = (s: string) => (s.length > 120 ? s.slice(0, 120) + '…' : s);
const show = (p: string) => short(JSON.stringify(p));

/** Single-quoted for a POSIX shell's word splitting (what the server's command line parser follows). */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** One user's SSH connection: its SFTP channel (reopened when it breaks) and exec channels. */
export class SshUser {
  private sftp: SFTPWrapper | null = null;
  /** Requests sent, by kind. */
  readonly counts = new Map<string, number>();
  /** SFTP channels that broke under a request (never expected). */
  readonly broken: string[] = [];

  private constructor(
    readonly user: User,
    private readonly conn: ssh2.Client,
    private readonly canary: Canary,
  ) {}

  static async connect(w: World, u: User): Promise<SshUser> {
    const conn = await new Promise<ssh2.Client>((resolve, reject) => {
      const c = new ssh2.Client();
      c.once('ready', () => resolve(c));
      c.once('error', reject);
      c.connect({ host: '127.0.0.1', port: w.sftpPort, username: u.name, password: u.password, readyTimeout: 20_000 });
    });
    conn.on('error', () => undefined);
    return new SshUser(u, conn, w.canary);
  }

  close(): void {
    this.conn.end();
  }

  private count(kind: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }

  private async channel(): Promise<SFTPWrapper> {
    if (this.sftp) return this.sftp;
    const s = await new Promise<SFTPWrapper>((resolve, reject) => this.conn.sftp((err, sftp) => (err ? reject(err) : resolve(sftp))));
    s.on('error', () => undefined);
    s.once('close', () => {
      if (this.sftp === s) this.sftp = null;
    });
    this.sftp = s;
    return s;
  }

  /**
   * Sends one request and scans its answer: the parts `scan` picks from the
   * value, and the error message. A channel that closes under it is
   * recorded in `broken` (and reopened for the next request).
   */
  async call<T>(
    kind: string,
    label: string,
    send: (s: SFTPWrapper, cb: (err: Error | null | undefined, value?: T) => void) => void,
    scan: (v: T) => Buffer[] = () => [],
  ): Promise<SftpAnswer<T>> {
    this.count(kind);
    const s = await this.channel();
    const a = await new Promise<SftpAnswer<T>>((resolve) => {
      const gone = () => resolve({ code: -1, message: 'the channel closed', broken: true });
      s.once('close', gone);
      send(s, (err, value) => {
        s.off('close', gone);
        if (!err) return resolve({ code: 0, message: '', value });
        const code = (err as Error & { code?: unknown }).code;
        // ssh2's client answers its pending requests with "No response from server" when the channel ends
        resolve(typeof code === 'number' ? { code, message: err.message } : { code: -1, message: err.message, broken: true });
      });
    });
    const where = `${this.user.name} ${kind} ${label}`;
    if (a.broken) this.broken.push(`${where}: ${a.message}`);
    this.canary.scan(where, a.code, [Buffer.from(a.message), ...(a.value !== undefined ? scan(a.value) : [])]);
    return a;
  }

  // ---- the SFTP requests that take a path -------------------------------------------------

  /** OPEN for reading, READs to the end (or the first failure), CLOSE: the data read. */
  async read(p: string): Promise<SftpAnswer<Buffer>> {
    const o = await this.call<Buffer>('open(r)', show(p), (s, cb) => s.open(p, 'r', cb));
    if (o.code !== 0) return { code: o.code, message: o.message, broken: o.broken };
    const h = o.value!;
    const chunks: Buffer[] = [];
    let pos = 0;
    for (;;) {
      const r = await this.call<Buffer>(
        'read',
        show(p),
        (s, cb) => {
          const buf = Buffer.alloc(64 * 1024);
          s.read(h, buf, 0, buf.length, pos, (err, n) => cb(err, buf.subarray(0, n)));
        },
        (b) => [b],
      );
      if (r.code !== 0 || r.value!.length === 0) break;
      chunks.push(r.value!);
      pos += r.value!.length;
      if (pos > 16 * 1024 * 1024) break;
    }
    await this.call('close', show(p), (s, cb) => s.close(h, cb));
    return { code: 0, message: '', value: Buffer.concat(chunks) };
  }

  /** OPEN with `flags` ('w', 'a', 'r+'...), one WRITE at 0 (or the end for append), CLOSE: the first failure, else OK. */
  async write(p: string, flags: ssh2.OpenMode, data: string): Promise<SftpAnswer> {
    const o = await this.call<Buffer>(`open(${flags})`, show(p), (s, cb) => s.open(p, flags, cb));
    if (o.code !== 0) return o;
    const h = o.value!;
    const wr = await this.call('write', show(p), (s, cb) => s.write(h, Buffer.from(data), 0, data.length, 0, (err) => cb(err)));
    const cl = await this.call('close', show(p), (s, cb) => s.close(h, cb));
    return wr.code !== 0 ? wr : cl;
  }

  /** OPENDIR, READDIRs to the end, CLOSE: the names listed (names and long names scanned). */
  async list(p: string): Promise<SftpAnswer<string[]>> {
    const o = await this.call<Buffer>('opendir', show(p), (s, cb) => s.opendir(p, cb));
    if (o.code !== 0) return { code: o.code, message: o.message, broken: o.broken };
    const names: string[] = [];
    for (let pages = 0; pages < 10_000; pages++) {
      const r = await this.call<ssh2.FileEntry[]>(
        'readdir',
        show(p),
        (s, cb) => s.readdir(o.value!, cb),
        (l) => l.map((e) => Buffer.from(`${e.filename}\n${e.longname}`)),
      );
      if (r.code !== 0 || !r.value) break;
      names.push(...r.value.map((e) => e.filename));
    }
    await this.call('close', show(p), (s, cb) => s.close(o.value!, cb));
    return { code: 0, message: '', value: names };
  }

  stat(p: string) {
    return this.call('stat', show(p), (s, cb) => s.stat(p, cb));
  }
  lstat(p: string) {
    return this.call('lstat', show(p), (s, cb) => s.lstat(p, cb));
  }
  setstat(p: string, mtime: number) {
    return this.call('setstat', show(p), (s, cb) => s.setstat(p, { atime: mtime, mtime }, cb));
  }
  realpath(p: string) {
    return this.call<string>(
      'realpath',
      show(p),
      (s, cb) => s.realpath(p, cb),
      (v) => [Buffer.from(v)],
    );
  }
  readlink(p: string) {
    return this.call<string>(
      'readlink',
      show(p),
      (s, cb) => s.readlink(p, cb),
      (v) => [Buffer.from(v)],
    );
  }
  symlink(target: string, p: string) {
    return this.call('symlink', `${show(target)} at ${show(p)}`, (s, cb) => s.symlink(target, p, cb));
  }
  rename(from: string, to: string) {
    return this.call('rename', `${show(from)} -> ${show(to)}`, (s, cb) => s.rename(from, to, cb));
  }
  posixRename(from: string, to: string) {
    return this.call('posix-rename@openssh.com', `${show(from)} -> ${show(to)}`, (s, cb) => s.ext_openssh_rename(from, to, cb));
  }
  remove(p: string) {
    return this.call('remove', show(p), (s, cb) => s.unlink(p, cb));
  }
  mkdir(p: string) {
    return this.call('mkdir', show(p), (s, cb) => s.mkdir(p, cb));
  }
  rmdir(p: string) {
    return this.call('rmdir', show(p), (s, cb) => s.rmdir(p, cb));
  }

  // ---- exec channels: SCP and the SSH commands ----------------------------------------------

  /** Runs a command line on an exec channel, writing `input` (then EOF); output scanned. */
  async exec(kind: string, command: string, input?: Buffer): Promise<ExecAnswer> {
    this.count(kind);
    const a = await new Promise<ExecAnswer>((resolve) => {
      this.conn.exec(command, (err, ch) => {
        if (err) return resolve({ stdout: Buffer.from(err.message), stderr: Buffer.alloc(0), code: null });
        const out: Buffer[] = [];
        const errs: Buffer[] = [];
        let code: number | null = null;
        ch.on('data', (d: Buffer) => out.push(d));
        ch.stderr.on('data', (d: Buffer) => errs.push(d));
        ch.on('exit', (c: number | null) => (code = c));
        ch.on('close', () => resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(errs), code }));
        ch.end(input);
      });
    });
    this.canary.scan(`${this.user.name} ${kind} ${short(command)}`, a.code ?? -1, [a.stdout, a.stderr]);
    return a;
  }

  /** `scp -f SRC`: the source's records and data, acknowledged throughout (the reply is scanned whole). */
  scpGet(p: string): Promise<ExecAnswer> {
    // acknowledgements in advance: the source reads one before its first record and one after each record and data
    return this.exec('scp -f', `scp -f -- ${shellQuote(p)}`, Buffer.alloc(64, 0));
  }

  /**
   * `scp -t DEST` receiving one file `name` holding `data` (pipelined: the sink reads in order);
   * `intoDir`: `scp -d -t`, the target must be a directory (as OpenSSH's client asks when it
   * copies into one), so a missing DEST is an error instead of the name of the file written.
   */
  scpPut(dest: string, name: string, data: string, o: { intoDir?: boolean } = {}): Promise<ExecAnswer> {
    const record = Buffer.concat([Buffer.from(`C0644 ${Buffer.byteLength(data)} ${name}\n`), Buffer.from(data), Buffer.from([0])]);
    return this.exec('scp -t', `scp ${o.intoDir ? '-d ' : ''}-t -- ${shellQuote(dest)}`, record);
  }
}
