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
  push(data: Buffer | null): unknown;
}

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
  s.push = function (this: SftpInternals, data: Buffer | null) {
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
      if (s._version !== -1) s.push = push;
    }
  };
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

/** Sends an EXTENDED_REPLY; false when it cannot go at once (the caller answers otherwise). */
export function sendExtendedReply(sftp: SFTPWrapper, id: number, body: Buffer): boolean {
  const s = internals(sftp);
  const payload = packet(SSH_FXP_EXTENDED_REPLY, Buffer.concat([u32(id), body]));
  if (!s || s.outgoing.state !== 'open' || s._buffer.length > 0 || s.outgoing.window < payload.length || payload.length > s.outgoing.packetSize) return false;
  s.outgoing.window -= payload.length;
  s._protocol.channelData(s.outgoing.id, payload);
  return true;
}

/** A uint64 of an SFTP packet. */
export function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}
