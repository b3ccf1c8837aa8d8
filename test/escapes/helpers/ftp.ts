/**
 * A raw FTP client over node:net (not a test file): the control connection
 * with its reply parser (multi-line replies included), EPSV/PASV data
 * connections, and every command line sent exactly as given (no quoting,
 * no normalisation). Every reply text and every byte received on a data
 * connection is scanned by the world's canary.
 */
import net from 'node:net';
import type { Canary, User, World } from './world.js';

/** A final reply (after any 1xx preliminary one) with what came over the data connection. */
export interface FtpAnswer {
  code: number;
  text: string;
  /** The preliminary reply (150/125) when the command opened a transfer. */
  mark?: number;
  data?: Buffer;
  /** The control connection closed or went silent under it. */
  broken?: boolean;
}

const IDLE_MS = 20_000;
const short = (s: string) => (s.length > 120 ? s.slice(0, 120) + '…' : s);

/** The control connection: replies parsed as they come (RFC 959 4.2: `ddd-` opens a multi-line reply, `ddd ` closes it). */
class Control {
  private buf = '';
  private lines: string[] = [];
  private replies: { code: number; text: string }[] = [];
  private waiter: (() => void) | null = null;
  closed = false;

  constructor(readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      this.buf += d;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl).replace(/\r$/, '');
        this.buf = this.buf.slice(nl + 1);
        this.line(line);
      }
      this.waiter?.();
    });
    const gone = () => {
      this.closed = true;
      this.waiter?.();
    };
    socket.on('close', gone);
    socket.on('error', gone);
  }

  private line(line: string): void {
    this.lines.push(line);
    const first = this.lines[0]!;
    const m = /^(\d{3})([ -])/.exec(first);
    // a first line that is not `ddd-`/`ddd ` is a malformed reply: kept whole with code 0
    if (!m) return this.done(0);
    if (m[2] === ' ') return this.done(Number(m[1]));
    if (this.lines.length > 1 && line.startsWith(`${m[1]} `)) this.done(Number(m[1]));
  }

  private done(code: number): void {
    this.replies.push({ code, text: this.lines.join('\n') });
    this.lines = [];
  }

  /** The next reply, or undefined when the connection closed or stayed silent for IDLE_MS. */
  async next(): Promise<{ code: number; text: string } | undefined> {
    for (;;) {
      const r = this.replies.shift();
      if (r) return r;
      if (this.closed) return undefined;
      const came = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), IDLE_MS);
        this.waiter = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      this.waiter = null;
      if (!came) return undefined;
    }
  }
}

/** One user's FTP session: logged in, reconnected when the control connection breaks (each break recorded). */
export class FtpUser {
  private ctl: Control | null = null;
  private epsv = true;
  /** Commands sent, by verb. */
  readonly counts = new Map<string, number>();
  /** Final replies, by verb and code ("STOR 550"). */
  readonly codes = new Map<string, number>();
  /** Control connections that broke under a command (never expected). */
  readonly broken: string[] = [];
  /** Replies that are not well-formed FTP replies (code 100-599). */
  readonly malformed: string[] = [];

  private constructor(
    readonly user: User,
    private readonly port: number,
    private readonly canary: Canary,
  ) {}

  static async connect(w: World, u: User): Promise<FtpUser> {
    const f = new FtpUser(u, w.ftpPort, w.canary);
    await f.control();
    return f;
  }

  close(): void {
    this.ctl?.socket.destroy();
  }

  private async control(): Promise<Control> {
    if (this.ctl && !this.ctl.closed) return this.ctl;
    const socket = net.connect(this.port, '127.0.0.1');
    const c = new Control(socket);
    const hello = await c.next();
    if (hello?.code !== 220) throw new Error(`no greeting: ${JSON.stringify(hello)}`);
    this.ctl = c;
    for (const [line, want] of [
      [`USER ${this.user.name}`, 331],
      [`PASS ${this.user.password}`, 230],
      ['TYPE I', 200],
    ] as const) {
      const r = await this.send(line);
      if (r.code !== want) throw new Error(`${line.split(' ')[0]}: ${r.code} ${r.text}`);
    }
    return c;
  }

  private record(verb: string, label: string, a: FtpAnswer): FtpAnswer {
    const key = `${verb} ${a.code}`;
    this.codes.set(key, (this.codes.get(key) ?? 0) + 1);
    if (a.broken) this.broken.push(`${this.user.name} ${label}: the control connection ${this.ctl?.closed ? 'closed' : 'went silent'}`);
    else if (!(a.code >= 100 && a.code <= 599)) this.malformed.push(`${this.user.name} ${label}: ${short(a.text)}`);
    this.canary.scan(`${this.user.name} ${label}`, a.code, [Buffer.from(a.text), ...(a.data ? [a.data] : [])]);
    return a;
  }

  /** Writes one command line (CRLF added) and reads its reply. */
  private async send(line: string): Promise<FtpAnswer> {
    const c = this.ctl!;
    c.socket.write(`${line}\r\n`);
    const r = await c.next();
    if (!r) {
      c.socket.destroy();
      return { code: -1, text: '', broken: true };
    }
    return r;
  }

  /** A command without data connection: its reply (scanned). */
  async cmd(line: string): Promise<FtpAnswer> {
    const verb = line.split(' ')[0]!;
    this.counts.set(verb, (this.counts.get(verb) ?? 0) + 1);
    await this.control();
    return this.record(verb, short(JSON.stringify(line)), await this.send(line));
  }

  /**
   * A command with a data connection (LIST, NLST, MLSD, RETR, STOR, APPE):
   * EPSV or PASV (alternately), the data connection opened, the command
   * sent (after `REST o.rest` when given: REST must come right before the
   * transfer command, the server forgets it after any other); on 150/125 `upload` is written (or the data read) and the final
   * reply read. The data received is scanned with the reply.
   */
  async transfer(line: string, upload?: string, o: { rest?: number } = {}): Promise<FtpAnswer> {
    const verb = line.split(' ')[0]!;
    this.counts.set(verb, (this.counts.get(verb) ?? 0) + 1);
    await this.control();
    const label = short(JSON.stringify(line));
    const mode = this.epsv ? 'EPSV' : 'PASV';
    this.epsv = !this.epsv;
    const pasv = await this.send(mode);
    if (pasv.broken) return this.record(mode, `${mode} for ${label}`, pasv);
    let port: number | undefined;
    const e = /\(\|\|\|(\d+)\|\)/.exec(pasv.text);
    const p = /(\d+),(\d+),(\d+),(\d+),(\d+),(\d+)/.exec(pasv.text);
    if (mode === 'EPSV' && e) port = Number(e[1]);
    if (mode === 'PASV' && p) port = Number(p[5]) * 256 + Number(p[6]);
    if (!port) return this.record(mode, `${mode} for ${label}`, { ...pasv, code: pasv.code === 229 || pasv.code === 227 ? 0 : pasv.code });
    const data = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const ended = new Promise<void>((resolve) => {
      data.on('data', (d: Buffer) => chunks.push(d));
      data.on('close', () => resolve());
      data.on('error', () => resolve());
    });
    if (o.rest !== undefined) {
      const rest = await this.send(`REST ${o.rest}`);
      if (rest.code !== 350) {
        data.destroy();
        return this.record('REST', `REST ${o.rest} for ${label}`, rest);
      }
    }
    const first = await this.send(line);
    if (first.broken || first.code >= 200) {
      data.destroy();
      return this.record(verb, label, first);
    }
    if (upload !== undefined) data.end(upload);
    await ended;
    const c = this.ctl!;
    const last = await c.next();
    if (!last) return this.record(verb, label, { code: -1, text: first.text, broken: true, data: Buffer.concat(chunks) });
    return this.record(verb, label, { code: last.code, text: `${first.text}\n${last.text}`, mark: first.code, data: Buffer.concat(chunks) });
  }
}
