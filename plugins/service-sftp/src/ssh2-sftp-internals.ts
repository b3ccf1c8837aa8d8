import type { SFTPWrapper } from 'ssh2';

/**
 * What ssh2's server-side SFTP object does not offer publicly: a VERSION
 * naming extensions and EXTENDED_REPLY packets. Both go through the object's
 * internals of ssh2 1.17 (pinned exactly in package.json): its outgoing
 * channel window and the connection's `channelData`. Anything unexpected
 * and the helpers do nothing (no extension advertised, the caller answers
 * OP_UNSUPPORTED).
 */
interface SftpInternals {
  _version: number;
  _buffer: unknown[];
  _protocol: { channelData(id: number, data: Buffer): void };
  outgoing: { id: number; state: string; window: number; packetSize: number };
  /** Set when the channel's window ran out: the connection calls `_chunkcb` once the client widens it. */
  _waitWindow: boolean;
  _chunkcb: (() => void) | undefined;
  push(data: Buffer | null): unknown;
}

/** What channelFlow() uses: the incoming window and ssh2's flag for a channel that stopped opening it. */
interface FlowInternals {
  incoming: { window: number };
  outgoing: { id: number; state: string };
  _waitChanDrain?: boolean;
  _protocol: { channelWindowAdjust(id: number, amount: number): void };
  push(data: Buffer | null): unknown;
}

/** The SSH channel window ssh2 opens (its Channel.js MAX_WINDOW). */
const MAX_WINDOW = 2 * 1024 * 1024;

const SSH_FXP_VERSION = 2;
const SSH_FXP_EXTENDED_REPLY = 201;

function internals(sftp: SFTPWrapper): SftpInternals | null {
  const s = sftp as unknown as Partial<SftpInternals>;
  if (typeof s._version !== 'number' || !Array.isArray(s._buffer) || typeof s._protocol?.channelData !== 'function' || !s.outgoing) return null;
  return s as SftpInternals;
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const str = (s: string) => Buffer.concat([u32(Buffer.byteLength(s)), Buffer.from(s)]);
const packet = (type: number, body: Buffer) => Buffer.concat([u32(body.length + 1), Buffer.from([type]), body]);

/**
 * Makes the VERSION answer to the client's INIT name `extensions` (name,
 * version data), instead of ssh2's bare version 3.
 */
export function advertiseExtensions(sftp: SFTPWrapper, extensions: readonly [string, string][]): void {
  const s = internals(sftp);
  if (!s) return;
  const version = packet(SSH_FXP_VERSION, Buffer.concat([u32(3), ...extensions.map(([n, d]) => Buffer.concat([str(n), str(d)]))]));
  const push = s.push;
  const wrapper = function (this: SftpInternals, data: Buffer | null) {
    if (s._version !== -1) return push.call(this, data);
    const proto = s._protocol;
    const own = Object.prototype.hasOwnProperty.call(proto, 'channelData');
    const channelData = proto.channelData;
    proto.channelData = function (this: unknown, id: number, payload: Buffer) {
      const extra = version.length - payload.length;
      // ssh2's 9-byte VERSION, already counted in the window: count the rest too
      if (id === s.outgoing.id && payload.length === 9 && payload[4] === SSH_FXP_VERSION && s.outgoing.window >= extra) {
        s.outgoing.window -= extra;
        return channelData.call(this, id, version);
      }
      return channelData.call(this, id, payload);
    };
    try {
      return push.call(this, data);
    } finally {
      if (own) proto.channelData = channelData;
      else delete (proto as Partial<SftpInternals['_protocol']>).channelData;
      // (unless something wrapped push meanwhile: this wrapper then only passes the data on)
      if (s._version !== -1 && s.push === wrapper) s.push = push;
    }
  };
  s.push = wrapper;
}

/**
 * ssh2 1.17's SFTP parser throws on some malformed requests (a READ or an
 * FSETSTAT whose handle string runs past the packet reads a length of
 * undefined) instead of ending the channel, and the throw reaches the SSH
 * connection's parser, which ends the whole connection. Makes such a throw
 * end this SFTP channel only, as ssh2 does with the malformed packets it
 * recognises (an 'error' event, then the channel closed). Install before
 * advertiseExtensions (which restores the push it found).
 */
export function containParserErrors(sftp: SFTPWrapper): void {
  const s = internals(sftp);
  if (!s) return;
  const push = s.push;
  s.push = function (this: SftpInternals, data: Buffer | null) {
    try {
      return push.call(this, data);
    } catch (err) {
      sftp.emit('error', err instanceof Error ? err : new Error(String(err)));
      sftp.destroy();
      return true;
    }
  };
}

/**
 * Sends what the channel's window allows of `payload` (in packets of the
 * channel's size) and returns the rest, as ssh2's own tryWritePayload does;
 * when the window runs out, the connection calls `drain` once the client
 * widens it.
 */
function tryWrite(s: SftpInternals, payload: Buffer): Buffer | undefined {
  const out = s.outgoing;
  let p = 0;
  while (p < payload.length && out.window > 0) {
    const n = Math.min(payload.length - p, out.window, out.packetSize);
    out.window -= n;
    s._protocol.channelData(out.id, p === 0 && n === payload.length ? payload : payload.subarray(p, p + n));
    p += n;
  }
  if (out.window === 0) {
    s._waitWindow = true;
    s._chunkcb = drain;
  }
  return p < payload.length ? payload.subarray(p) : undefined;
}

/** Sends the buffered packets (ssh2's and ours, in order) as the window allows (ssh2's drainBuffer, for the packets of both). */
function drain(this: SftpInternals): void {
  this._chunkcb = undefined;
  while (this._buffer.length > 0) {
    const rest = tryWrite(this, this._buffer[0] as Buffer);
    if (rest !== undefined) {
      this._buffer[0] = rest;
      return;
    }
    this._buffer.shift();
  }
}

/**
 * Sends an EXTENDED_REPLY, after the packets ssh2 holds back for the
 * channel's window; false only when the channel is closed or ssh2's
 * internals are not what this module knows (the caller answers otherwise).
 */
export function sendExtendedReply(sftp: SFTPWrapper, id: number, body: Buffer): boolean {
  const s = internals(sftp);
  if (!s || s.outgoing.state !== 'open' || typeof s.outgoing.window !== 'number' || !(s.outgoing.packetSize > 0)) return false;
  const payload = packet(SSH_FXP_EXTENDED_REPLY, Buffer.concat([u32(id), body]));
  // packets already waiting for the window: after them (ssh2's drain, or ours, sends them all)
  if (s._buffer.length > 0) return (s._buffer.push(payload), true);
  const rest = tryWrite(s, payload);
  if (rest !== undefined) s._buffer.push(rest);
  return true;
}

const SSH_FXP_DATA = 103;
/** A DATA answer's header: length, type, request id, data length. */
const DATA_HEADER = 13;

/** What sendData() puts a DATA answer's first packet together in (channelData copies it before it returns). */
let firstPiece = Buffer.allocUnsafe(0);

/**
 * Answers READ `id` with DATA `data` straight as the SSH packets of the
 * channel, where ssh2's `data()` first copies the header and all the data
 * into one new buffer (up to 255 KiB a READ, garbage once sent) that it then
 * cuts into packets. The header and the first bytes go in a reused buffer,
 * the rest as a view of `data`, both through tryWrite (`channelData` copies
 * each packet's bytes at once).
 *
 * What the channel's window does not take now waits in ssh2's buffer of
 * answers, after the packets already there. With `mayHold`, it waits as a
 * view of `data` (the header copied): the answer is 'held', and the caller
 * keeps `data`'s memory as it is until that buffer no longer holds it
 * (outgoingRoom's `sent`). Without, it waits as a copy, as `data()` does,
 * and when packets already wait nothing is sent (false: the caller then
 * calls `data()`). 'sent': nothing of `data` is held. False, and nothing
 * sent, too when ssh2's internals are not what this module knows.
 */
export function sendData(sftp: SFTPWrapper, id: number, data: Buffer, mayHold = false): 'sent' | 'held' | false {
  const s = internals(sftp);
  const out = s?.outgoing;
  if (!s || !out || out.state !== 'open' || typeof out.window !== 'number' || !(out.packetSize > DATA_HEADER)) return false;
  if (s._buffer.length > 0) {
    if (!mayHold) return false;
    // after the answers already waiting, in order: the header (a copy) and a view of the data
    s._buffer.push(dataHeader(id, data.length));
    if (data.length > 0) s._buffer.push(data);
    return data.length > 0 ? 'held' : 'sent';
  }
  const first = Math.min(DATA_HEADER + data.length, out.packetSize);
  if (firstPiece.length < first) firstPiece = Buffer.allocUnsafe(Math.max(first, 32 * 1024));
  firstPiece.writeUInt32BE(DATA_HEADER - 4 + data.length, 0);
  firstPiece[4] = SSH_FXP_DATA;
  firstPiece.writeUInt32BE(id >>> 0, 5);
  firstPiece.writeUInt32BE(data.length, 9);
  data.copy(firstPiece, DATA_HEADER, 0, first - DATA_HEADER);
  const after = data.subarray(first - DATA_HEADER);
  const head = tryWrite(s, firstPiece.subarray(0, first));
  // what waits: firstPiece's bytes as a copy (it is reused), the data's as a view (mayHold) or a copy
  if (head !== undefined) {
    if (!mayHold) s._buffer.push(Buffer.concat([head, after]));
    else {
      s._buffer.push(Buffer.from(head));
      if (after.length > 0) s._buffer.push(after);
      return after.length > 0 ? 'held' : 'sent';
    }
  } else if (after.length > 0) {
    const rest = tryWrite(s, after);
    if (rest !== undefined) {
      s._buffer.push(mayHold ? rest : Buffer.from(rest));
      return mayHold ? 'held' : 'sent';
    }
  }
  return 'sent';
}

/** A DATA answer's header for `length` bytes of READ `id`. */
function dataHeader(id: number, length: number): Buffer {
  const h = Buffer.allocUnsafe(DATA_HEADER);
  h.writeUInt32BE(DATA_HEADER - 4 + length, 0);
  h[4] = SSH_FXP_DATA;
  h.writeUInt32BE(id >>> 0, 5);
  h.writeUInt32BE(length, 9);
  return h;
}

/** A string of an SFTP packet. */
export function sftpString(v: string | Buffer): Buffer {
  const b = typeof v === 'string' ? Buffer.from(v) : v;
  return Buffer.concat([u32(b.length), b]);
}

/** A uint64 of an SFTP packet. */
export function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

/**
 * Flow control of the data a client sends on an SFTP channel. ssh2's server
 * reopens the SSH channel's window as soon as data arrives, so a client
 * with many requests outstanding (OpenSSH's sftp: 64 WRITEs of 255 KiB)
 * has them all queued in the server. While `held()` is true, the channel's
 * push() answers false: ssh2 then stops opening the window (its
 * CHANNEL_DATA handler), and the client stops once the window (2 MiB) is
 * used. `release()` opens it again. Null when ssh2's internals are not as
 * expected (no flow control: ssh2's own behaviour).
 */
export function channelFlow(sftp: SFTPWrapper, held: () => boolean): { release(): void } | null {
  const s = sftp as unknown as Partial<FlowInternals>;
  const incoming = s.incoming;
  const outgoing = s.outgoing;
  const protocol = s._protocol;
  if (typeof s.push !== 'function' || typeof incoming?.window !== 'number' || !outgoing || typeof protocol?.channelWindowAdjust !== 'function') return null;
  const push = s.push;
  s.push = function (this: FlowInternals, data: Buffer | null) {
    const r = push.call(this, data);
    return data !== null && held() ? false : r;
  };
  return {
    release() {
      if (!s._waitChanDrain) return;
      s._waitChanDrain = false;
      const amount = MAX_WINDOW - incoming.window;
      if (amount <= 0 || outgoing.state === 'closed') return;
      incoming.window += amount;
      protocol.channelWindowAdjust(outgoing.id, amount);
    },
  };
}

/** What outgoingRoom() uses: the packets ssh2 holds back for the channel's window, and the callback the connection calls once it widens. */
interface OutgoingInternals {
  _buffer: Buffer[];
  _chunkcb: (() => void) | undefined;
  outgoing: { state: string };
}

/** The answers ssh2 holds for the channel's window, as outgoingRoom() watches them. */
export interface OutgoingRoom {
  /** Resolves once ssh2 holds at most the limit (at once if it does), or the channel closed. */
  wait(): Promise<void>;
  /** Resolves once ssh2 holds no view of `memory` any more (all of it sent), or the channel closed. */
  sent(memory: ArrayBufferLike): Promise<void>;
}

/**
 * Bounds the answers held in ssh2 for a client that reads slower than the
 * server answers: ssh2 keeps every packet the channel's window has no room
 * for (with OpenSSH's sftp, 64 READs of 255 KiB: 16 MiB) in the channel's
 * buffer. `wait()` resolves at once while that buffer holds at most `limit`
 * bytes, else once the client widened the window and ssh2 sent some of it
 * (or the channel closed); `sent(memory)` once nothing it holds is a view
 * of `memory` (answers sendData() left there as views). Null when ssh2's
 * internals are not as expected (answers are then not held: ssh2's own
 * behaviour).
 */
export function outgoingRoom(sftp: SFTPWrapper, limit: number): OutgoingRoom | null {
  const s = sftp as unknown as Partial<OutgoingInternals>;
  if (!Array.isArray(s._buffer) || !s.outgoing || typeof s.outgoing.state !== 'string' || 'get' in (Object.getOwnPropertyDescriptor(s, '_chunkcb') ?? {}))
    return null;
  const o = s as OutgoingInternals;
  let waiters: (() => void)[] = [];
  const wake = () => {
    const w = waiters;
    waiters = [];
    for (const resolve of w) resolve();
  };
  // the connection calls _chunkcb when the client widens the window: wake the waiters after ssh2 (or our drain) sent what fits
  let chunkcb = o._chunkcb;
  Object.defineProperty(o, '_chunkcb', {
    configurable: true,
    enumerable: true,
    get: () => chunkcb,
    set: (cb: (() => void) | undefined) => {
      chunkcb =
        cb === undefined
          ? undefined
          : function (this: unknown) {
              try {
                cb.call(this);
              } finally {
                wake();
              }
            };
    },
  });
  sftp.once('end', wake);
  sftp.once('close', wake);
  const held = () => {
    let n = 0;
    for (const b of o._buffer) n += b.length;
    return n;
  };
  return {
    async wait() {
      while (o.outgoing.state === 'open' && held() > limit) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    async sent(memory: ArrayBufferLike) {
      while (o.outgoing.state === 'open' && o._buffer.some((b) => b.buffer === memory)) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}
