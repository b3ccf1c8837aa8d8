import path from 'node:path';
import type { FileInfo, FileSession, Logger, SessionWrite } from '@ferry/core';
import type { ServerChannel } from 'ssh2';
import { ChannelReader } from './channel-reader.js';
import { statusOf } from './status.js';

/** The options of `scp -t` / `scp -f` the server side understands. */
interface ScpOptions {
  sink: boolean;
  source: boolean;
  recursive: boolean;
  times: boolean;
  targetIsDir: boolean;
  paths: string[];
}

/** Parses the server side's arguments (`-v -r -p -d -t -- PATH`, flags possibly grouped). */
export function parseScpArgs(args: string[]): ScpOptions {
  const o: ScpOptions = { sink: false, source: false, recursive: false, times: false, targetIsDir: false, paths: [] };
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      i++;
      break;
    }
    if (!a.startsWith('-') || a === '-') break;
    for (const f of a.slice(1)) {
      if (f === 't') o.sink = true;
      else if (f === 'f') o.source = true;
      else if (f === 'r') o.recursive = true;
      else if (f === 'p') o.times = true;
      else if (f === 'd') o.targetIsDir = true;
      else if (f !== 'v' && f !== 'q' && f !== 'E') throw new Error(`unknown option -${f}`);
    }
  }
  o.paths = args.slice(i);
  if (o.sink === o.source) throw new Error('exactly one of -t and -f is needed');
  if (!o.paths.length || (o.sink && o.paths.length > 1)) throw new Error(o.sink ? 'one target is needed' : 'a source is needed');
  return o;
}

export interface ScpContext {
  channel: ServerChannel;
  args: string[];
  session: FileSession;
  logger: Logger;
}

/** Runs the server side of the legacy SCP protocol; resolves with the exit status. */
export async function runScp(ctx: ScpContext): Promise<number> {
  let o: ScpOptions;
  try {
    o = parseScpArgs(ctx.args);
  } catch (err) {
    const message = `scp: ${(err as Error).message}`;
    ctx.channel.write(`\x02${message}\n`);
    ctx.channel.stderr.write(`${message}\n`);
    return 1;
  }
  const reader = new ChannelReader(ctx.channel);
  return o.sink ? new ScpSink(ctx, o, reader).run() : new ScpSource(ctx, o, reader).run();
}

/** Waits for the writer to accept more (backpressure), or for its failure. */
async function writeAll(stream: NodeJS.WritableStream, data: Buffer): Promise<void> {
  if (stream.write(data)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (err?: unknown) => (stream.off('drain', done), stream.off('error', done), stream.off('close', done), err ? reject(err) : resolve());
    stream.on('drain', done);
    stream.on('error', done);
    stream.on('close', done);
  });
}

/** A record's name: one path segment, nothing that leaves the directory. */
function safeName(name: string): string {
  if (!name || name === '.' || name === '..' || name.includes('/')) throw new Error(`invalid name "${name.slice(0, 64)}"`);
  return name;
}

/** `scp -t DEST`: the client uploads files and directories into DEST. */
class ScpSink {
  private status = 0;
  /** The directories being received (recursive uploads). */
  private readonly dirs: { path: string; mtime: Date | null }[] = [];
  private mtime: Date | null = null;
  private readonly session: FileSession;

  constructor(
    private readonly ctx: ScpContext,
    private readonly o: ScpOptions,
    private readonly reader: ChannelReader,
  ) {
    this.session = ctx.session;
  }

  private ack(): void {
    this.ctx.channel.write('\0');
  }

  private error(message: string): void {
    this.status = 1;
    this.ctx.channel.write(`\x01scp: ${message.replace(/\n/g, ' ')}\n`);
  }

  async run(): Promise<number> {
    let dest: string;
    let destIsDir = false;
    try {
      dest = this.session.path(this.o.paths[0]);
      destIsDir = await this.session.stat(dest).then(
        (i) => i.isDir,
        () => false,
      );
      if (this.o.targetIsDir && !destIsDir) throw new Error(`${dest}: not a directory`);
    } catch (err) {
      this.ctx.channel.write(`\x02scp: ${messageOf(err)}\n`);
      return 1;
    }
    this.ack();
    for (;;) {
      const line = await this.reader.line();
      if (line === null) return this.status;
      const kind = line[0];
      const rest = line.slice(1);
      try {
        if (kind === '\x01' || kind === '\x02') {
          this.status = 1;
          if (kind === '\x02') return 1;
          continue;
        }
        if (kind === 'T') {
          const m = /^(\d+) (\d+) (\d+) (\d+)$/.exec(rest);
          if (!m) throw new Error('protocol error: bad T record');
          this.mtime = new Date(Number(m[1]) * 1000 + Math.floor(Number(m[2]) / 1000));
          this.ack();
          continue;
        }
        if (kind === 'E') {
          const dir = this.dirs.pop();
          if (!dir) throw new Error('protocol error: E without D');
          if (dir.mtime && this.o.times) await this.session.setMtime(dir.path, dir.mtime).catch(() => undefined);
          this.ack();
          continue;
        }
        const m = /^([0-7]{4}) (\d+) (.+)$/.exec(rest);
        if ((kind !== 'C' && kind !== 'D') || !m) throw new Error(`protocol error: unexpected record "${line.slice(0, 32)}"`);
        const name = safeName(m[3]!);
        const parent = this.dirs.at(-1)?.path;
        const target = parent ? path.posix.join(parent, name) : destIsDir ? path.posix.join(dest, name) : dest;
        const mtime = this.o.times ? this.mtime : null;
        this.mtime = null;
        if (kind === 'D') await this.directory(target, mtime);
        else await this.file(target, Number(m[2]), mtime);
      } catch (err) {
        if (/^protocol error/.test((err as Error).message)) {
          this.ctx.channel.write(`\x02scp: ${(err as Error).message}\n`);
          return 1;
        }
        this.error(messageOf(err));
      }
    }
  }

  private async directory(target: string, mtime: Date | null): Promise<void> {
    if (!this.o.recursive) throw new Error(`${target}: received a directory without -r`);
    const existing = await this.session.stat(target).catch(() => null);
    if (existing && !existing.isDir) throw new Error(`${target}: not a directory`);
    if (!existing) await this.session.mkdir(target);
    this.dirs.push({ path: target, mtime });
    this.ack();
  }

  private async file(target: string, size: number, mtime: Date | null): Promise<void> {
    // a refusal before any byte: the client does not send the file; counters stored with the next files' (`scp -r`)
    const w = await this.session.openWrite(target, { size, ...(mtime ? { mtime } : {}), signal: this.session.signal, deferCounters: true });
    let failure: unknown = null;
    const fail = (err: unknown) => {
      if (failure) return;
      failure = err;
      w.abort(err);
    };
    w.stream.on('error', fail);
    const done = w.done.catch((err: unknown) => (fail(err), null));
    this.ack();
    await this.receive(w, size, fail, () => failure !== null);
    const end = await this.reader.byte();
    if (end === null) {
      fail(new Error('the client left during the transfer'));
      throw new Error('protocol error: the client left during the transfer');
    }
    if (end !== 0) fail(new Error('the client reported an error'));
    if (!failure) w.stream.end();
    await done;
    if (failure) throw failure;
    this.ack();
  }

  /** Copies `size` bytes of the channel into the write (after a failure, reads and drops them). */
  private async receive(w: SessionWrite, size: number, fail: (err: unknown) => void, failed: () => boolean): Promise<void> {
    for (let left = size; left > 0;) {
      const chunk = await this.reader.chunk(left);
      if (!chunk) {
        fail(new Error('the client left during the transfer'));
        throw new Error('protocol error: the client left during the transfer');
      }
      left -= chunk.length;
      if (failed()) continue;
      await writeAll(w.stream, chunk).catch(fail);
    }
  }
}

/** `scp -f SRC...`: the client downloads files (and directories with -r). */
class ScpSource {
  private status = 0;
  private readonly session: FileSession;

  constructor(
    private readonly ctx: ScpContext,
    private readonly o: ScpOptions,
    private readonly reader: ChannelReader,
  ) {
    this.session = ctx.session;
  }

  /** Waits for the client's answer: true when it accepted, false on a warning; throws on a fatal error. */
  private async response(): Promise<boolean> {
    const b = await this.reader.byte();
    if (b === 0) return true;
    if (b === null) throw new Error('the client left');
    const message = await this.reader.line();
    if (b === 1) return false;
    throw new Error(`the client stopped: ${(message ?? '').slice(0, 128)}`);
  }

  private warn(message: string): void {
    this.status = 1;
    this.ctx.channel.write(`\x01scp: ${message.replace(/\n/g, ' ')}\n`);
  }

  async run(): Promise<number> {
    try {
      if (!(await this.response())) return 1;
      for (const arg of this.o.paths) {
        try {
          const p = this.session.path(arg);
          await this.send(p, await this.session.stat(p));
        } catch (err) {
          if (err instanceof ClientGone) throw err;
          this.warn(messageOf(err));
        }
      }
    } catch (err) {
      this.ctx.logger.debug({ err }, 'scp download stopped');
      return 1;
    }
    return this.status;
  }

  private async times(info: FileInfo): Promise<boolean> {
    if (!this.o.times) return true;
    const s = Math.floor(info.mtime.getTime() / 1000);
    this.ctx.channel.write(`T${s} 0 ${s} 0\n`);
    return this.expect();
  }

  private async expect(): Promise<boolean> {
    try {
      return await this.response();
    } catch (err) {
      throw new ClientGone((err as Error).message);
    }
  }

  private async send(p: string, info: FileInfo): Promise<void> {
    const mode = (info.mode & 0o7777).toString(8).padStart(4, '0');
    const name = info.name || path.posix.basename(p) || '/';
    if (info.isDir) {
      if (!this.o.recursive) return this.warn(`${p}: not a regular file`);
      if (!(await this.times(info))) return;
      this.ctx.channel.write(`D${mode} 0 ${name}\n`);
      if (!(await this.expect())) return;
      for await (const page of await this.session.list(p, { signal: this.session.signal })) {
        for (const entry of page) {
          const child = path.posix.join(p, entry.name);
          try {
            await this.send(child, entry);
          } catch (err) {
            if (err instanceof ClientGone) throw err;
            this.warn(messageOf(err));
          }
        }
      }
      this.ctx.channel.write('E\n');
      await this.expect();
      return;
    }
    const read = await this.session.openRead(p, { signal: this.session.signal });
    try {
      if (!(await this.times(info))) return;
      this.ctx.channel.write(`C${mode} ${read.info.size} ${name}\n`);
      if (!(await this.expect())) return;
      let sent = 0;
      let failure: unknown = null;
      try {
        for await (const chunk of read.stream as AsyncIterable<Buffer>) {
          const part = chunk.subarray(0, read.info.size - sent);
          sent += part.length;
          await writeAll(this.ctx.channel, part);
        }
      } catch (err) {
        failure = err;
      }
      // the size was announced: the client reads it whatever happens
      for (let left = read.info.size - sent; left > 0; left -= 65536) await writeAll(this.ctx.channel, Buffer.alloc(Math.min(left, 65536)));
      if (failure || sent < read.info.size) this.warn(`${p}: ${failure ? messageOf(failure) : 'the file shrank while read'}`);
      else this.ctx.channel.write('\0');
      await this.expect();
    } finally {
      read.stream.destroy();
      await read.done;
    }
  }
}

/** The client left or stopped the transfer: nothing more can be sent. */
class ClientGone extends Error {}

function messageOf(err: unknown): string {
  if (err instanceof Error && err.constructor === Error) return err.message;
  return statusOf(err).message;
}
