import path from 'node:path';
import { FsError, FsErrorCode, leaseUploadBuffers, noteShortLived, type FileInfo, type FileSession, type Logger, type UploadBuffers } from '@ferry/core';
import type { Attributes, FileEntry, SFTPWrapper } from 'ssh2';
import ssh2 from './ssh2-module.js';
import { DirHandle, MAX_READ, ReadHandle, WriteHandle, type Handle } from './handles.js';
import { pooledWrite } from './write-handle.js';
import { poolWritePackets, type WritePackets } from './write-packets.js';
import type { ExtensionHost } from './extension-host.js';
import { EXTENDED_REQUESTS, handleExtended } from './sftp-extensions.js';
import { channelFlow, outgoingRoom, sendData, sendExtendedReply, u64, type OutgoingRoom } from './ssh2-sftp-internals.js';
import { STATUS, SftpStatusError, statusOf } from './status.js';
import { UploadDirs } from './upload-dirs.js';

const OPEN_MODE = ssh2.utils.sftp.OPEN_MODE;
/** Handles one channel may hold open at once. */
const MAX_HANDLES = 1024;
/** The largest SFTP packet ssh2's server parses (OpenSSH's own limit). */
const MAX_PACKET = 256 * 1024;
/** limits@openssh.com: packet, read and write lengths, open handles (clients then read and write in large requests). */
const LIMITS = Buffer.concat([u64(MAX_PACKET), u64(MAX_READ), u64(MAX_READ), u64(MAX_HANDLES)]);
/** Bytes of WRITEs received and not yet taken by their handle above which the client is held (SSH channel window). */
const MAX_QUEUED_WRITES = 2 * 1024 * 1024;
/**
 * Pooled buffers (256 KiB) the large WRITEs of one SFTP channel may fill at
 * once (write-packets.ts): as many as can be in flight, in the channel's
 * window (2 MiB), waiting for their handle (MAX_QUEUED_WRITES) and ahead of
 * the storage (WRITE_AHEAD). More arriving meanwhile go to new buffers.
 */
const POOLED_WRITES = 32;
/** Bytes of answers ssh2 may hold for the channel's window above which READs wait (a client reading slower than the file is read). */
const MAX_QUEUED_ANSWERS = 1024 * 1024;
/** The extensions the VERSION names. */
export const EXTENSIONS: readonly [string, string][] = [['posix-rename@openssh.com', '1'], ['limits@openssh.com', '1'], ...EXTENDED_REQUESTS];

/** SFTP v3 attributes of an entry. */
export function attrsOf(info: FileInfo): Attributes {
  const mtime = Math.floor(info.mtime.getTime() / 1000);
  return { mode: info.mode, uid: 0, gid: 0, size: info.size, atime: mtime, mtime };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The `ls -l` line of an entry (READDIR's longname). */
export function longnameOf(info: FileInfo, owner: string, now = Date.now()): string {
  const bits = 'rwxrwxrwx'.replace(/./g, (c, i: number) => (info.mode & (0o400 >> i) ? c : '-'));
  const d = info.mtime;
  const recent = Math.abs(now - d.getTime()) < 182 * 24 * 3600 * 1000;
  const time = recent ? `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}` : ` ${d.getFullYear()}`;
  const date = `${MONTHS[d.getMonth()]} ${String(d.getDate()).padStart(2, ' ')} ${time.padStart(5, ' ')}`;
  return `${info.isDir ? 'd' : '-'}${bits}    1 ${owner} ${owner} ${String(info.size).padStart(12)} ${date} ${info.name}`;
}

/**
 * The virtual path of a client path, relative ones against `base` (the
 * session's start directory, '/' by default: the user's root), '..' kept
 * inside the root.
 */
export function normalise(input: string, base = '/'): string {
  // ssh2's parser hands over undefined for a string that runs past some packets (OPEN, SETSTAT, MKDIR, RENAME)
  if (typeof input !== 'string') throw new SftpStatusError(STATUS.BAD_MESSAGE, 'malformed request');
  return path.posix.resolve('/', base, input.replace(/\\/g, '/') || '.');
}

/**
 * SFTP v3 on one user's file session: every request answered (a failure
 * as its status, never a crash), requests on one handle run in order.
 */
export class SftpSession {
  private readonly handles = new Map<string, { handle: Handle; queue: Promise<void> }>();
  /** Where new uploads are answered at once (upload-dirs.ts). */
  private readonly uploadDirs = new UploadDirs();
  private nextHandle = 0;
  private closed = false;

  private opened: FileSession | null = null;
  /** What relative paths resolve against (REALPATH of '.' answers it): the account's start directory. */
  private start = '/';
  /** Settles once the file session is open: requests sent before wait for it (the client may not wait). */
  private readonly ready: Promise<void>;
  /** Bytes of WRITEs waiting for their handle: above MAX_QUEUED_WRITES the client's data is held. */
  private queuedWrites = 0;
  private readonly flow: { release(): void } | null;
  /** Large WRITEs put together in pooled buffers (write-packets.ts), from this lease while a file is open for writing. */
  private readonly packets: WritePackets | null;
  private uploadBuffers: UploadBuffers | null = null;
  /** Handles open for writing (the lease is closed when none is left). */
  private writeHandles = 0;
  private readonly answers: OutgoingRoom | null;

  constructor(
    private readonly sftp: SFTPWrapper,
    session: Promise<FileSession>,
    private readonly logger: Logger,
    private readonly onActivity: () => void,
  ) {
    this.ready = session.then(async (opened) => {
      this.start = await opened.startDirectory();
      this.opened = opened;
    });
    this.ready.catch(() => undefined); // the channel is ended; waiting requests answer the failure
    this.packets = poolWritePackets(sftp, () =>
      this.writeHandles > 0 ? (this.uploadBuffers ??= leaseUploadBuffers({ grow: false, buffers: POOLED_WRITES })) : null,
    );
    this.flow = channelFlow(sftp, () => this.queuedWrites > MAX_QUEUED_WRITES);
    this.answers = outgoingRoom(sftp, MAX_QUEUED_ANSWERS);
    this.listen();
  }

  private get session(): FileSession {
    if (!this.opened) throw new SftpStatusError(STATUS.FAILURE, 'no file session');
    return this.opened;
  }

  /** Closes every handle (a whole upload in progress leaves nothing). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const entries = [...this.handles.values()];
    this.handles.clear();
    this.writeHandles = 0;
    this.uploadBuffers?.close();
    this.uploadBuffers = null;
    await Promise.all(entries.map((e) => this.release(e)));
  }

  /**
   * Ends a handle once the requests queued on it are done: a READ that
   * reopens its download, or a first WRITE that opens its write, while the
   * channel closes would otherwise leave that stream open.
   */
  private release(entry: { handle: Handle; queue: Promise<void> }): Promise<void> {
    const { handle } = entry;
    if (handle.kind === 'write') handle.abort();
    return entry.queue.then(() => (handle.kind === 'write' ? handle.abort() : handle.close())).catch(() => undefined);
  }

  private listen(): void {
    const s = this.sftp;
    s.on('OPEN', (id, filename, flags) => this.run(id, () => this.open(id, filename, flags)));
    s.on('READ', (id, h, offset, len) =>
      this.onHandle(id, h, async (handle) => {
        if (handle.kind !== 'read') throw new SftpStatusError(STATUS.OP_UNSUPPORTED, 'the handle is not open for reading');
        await this.answers?.wait();
        const sent = await handle.readAt(offset, len, (data) => {
          // what the window has no room for now waits as a view of the chunk, which is given back once sent
          const how = sendData(s, id, data, this.answers !== null);
          if (how !== false) return how === 'held';
          // garbage once sent: the DATA packet ssh2's data() copies the bytes into (core's GC pacer; the SSH packets
          // are reused buffers, or reported by the SDK's writer when not: pooledSshPackets)
          s.data(id, data);
          noteShortLived(data.length);
          return false;
        });
        if (!sent) s.status(id, STATUS.EOF);
      }),
    );
    s.on('WRITE', (id, h, offset, data) => {
      const delivering = this.packets?.delivering;
      const lease = delivering?.memory === data.buffer ? delivering.lease : null;
      // counted until taken; a WRITE on an unknown handle is answered at once
      if (!this.handles.has(h.toString('hex'))) {
        lease?.giveBack(data);
        return this.answer(id, new SftpStatusError(STATUS.FAILURE, 'invalid handle'));
      }
      if (lease) pooledWrite(data, lease);
      this.queuedWrites += data.length;
      this.onHandle(id, h, async (handle) => {
        try {
          if (handle.kind !== 'write') throw new SftpStatusError(STATUS.OP_UNSUPPORTED, 'the handle is not open for writing');
          await handle.writeAt(offset, data);
          s.status(id, STATUS.OK);
        } finally {
          this.writeTaken(data.length);
          // garbage once taken: the decrypted packets it came in, and the payload unless pooled (core's GC pacer)
          noteShortLived((lease ? 1 : 2) * data.length);
        }
      });
    });
    s.on('FSTAT', (id, h) =>
      this.onHandle(id, h, async (handle) => {
        if (handle.kind === 'read') return void s.attrs(id, attrsOf(handle.info));
        if (handle.kind === 'write') {
          const info = await this.session.stat(handle.path).catch(() => null);
          return void s.attrs(id, { mode: info?.mode ?? 0o100644, uid: 0, gid: 0, size: handle.size, atime: 0, mtime: 0 });
        }
        s.attrs(id, attrsOf(await this.session.stat(handle.path)));
      }),
    );
    s.on('FSETSTAT', (id, h, attrs) =>
      this.onHandle(id, h, async (handle) => {
        if (attrs.mtime !== undefined && handle.kind === 'write') handle.mtime = new Date(attrs.mtime * 1000);
        else await this.setStat(handle.path, attrs);
        s.status(id, STATUS.OK);
      }),
    );
    s.on('CLOSE', (id, h) => {
      const entry = this.handles.get(h.toString('hex'));
      if (!entry) return void s.status(id, STATUS.FAILURE, 'invalid handle');
      this.handles.delete(h.toString('hex'));
      if (entry.handle.kind === 'write') this.writeHandleGone();
      this.chain(entry, id, async () => {
        try {
          await entry.handle.close();
        } catch (err) {
          if (entry.handle.kind === 'write') this.uploadDirs.forget(path.posix.dirname(entry.handle.path));
          throw err;
        }
        s.status(id, STATUS.OK);
      });
    });
    s.on('OPENDIR', (id, p) =>
      this.run(id, async () => {
        const handle = new DirHandle(this.session, this.path(p));
        await handle.open();
        s.handle(id, this.register(handle));
      }),
    );
    s.on('READDIR', (id, h) =>
      this.onHandle(id, h, async (handle) => {
        if (handle.kind !== 'dir') throw new SftpStatusError(STATUS.OP_UNSUPPORTED, 'the handle is not a directory');
        const entries = await handle.next();
        if (entries === null) return void s.status(id, STATUS.EOF);
        const owner = this.session.account.username;
        const names: FileEntry[] = entries.map((e) => ({ filename: e.name, longname: longnameOf(e, owner), attrs: attrsOf(e) as FileEntry['attrs'] }));
        s.name(id, names);
      }),
    );
    const stat = (id: number, p: string) => this.run(id, async () => s.attrs(id, attrsOf(await this.session.stat(this.path(p)))));
    s.on('STAT', stat);
    s.on('LSTAT', stat);
    s.on('SETSTAT', (id, p, attrs) =>
      this.run(id, async () => {
        await this.setStat(this.path(p), attrs);
        s.status(id, STATUS.OK);
      }),
    );
    s.on('REMOVE', (id, p) => this.done(id, () => this.session.removeFile(this.path(p))));
    s.on('MKDIR', (id, p) => this.done(id, () => this.session.mkdir(this.path(p), false)));
    s.on('RMDIR', (id, p) => this.done(id, () => this.rmdir(this.path(p))));
    s.on('RENAME', (id, from, to) => this.done(id, () => this.rename(from, to, false)));
    s.on('REALPATH', (id, p) =>
      this.run(id, async () => {
        const resolved = normalise(p, this.start);
        s.name(id, [{ filename: resolved, longname: resolved, attrs: {} as FileEntry['attrs'] }]);
      }),
    );
    const noLinks = (id: number) => this.run(id, () => Promise.reject(new SftpStatusError(STATUS.OP_UNSUPPORTED, 'symbolic links are not supported')));
    s.on('READLINK', noLinks);
    s.on('SYMLINK', noLinks);
    s.on('EXTENDED', (id, name, data) => {
      if (name === 'limits@openssh.com') {
        return this.run(id, async () => {
          if (!sendExtendedReply(s, id, LIMITS)) throw new SftpStatusError(STATUS.FAILURE, 'the answer could not be sent');
        });
      }
      if (!handleExtended(this.extensions, id, name, data))
        this.answer(id, new SftpStatusError(STATUS.OP_UNSUPPORTED, `${name.slice(0, 64)} is not supported`));
    });
  }

  /** What the extended requests (sftp-extensions.ts) reach of this session. */
  private readonly extensions: ExtensionHost = ((self: SftpSession): ExtensionHost => ({
    get sftp() {
      return self.sftp;
    },
    get session() {
      return self.session;
    },
    get startDirectory() {
      return self.start;
    },
    path: (input) => self.path(input),
    handle: (h) => self.handles.get(h.toString('hex'))?.handle,
    replace: (h, handle) => {
      const entry = self.handles.get(h.toString('hex'));
      if (!entry) return;
      if (entry.handle.kind === 'write' && handle.kind !== 'write') self.writeHandleGone();
      entry.handle = handle;
    },
    run: (id, op) => self.run(id, op),
    onHandle: (id, h, op) => self.onHandle(id, h, op),
    rename: (from, to, replace) => self.rename(from, to, replace),
  }))(this);

  /** A WRITE was taken (or refused): the client's data flows again once the queue is small. */
  private writeTaken(bytes: number): void {
    this.queuedWrites -= bytes;
    if (this.queuedWrites <= MAX_QUEUED_WRITES / 2) this.flow?.release();
  }

  private path(input: string): string {
    return this.session.path(normalise(input, this.start));
  }

  private async open(id: number, filename: string, flags: number): Promise<void> {
    const p = this.path(filename);
    let handle: Handle;
    let early = false;
    if (!(flags & OPEN_MODE.WRITE)) {
      const info = await this.session.stat(p);
      if (info.isDir) throw new FsError(FsErrorCode.IsDirectory, `${p}: is a directory`, { path: p });
      const answers = this.answers;
      handle = new ReadHandle(this.session, p, info, answers ? (memory) => answers.sent(memory) : undefined);
    } else if ((flags & (OPEN_MODE.CREAT | OPEN_MODE.TRUNC | OPEN_MODE.EXCL)) === (OPEN_MODE.CREAT | OPEN_MODE.TRUNC)) {
      // a new upload whatever is there (the upload itself refuses a directory): no stat of its own
      handle = new WriteHandle(this.session, p, { kind: 'upload' });
      early = this.uploadDirs.has(path.posix.dirname(p));
    } else {
      const existing = await this.session.stat(p).catch((err: unknown) => {
        if (err instanceof FsError && err.code === FsErrorCode.NotFound) return null;
        // an upload-only account may not see the file: only an upload can go on
        if (err instanceof FsError && err.code === FsErrorCode.Permission && flags & OPEN_MODE.TRUNC) return null;
        throw err;
      });
      if (existing?.isDir) throw new FsError(FsErrorCode.IsDirectory, `${p}: is a directory`, { path: p });
      if (existing && flags & OPEN_MODE.EXCL) throw new FsError(FsErrorCode.Exists, `${p}: already exists`, { path: p });
      if (!existing && !(flags & OPEN_MODE.CREAT)) throw FsError.notFound(p);
      const upload = !existing || (flags & OPEN_MODE.TRUNC) !== 0;
      handle = new WriteHandle(
        this.session,
        p,
        upload ? { kind: 'upload' } : { kind: 'offset', size: existing.size, append: (flags & OPEN_MODE.APPEND) !== 0 },
      );
    }
    if (this.handles.size >= MAX_HANDLES) throw new SftpStatusError(STATUS.FAILURE, 'too many open handles');
    if (handle instanceof WriteHandle) {
      await handle.open(early);
      if (!early) this.uploadDirs.add(path.posix.dirname(p));
    } else await handle.open();
    this.sftp.handle(id, this.register(handle));
  }

  private async setStat(p: string, attrs: Attributes): Promise<void> {
    if (attrs.mtime === undefined) return; // permissions, owners, sizes: accepted and ignored
    try {
      await this.session.setMtime(p, new Date(attrs.mtime * 1000));
    } catch (err) {
      if (!(err instanceof FsError && err.code === FsErrorCode.NotSupported)) throw err;
    }
  }

  private async rmdir(p: string): Promise<void> {
    // a directory removed: the next upload in any directory waits for its open again (upload-dirs.ts)
    this.uploadDirs.clear();
    for await (const page of await this.session.list(p)) {
      if (page.length > 0) throw new FsError(FsErrorCode.NotEmpty, `${p}: directory not empty`, { path: p });
      break;
    }
    await this.session.removeDir(p);
  }

  /** RENAME of SFTP v3 refuses an existing target; posix-rename replaces it. */
  private async rename(fromInput: string, toInput: string, replace: boolean): Promise<void> {
    const from = this.path(fromInput);
    const to = this.path(toInput);
    // what is moved may be a directory (see rmdir)
    this.uploadDirs.clear();
    if (!replace) {
      const target = await this.session.stat(to).catch(() => null);
      if (target) throw new FsError(FsErrorCode.Exists, `${to}: already exists`, { path: to });
    }
    await this.session.rename(from, to);
  }

  private register(handle: Handle): Buffer {
    const id = Buffer.alloc(4);
    id.writeUInt32BE(this.nextHandle++ >>> 0);
    const entry = { handle, queue: Promise.resolve() };
    // opened while the channel closed (close() returned already): ended at once
    if (this.closed) void this.release(entry);
    else {
      this.handles.set(id.toString('hex'), entry);
      if (handle.kind === 'write') this.writeHandles++;
    }
    return id;
  }

  /** A handle open for writing was closed: with none left, the pooled buffers go back (those still being written once stored). */
  private writeHandleGone(): void {
    if (--this.writeHandles > 0) return;
    this.uploadBuffers?.close();
    this.uploadBuffers = null;
  }

  private onHandle(id: number, h: Buffer, op: (handle: Handle) => Promise<void>): void {
    const entry = this.handles.get(h.toString('hex'));
    if (!entry) return this.answer(id, new SftpStatusError(STATUS.FAILURE, 'invalid handle'));
    this.chain(entry, id, () => op(entry.handle));
  }

  /** Runs `op` after the requests on the same handle. */
  private chain(entry: { queue: Promise<void> }, id: number, op: () => Promise<void>): void {
    this.onActivity();
    entry.queue = entry.queue.then(() => op().catch((err: unknown) => this.answer(id, err)));
  }

  private run(id: number, op: () => Promise<void>): void {
    this.onActivity();
    this.ready.then(op).catch((err: unknown) => this.answer(id, err));
  }

  private done(id: number, op: () => Promise<void>): void {
    this.run(id, async () => {
      await op();
      this.sftp.status(id, STATUS.OK);
    });
  }

  private answer(id: number, err: unknown): void {
    const { code, message } = statusOf(err);
    if (code === STATUS.FAILURE && message === 'internal error') this.logger.warn({ err }, 'sftp request failed');
    try {
      this.sftp.status(id, code, message);
    } catch (e) {
      this.logger.debug({ err: e }, 'sftp status not sent');
    }
  }
}
