// longer than 500 lines: one FTP control connection is one state machine (login, TLS, paths, data connections), its commands read best side by side
import { randomUUID } from 'node:crypto';
import type net from 'node:net';
import path from 'node:path';
import { finished, pipeline } from 'node:stream/promises';
import tls from 'node:tls';
import { leaseUploadBuffers, LoginRefusedError, type FileInfo, type FileSession, type Logger, type ServiceHost, type UploadBuffers } from '@ferry/core';
import type { FtpBinding, FtpConfig } from './config.js';
import { LineReader, parseCommand, type LineItem } from './lines.js';
import { ftpTime, listLine, mlsxFacts, parseFtpTime } from './listing.js';
import { ActiveConnector, checkTarget, parseEprt, parsePort } from './active.js';
import { PassiveListener, plainIp } from './passive.js';
import { FtpReply, replyOf } from './replies.js';
import { FtpHashes, LEGACY_HASH_COMMANDS, legacyHash, parseLegacyHashArgs, parseRang, type ByteRangeCmd } from './hashes.js';

const PROTOCOL = 'FTP';
const MAX_LINE = 4096;

export interface ControlOptions {
  config: FtpConfig;
  binding: FtpBinding;
  logger: Logger;
  host: () => ServiceHost;
  /** A secure context of the service's certificate (a new one per connection: its own session ticket keys); null without TLS. */
  secureContext: (() => tls.SecureContext) | null;
}

/** The commands a client may send between RANG and its RETR (the data connection's set-up): the range stays. */
const KEEP_RANG = new Set(['RANG', 'TYPE', 'MODE', 'PASV', 'EPSV', 'PORT', 'EPRT']);

const FEATURES = [
  'UTF8',
  'EPSV',
  'PASV',
  'SIZE',
  'MDTM',
  'MFMT',
  'REST STREAM',
  'RANG STREAM',
  'MLST type*;size*;modify*;perm*;',
  'TVFS',
  ...Object.keys(LEGACY_HASH_COMMANDS),
];

/**
 * Why the client certificate of a server-side TLS socket does not chain to
 * the context's CAs, or null when it does. A TLSSocket made from a plain
 * socket (as AUTH TLS must) is not a tls.Server's: Node does not set its
 * `authorized`, so the verification result is read where tls.Server reads
 * it (the TLS handle's verifyError); without that handle, nothing is trusted.
 */
function chainError(secure: tls.TLSSocket): string | null {
  const handle = (secure as unknown as { _handle?: { verifyError?: () => (Error & { code?: string }) | null } })._handle;
  if (typeof handle?.verifyError !== 'function') return 'the certificate could not be verified';
  const err = handle.verifyError();
  return err ? (err.code ?? err.message) : null;
}

/** One FTP control connection: its commands, login, file session and data connections. */
export class FtpControl {
  private stream: net.Socket | tls.TLSSocket;
  private readonly ip: string;
  private reader = new LineReader(MAX_LINE);
  private queue: string[] = [];
  private busy = false;
  private closed = false;
  private user: string | null = null;
  private files: FileSession | null = null;
  private failures = 0;
  private cwd = '/';
  private tlsContext: tls.SecureContext | null = null;
  private protectData = false;
  private pbsz = false;
  /** The data connection the next transfer uses: a passive listener (PASV/EPSV) or an active target (PORT/EPRT). */
  private passive: PassiveListener | ActiveConnector | null = null;
  /** After EPSV ALL the client promised to use EPSV only (RFC 2428): PORT, EPRT and PASV are refused. */
  private epsvOnly = false;
  /** The common name of the control connection's trusted client certificate. */
  private certificateName: string | null = null;
  /** The certificate step of a TLSCertificate+password login passed for `user`. */
  private certificatePassed = false;
  private restAt = 0;
  /** The byte range of the next RETR or HASH (RANG). */
  private rang: ByteRangeCmd | null = null;
  private readonly hashes = new FtpHashes();
  private renameFrom: string | null = null;
  private transfer: AbortController | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly gone = new AbortController();

  constructor(
    socket: net.Socket,
    private readonly o: ControlOptions,
  ) {
    this.stream = socket;
    this.ip = plainIp(socket.remoteAddress);
    socket.setNoDelay(true);
    socket.on('close', () => this.onClose());
  }

  /** Starts the conversation (implicit TLS first when the binding wants it). */
  start(): void {
    // the grace time counts from the connection (an implicit TLS client that never finishes its handshake too)
    this.arm(this.o.config.login_grace_time, 'no login within the grace time');
    if (this.o.binding.tls_mode === 'implicit') {
      this.upgrade(() => this.greet());
    } else {
      this.attach();
      this.greet();
    }
  }

  private greet(): void {
    this.reply(`220 ${this.o.config.banner || 'Ferry FTP server ready.'}`);
  }

  /** Closes the connection at once (service stop, administrator). */
  close(why: string): void {
    if (this.closed) return;
    this.reply(`421 ${why}`);
    this.stream.end();
    setTimeout(() => this.stream.destroy(), 1000).unref();
  }

  private attach(): void {
    this.stream.on('data', (chunk: Buffer) => this.onData(chunk));
    this.stream.on('error', (err) => this.o.logger.debug({ err: err.message, ip: this.ip }, 'ftp control connection error'));
  }

  private onData(chunk: Buffer): void {
    for (const item of this.reader.push(chunk)) this.enqueue(item);
    void this.drain();
  }

  private enqueue(item: LineItem): void {
    if ('refused' in item) {
      this.queue.push(`\u0000${item.refused}`);
      return;
    }
    // ABOR and STAT act during a transfer (RFC 959 4.1.3)
    if (this.transfer && /^ABOR$/i.test(item.line.trim())) {
      this.transfer.abort();
      this.queue.unshift('ABOR');
      return;
    }
    this.queue.push(item.line);
  }

  private async drain(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.queue.length && !this.closed) {
        const line = this.queue.shift()!;
        if (line.startsWith('\u0000')) {
          this.reply(line.slice(1));
          continue;
        }
        if (this.user && this.files) this.arm(this.o.config.idle_timeout, 'idle timeout');
        await this.command(line);
      }
    } finally {
      this.busy = false;
    }
  }

  private reply(text: string): void {
    if (this.closed || this.stream.destroyed) return;
    this.stream.write(`${text}\r\n`);
  }

  private arm(seconds: number, why: string): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer =
      seconds > 0
        ? setTimeout(() => (this.o.logger.info({ ip: this.ip }, `ftp connection closed: ${why}`), this.close(`Closing: ${why}.`)), seconds * 1000)
        : null;
    this.timer?.unref();
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.transfer?.abort();
    this.passive?.close();
    this.gone.abort();
    if (!this.user && this.failures === 0) {
      this.o
        .host()
        .defender.addEvent(this.ip, 'no_auth', PROTOCOL)
        .catch((err: unknown) => this.o.logger.warn({ err, ip: this.ip }, 'defender event not recorded'));
    }
    const files = this.files;
    this.files = null;
    void files?.close().catch((err: unknown) => this.o.logger.warn({ err, ip: this.ip }, 'ftp session not closed cleanly'));
  }

  /** Wraps the control connection in TLS (AUTH TLS, implicit FTPS); `then` runs once secure. */
  private upgrade(then: () => void): void {
    const raw = this.stream as net.Socket;
    raw.removeAllListeners('data');
    raw.pause();
    this.tlsContext = this.o.secureContext!();
    const asks = this.o.binding.client_auth_type > 0;
    const secure = new tls.TLSSocket(raw, { isServer: true, secureContext: this.tlsContext, requestCert: asks, rejectUnauthorized: false });
    secure.once('secure', () => {
      if (asks && !this.acceptClientCertificate(secure)) return;
      this.stream = secure;
      // bytes a client sent in clear after AUTH TLS are dropped: they were never protected
      this.reader = new LineReader(MAX_LINE);
      this.attach();
      then();
    });
    secure.on('error', (err) => {
      this.o.logger.info({ ip: this.ip, err: err.message }, 'ftp TLS handshake failed');
      raw.destroy();
    });
  }

  /**
   * The client certificate of the control connection (client_auth_type 1
   * or 2): an untrusted one, or none where one is required, ends the
   * connection; a trusted one's common name may log in (USER).
   */
  private acceptClientCertificate(secure: tls.TLSSocket): boolean {
    const peer = secure.getPeerCertificate();
    const sent = !!peer && Object.keys(peer).length > 0;
    const untrusted = sent ? chainError(secure) : null;
    const why = untrusted ? `untrusted client certificate (${untrusted})` : !sent && this.o.binding.client_auth_type === 1 ? 'no client certificate' : '';
    if (why) {
      this.o.logger.info({ ip: this.ip }, `ftp connection refused: ${why}`);
      secure.end(`421 ${untrusted ? 'Your client certificate is not trusted.' : 'A client certificate is required here.'}\r\n`);
      void this.o
        .host()
        .defender.addEvent(this.ip, 'no_auth', PROTOCOL)
        .catch(() => undefined);
      return false;
    }
    const cn = sent ? peer.subject?.CN : undefined;
    this.certificateName = typeof cn === 'string' ? cn : Array.isArray(cn) ? (cn[0] ?? null) : null;
    return true;
  }

  private get tlsRequired(): boolean {
    return this.o.binding.tls_mode === 'explicit-required' || this.o.binding.tls_mode === 'implicit';
  }

  private resolve(arg: string): string {
    return this.files!.path(path.posix.resolve('/', this.cwd, arg || '.'));
  }

  private async command(line: string): Promise<void> {
    const { verb, arg } = parseCommand(line);
    try {
      await this.run(verb, arg);
    } catch (err) {
      if (!(err instanceof FtpReply)) this.o.logger.info({ ip: this.ip, verb, err: (err as Error).message }, 'ftp command failed');
      this.reply(replyOf(err));
    }
    if (verb !== 'REST') this.restAt = 0;
    if (!KEEP_RANG.has(verb)) this.rang = null;
    if (verb !== 'RNFR') this.renameFrom = verb === 'RNTO' ? null : this.renameFrom;
  }

  private async run(verb: string, arg: string): Promise<void> {
    switch (verb) {
      case 'QUIT':
        this.reply('221 Goodbye.');
        this.stream.end();
        return;
      case 'NOOP':
        return this.reply('200 OK.');
      case 'SYST':
        return this.reply('215 UNIX Type: L8');
      case 'FEAT':
        return this.reply(['211-Features:', ...this.features().map((f) => ` ${f}`), '211 End'].join('\r\n'));
      case 'OPTS':
        if (/^UTF8(\s+ON)?$/i.test(arg.trim())) return this.reply('200 UTF8 is always on.');
        if (/^HASH(\s|$)/i.test(arg.trim())) return this.reply(this.hashes.opts(arg.trim().slice(4)));
        throw new FtpReply(501, 'Option not understood.');
      case 'AUTH':
        return this.auth(arg);
      case 'PBSZ':
        if (!this.tlsContext) throw new FtpReply(503, 'PBSZ needs a TLS control connection.');
        this.pbsz = true;
        return this.reply('200 PBSZ=0');
      case 'PROT':
        return this.prot(arg);
      case 'USER':
        return this.userCmd(arg);
      case 'PASS':
        return this.pass(arg);
      case 'ABOR':
        return this.reply('226 ABOR processed.');
    }
    if (!this.files) throw new FtpReply(530, 'Please log in with USER and PASS.');
    switch (verb) {
      case 'PWD':
      case 'XPWD':
        return this.reply(`257 "${this.cwd.replace(/"/g, '""')}" is the current directory.`);
      case 'CWD':
      case 'XCWD':
        return this.cwdTo(arg);
      case 'CDUP':
      case 'XCUP':
        return this.cwdTo('..');
      case 'TYPE':
        if (/^(A|A N|I|L 8)$/i.test(arg.trim())) return this.reply(`200 Type set to ${arg.trim().toUpperCase()[0]}.`);
        throw new FtpReply(504, 'Type not supported.');
      case 'MODE':
        if (arg.trim().toUpperCase() === 'S') return this.reply('200 Mode S.');
        throw new FtpReply(504, 'Only mode S is supported.');
      case 'STRU':
        if (arg.trim().toUpperCase() === 'F') return this.reply('200 Structure F.');
        throw new FtpReply(504, 'Only structure F is supported.');
      case 'PASV':
        if (this.epsvOnly) throw new FtpReply(501, 'PASV after EPSV ALL: use EPSV.');
        return this.pasv(false);
      case 'EPSV':
        if (arg && !/^(2|ALL)$/i.test(arg.trim())) throw new FtpReply(522, 'Network protocol not supported, use (2).');
        if (/^ALL$/i.test(arg.trim())) {
          this.epsvOnly = true;
          return this.reply('200 EPSV ALL: only EPSV from now on.');
        }
        return this.pasv(true);
      case 'PORT':
      case 'EPRT':
        return this.active(verb, arg);
      case 'REST': {
        if (!/^\d{1,15}$/.test(arg.trim())) throw new FtpReply(501, 'REST needs a byte offset.');
        this.restAt = Number(arg.trim());
        return this.reply(`350 Restarting at ${this.restAt}.`);
      }
      case 'SIZE': {
        const info = await this.files.stat(this.resolve(arg), { signal: this.gone.signal });
        if (info.isDir) throw new FtpReply(550, 'Not a regular file.');
        return this.reply(`213 ${info.size}`);
      }
      case 'MDTM': {
        const info = await this.files.stat(this.resolve(arg), { signal: this.gone.signal });
        return this.reply(`213 ${ftpTime(info.mtime)}`);
      }
      case 'MFMT': {
        const sp = arg.indexOf(' ');
        const when = parseFtpTime(sp < 0 ? arg : arg.slice(0, sp));
        if (!when || sp < 0) throw new FtpReply(501, 'MFMT needs YYYYMMDDHHMMSS and a path.');
        const p = this.resolve(arg.slice(sp + 1));
        await this.files.setMtime(p, when, { signal: this.gone.signal });
        return this.reply(`213 Modify=${ftpTime(when)}; ${arg.slice(sp + 1)}`);
      }
      case 'MKD':
      case 'XMKD': {
        const p = this.resolve(arg);
        await this.files.mkdir(p, false, { signal: this.gone.signal });
        return this.reply(`257 "${p.replace(/"/g, '""')}" created.`);
      }
      case 'RMD':
      case 'XRMD': {
        const p = this.resolve(arg);
        const info = await this.files.stat(p, { signal: this.gone.signal });
        if (!info.isDir) throw new FtpReply(550, 'Not a directory.');
        if (p === '/') throw new FtpReply(550, 'The root directory cannot be removed.');
        const first = await this.files.list(p, { signal: this.gone.signal });
        for await (const page of first) {
          if (page.length) throw new FtpReply(550, 'Directory not empty.');
          break;
        }
        await this.files.removeDir(p, { signal: this.gone.signal });
        return this.reply('250 Directory removed.');
      }
      case 'DELE':
        await this.files.removeFile(this.resolve(arg), { signal: this.gone.signal });
        return this.reply('250 File deleted.');
      case 'RNFR': {
        const p = this.resolve(arg);
        await this.files.stat(p, { signal: this.gone.signal });
        this.renameFrom = p;
        return this.reply('350 Ready for RNTO.');
      }
      case 'RNTO': {
        if (!this.renameFrom) throw new FtpReply(503, 'RNFR first.');
        const from = this.renameFrom;
        this.renameFrom = null;
        await this.files.rename(from, this.resolve(arg), { signal: this.gone.signal });
        return this.reply('250 Renamed.');
      }
      case 'MLST': {
        const p = this.resolve(arg);
        const info = await this.files.stat(p, { signal: this.gone.signal });
        return this.reply(`250-Listing ${p}\r\n ${mlsxFacts(info, this.perm(info, p))} ${p}\r\n250 End`);
      }
      case 'LIST':
      case 'NLST':
      case 'MLSD':
        return this.list(verb, arg);
      case 'RANG': {
        this.rang = null;
        this.rang = parseRang(arg);
        this.restAt = 0;
        return this.reply(
          this.rang ? `350 Restarting at ${this.rang.start}. Ending at ${this.rang.end}.` : '350 Restarting at 0. Ending at the end of the file.',
        );
      }
      case 'HASH':
        return this.reply(await this.working(this.hashes.hash(this.hashTarget(arg), arg, this.rang)));
      case 'XCRC':
      case 'XMD5':
      case 'XSHA1':
      case 'XSHA256':
      case 'XSHA512': {
        const a = parseLegacyHashArgs(arg);
        return this.reply(await this.working(legacyHash(this.hashTarget(a.path), verb, a.start, a.end)));
      }
      case 'RETR':
        return this.retr(arg);
      case 'STOR':
      case 'APPE':
        return this.stor(verb, arg);
      case 'STOU':
        return this.stou(arg);
    }
    throw new FtpReply(502, 'Command not implemented.');
  }

  /** A long command without data connection (a hash of a big file): not idle while it runs, as a transfer is not. */
  private async working<T>(work: Promise<T>): Promise<T> {
    if (this.timer) clearTimeout(this.timer);
    try {
      return await work;
    } finally {
      this.arm(this.o.config.idle_timeout, 'idle timeout');
    }
  }

  private hashTarget(arg: string) {
    return { files: this.files!, path: this.resolve(arg), signal: this.gone.signal };
  }

  private features(): string[] {
    const f = [...FEATURES, this.hashes.feature()];
    if (this.o.config.active_mode) f.push('EPRT');
    if (this.o.secureContext && this.o.binding.tls_mode !== 'plain') f.push('AUTH TLS', 'PBSZ', 'PROT');
    return f.sort();
  }

  private auth(arg: string): void {
    if (!/^(TLS|TLS-C|SSL)$/i.test(arg.trim())) throw new FtpReply(504, 'Only AUTH TLS is supported.');
    if (!this.o.secureContext || this.o.binding.tls_mode === 'plain') throw new FtpReply(534, 'TLS is not available on this address.');
    if (this.tlsContext) throw new FtpReply(503, 'Already on TLS.');
    this.reply('234 AUTH TLS OK.');
    // the queue is dropped: commands pipelined after AUTH TLS came in clear
    this.queue = [];
    this.upgrade(() => undefined);
  }

  private prot(arg: string): void {
    if (!this.tlsContext) throw new FtpReply(503, 'PROT needs a TLS control connection.');
    if (!this.pbsz) throw new FtpReply(503, 'PBSZ first.');
    const level = arg.trim().toUpperCase();
    if (level === 'P') {
      this.protectData = true;
      return this.reply('200 PROT P.');
    }
    if (level === 'C') {
      if (this.tlsRequired) throw new FtpReply(534, 'Data connections must be protected here (PROT P).');
      this.protectData = false;
      return this.reply('200 PROT C.');
    }
    throw new FtpReply(504, 'PROT level not supported.');
  }

  private userCmd(arg: string): void | Promise<void> {
    if (this.files) throw new FtpReply(503, 'Already logged in.');
    if (this.tlsRequired && !this.tlsContext) throw new FtpReply(530, 'TLS is required on this address: send AUTH TLS first.');
    if (!arg) throw new FtpReply(501, 'USER needs a name.');
    this.user = arg;
    this.certificatePassed = false;
    if (this.certificateName !== null && arg === this.certificateName) return this.certificateLogin(arg);
    this.reply(`331 Password required for ${arg}.`);
  }

  /** USER with the name of the client certificate: logged in (232), or the password step of TLSCertificate+password, or an ordinary password login. */
  private async certificateLogin(username: string): Promise<void> {
    const credential = { method: 'tls-certificate' as const, commonName: this.certificateName! };
    let result;
    try {
      result = await this.o.host().login.authenticate({ username, credential, ip: this.ip, protocol: PROTOCOL });
    } catch (err) {
      if (err instanceof LoginRefusedError && err.reason === 'certificate-not-accepted') return this.reply(`331 Password required for ${username}.`);
      return this.loginFailed(username, err);
    }
    if (result.status === 'partial') {
      this.certificatePassed = true;
      return this.reply(`331 Certificate accepted: password required for ${username}.`);
    }
    if (result.status !== 'ok') return this.loginFailed(username, new Error(`unexpected login result ${result.status}`));
    await this.startSession(username, '232 User %s logged in, authorized by the client certificate.');
  }

  private async pass(password: string): Promise<void> {
    if (this.files) throw new FtpReply(503, 'Already logged in.');
    const username = this.user;
    if (!username) throw new FtpReply(503, 'USER first.');
    try {
      // FTP has one login step: an account whose second factor applies to FTP sends its code at the end of the password
      const credential = { method: 'password' as const, password, otpAppended: true };
      const passed = this.certificatePassed ? (['TLSCertificate'] as const) : undefined;
      const result = await this.o.host().login.authenticate({ username, credential, ip: this.ip, protocol: PROTOCOL, ...(passed ? { passed } : {}) });
      if (result.status !== 'ok') throw new FtpReply(530, 'Login incorrect.');
    } catch (err) {
      return this.loginFailed(username, err);
    }
    await this.startSession(username, '230 User %s logged in.');
  }

  /** Opens the file session of a logged-in user and answers `reply` (%s: the username). */
  private async startSession(username: string, reply: string): Promise<void> {
    try {
      const files = await this.o.host().sessions.open({
        username,
        ip: this.ip,
        protocol: PROTOCOL,
        sessionKey: randomUUID(),
        command: '',
        signal: this.gone.signal,
      });
      // the account's start directory: the first working directory
      const start = await files.startDirectory({ signal: this.gone.signal }).catch(async (err: unknown) => {
        await files.close().catch(() => undefined);
        throw err;
      });
      if (this.closed) return void files.close().catch(() => undefined);
      this.files = files;
      this.cwd = start;
      // closed by an administrator (DELETE /api/v2/connections/{id}, from any node)
      files.signal.addEventListener('abort', () => this.close('Connection closed by the administrator.'), { once: true });
      this.arm(this.o.config.idle_timeout, 'idle timeout');
      this.reply(reply.replace('%s', username));
    } catch (err) {
      this.loginFailed(username, err);
    }
  }

  /** A refused login: logged, counted, the connection closed after max_auth_tries. */
  private loginFailed(username: string, err: unknown): void {
    this.user = null;
    this.certificatePassed = false;
    const reason = err instanceof LoginRefusedError ? err.reason : (err as Error).message;
    this.o.logger.info({ ip: this.ip, username, reason }, 'ftp login refused');
    if (++this.failures >= this.o.config.max_auth_tries) {
      this.reply('530 Login incorrect.');
      this.close('Too many failed logins.');
      return;
    }
    throw new FtpReply(530, 'Login incorrect.');
  }

  private async cwdTo(arg: string): Promise<void> {
    const p = this.resolve(arg);
    const info = await this.files!.stat(p, { signal: this.gone.signal });
    if (!info.isDir) throw new FtpReply(550, 'Not a directory.');
    this.cwd = p;
    this.reply(`250 Directory changed to ${p}.`);
  }

  private async pasv(extended: boolean): Promise<void> {
    this.passive?.close();
    const raw = this.rawSocket();
    const local = plainIp(raw.localAddress);
    const listener = new PassiveListener({ localAddress: local, clientIp: this.ip, range: this.o.config.passive_port_range, logger: this.o.logger });
    await listener.listen();
    this.passive = listener;
    if (extended) return this.reply(`229 Entering Extended Passive Mode (|||${listener.port}|)`);
    const announced = this.o.binding.force_passive_ip || local;
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(announced)) throw new FtpReply(425, 'PASV needs IPv4: use EPSV.');
    this.reply(`227 Entering Passive Mode (${announced.replace(/\./g, ',')},${listener.port >> 8},${listener.port & 255}).`);
  }

  /** PORT/EPRT: the next transfer connects to the client (when the operator turned active mode on). */
  private active(verb: 'PORT' | 'EPRT', arg: string): void {
    if (!this.o.config.active_mode) throw new FtpReply(502, 'Active mode is off on this server: use PASV or EPSV.');
    if (this.epsvOnly) throw new FtpReply(501, `${verb} after EPSV ALL: use EPSV.`);
    const target = verb === 'PORT' ? parsePort(arg) : parseEprt(arg);
    try {
      checkTarget(target, this.ip);
    } catch (err) {
      this.o.logger.warn({ ip: this.ip, target }, `ftp ${verb} refused: ${(err as Error).message}`);
      throw err;
    }
    this.passive?.close();
    this.passive = new ActiveConnector({ target, localAddress: plainIp(this.rawSocket().localAddress), logger: this.o.logger });
    this.reply(`200 ${verb} command successful.`);
  }

  private rawSocket(): net.Socket {
    const s = this.stream as tls.TLSSocket & { _parent?: net.Socket };
    return s instanceof tls.TLSSocket ? (s._parent ?? s) : s;
  }

  /** The data connection for a transfer, after the 150 reply (TLS with session reuse under PROT P); throws a reply otherwise. */
  private async openData(what: string, opening = `Opening data connection for ${what}.`, upload?: UploadBuffers): Promise<net.Socket | tls.TLSSocket> {
    if (this.tlsRequired && !this.protectData) throw new FtpReply(521, 'Data connections must be protected here: send PBSZ 0 and PROT P.');
    const listener = this.passive;
    this.passive = null;
    if (!listener) throw new FtpReply(425, this.o.config.active_mode ? 'Use PASV, EPSV, PORT or EPRT first.' : 'Use PASV or EPSV first.');
    // a plain upload's connection reads in large chunks (large-reads.ts)
    const socket = await listener.take(this.o.config.data_timeout * 1000, upload);
    if (!socket) {
      listener.close();
      throw new FtpReply(425, 'No data connection.');
    }
    this.reply(`150 ${opening}`);
    if (!this.protectData) return socket;
    const secure = new tls.TLSSocket(socket, { isServer: true, secureContext: this.tlsContext! });
    const ok = await new Promise<boolean>((resolve) => {
      secure.once('secure', () => resolve(true));
      secure.once('error', () => resolve(false));
      secure.once('close', () => resolve(false));
    });
    if (!ok) {
      socket.destroy();
      throw new FtpReply(425, 'TLS handshake on the data connection failed.');
    }
    if (this.o.config.require_tls_session_reuse && !secure.isSessionReused()) {
      this.o.logger.warn({ ip: this.ip }, 'ftp data connection refused: its TLS session is not the control connection session');
      secure.destroy();
      throw new FtpReply(522, 'The data connection must reuse the TLS session of the control connection.');
    }
    secure.on('error', () => undefined);
    return secure;
  }

  private perm(info: FileInfo, p: string): string {
    const dir = info.isDir ? p : path.posix.dirname(p);
    const has = (...perms: Parameters<FileSession['hasPermission']>[1][]) => this.files!.hasPermission(dir, ...perms);
    let s = '';
    if (info.isDir) {
      if (has('list')) s += 'el';
      if (has('upload')) s += 'c';
      if (has('create_dirs')) s += 'm';
      if (has('delete', 'delete_dirs')) s += 'd';
    } else {
      if (has('download')) s += 'r';
      if (has('overwrite')) s += 'w';
      if (has('delete', 'delete_files')) s += 'd';
    }
    if (has('rename')) s += 'f';
    return s;
  }

  private async list(verb: string, arg: string): Promise<void> {
    const target = arg
      .split(' ')
      .filter((a) => a && !(verb === 'LIST' && a.startsWith('-')))
      .join(' ');
    const p = this.resolve(target);
    const info = await this.files!.stat(p, { signal: this.gone.signal });
    if (verb === 'MLSD' && !info.isDir) throw new FtpReply(501, 'MLSD needs a directory.');
    const pages: AsyncIterable<FileInfo[]> = info.isDir
      ? await this.files!.list(p, { signal: this.gone.signal })
      : (async function* () {
          yield [info];
        })();
    await this.withTransfer('the listing', undefined, async (data, signal) => {
      const now = Date.now();
      for await (const page of pages) {
        if (signal.aborted) throw new FtpReply(426, 'Transfer aborted.');
        let out = '';
        for (const e of page) {
          if (verb === 'NLST') out += `${target && info.isDir ? path.posix.join(target, e.name) : e.name}\r\n`;
          else if (verb === 'MLSD') out += `${mlsxFacts(e, this.perm(e, path.posix.join(p, e.name)))} ${e.name}\r\n`;
          else out += listLine(e, now);
        }
        if (!data.write(out))
          await new Promise<void>((resolve, reject) => {
            data.once('drain', resolve);
            data.once('close', () => reject(new FtpReply(426, 'Data connection closed.')));
          });
      }
      await new Promise<void>((resolve) => data.end(resolve));
    });
  }

  /** Runs a transfer on the data connection: 226 once done, 426 when aborted or cut. */
  /** A transfer on a data connection; `opening` replaces the text of the 150 reply. */
  private async withTransfer(
    what: string,
    opening: string | undefined,
    work: (data: net.Socket | tls.TLSSocket, signal: AbortSignal) => Promise<void>,
    upload = false,
  ): Promise<void> {
    // a plain upload reads into pooled buffers the storage gives back once written (TLS reads its own way)
    const buffers = upload && !this.protectData ? leaseUploadBuffers() : undefined;
    let data: net.Socket | tls.TLSSocket;
    try {
      data = await this.openData(what, opening, buffers);
    } catch (err) {
      buffers?.close();
      throw err;
    }
    const ctl = new AbortController();
    this.transfer = ctl;
    const cut = () => data.destroy();
    ctl.signal.addEventListener('abort', cut, { once: true });
    if (this.timer) clearTimeout(this.timer);
    try {
      await work(data, ctl.signal);
      this.reply('226 Transfer complete.');
    } catch (err) {
      data.destroy();
      if (ctl.signal.aborted) throw new FtpReply(426, 'Transfer aborted.');
      throw err;
    } finally {
      ctl.signal.removeEventListener('abort', cut);
      buffers?.close();
      this.transfer = null;
      this.arm(this.o.config.idle_timeout, 'idle timeout');
    }
  }

  private async retr(arg: string): Promise<void> {
    const p = this.resolve(arg);
    const start = this.rang?.start ?? this.restAt;
    const end = this.rang?.end;
    // read into lent buffers, each given back once the socket took it: larger reads for a long file, no garbage per chunk
    const read = await this.files!.openRead(p, {
      signal: this.gone.signal,
      recycle: true,
      ...(start ? { start } : {}),
      ...(end !== undefined ? { end } : {}),
    });
    try {
      await this.withTransfer(p, undefined, async (data) => {
        try {
          if (read.writeTo) {
            read.writeTo(data);
            // (the client sends nothing on a download's data connection: only its writable side tells the end)
            await finished(data, { readable: false });
          } else await pipeline(read.stream, data);
        } catch (err) {
          throw err instanceof FtpReply ? err : new FtpReply(426, 'Transfer failed: connection closed.');
        }
      });
    } finally {
      read.stream.destroy();
      await read.done;
    }
  }

  /**
   * STOU (RFC 959, reply as RFC 1123 4.1.2.9): stores under a name no file
   * has, the argument (or "ftp-upload") when free, else with a random suffix;
   * the 150 reply names it as `FILE: name`.
   */
  private async stou(arg: string): Promise<void> {
    if (this.restAt) throw new FtpReply(503, 'REST cannot be used with STOU.');
    if (this.rang) throw new FtpReply(503, 'RANG applies to RETR and HASH only.');
    const base = this.resolve(arg.trim() || 'ftp-upload');
    const free = async (p: string) => (await this.files!.stat(p, { signal: this.gone.signal }).catch(() => null)) === null;
    let p = base;
    for (let i = 0; !(await free(p)); i++) {
      if (i === 5) throw new FtpReply(450, 'No unique name found: try again.');
      p = `${base}.${randomUUID().slice(0, 8)}`;
    }
    return this.stor('STOR', p, `FILE: ${path.posix.basename(p)}`);
  }

  private async stor(verb: string, arg: string, opening?: string): Promise<void> {
    if (this.rang) throw new FtpReply(503, 'RANG applies to RETR and HASH only.');
    const p = verb === 'STOR' && opening ? arg : this.resolve(arg);
    let offset: number | undefined;
    if (verb === 'APPE') offset = (await this.files!.stat(p, { signal: this.gone.signal }).catch(() => null))?.size ?? 0;
    else if (this.restAt) offset = this.restAt;
    const write = await this.files!.openWrite(p, { signal: this.gone.signal, ...(offset ? { offset } : {}) });
    write.done.catch(() => undefined);
    try {
      await this.withTransfer(
        p,
        opening,
        async (data) => {
          let ended = false;
          data.once('end', () => (ended = true));
          // a write refused midway (quota) may stop taking bytes without failing the pipeline: its end decides
          const refused = write.done.then(
            () => new Promise<never>(() => undefined),
            (e: unknown) => Promise.reject(e),
          );
          try {
            await Promise.race([pipeline(data, write.stream), refused]);
          } catch (err) {
            throw await write.done.then(
              () => new FtpReply(426, 'Transfer failed.'),
              (e: unknown) => e ?? err,
            );
          }
          if (!ended) throw new FtpReply(426, 'Data connection cut.');
          await write.done;
        },
        true,
      );
    } catch (err) {
      write.abort(err);
      throw err;
    }
  }
}
