import { sshPayloadCopied, type UploadBuffers } from '@ferry/core';
import type { SFTPWrapper } from 'ssh2';

const SSH_FXP_WRITE = 6;
/** Bytes of an SFTP packet's length and type. */
const HEAD = 5;
/**
 * WRITE packets from this length on are put together in a pooled buffer:
 * those whose data goes to the storage as it is (write-handle.ts's
 * DIRECT_SIZE). Smaller ones are gathered, copied, by the write handle.
 */
export const POOLED_WRITE_MIN = 64 * 1024;

/** What the SFTP session learns of a WRITE ssh2 emits. */
export interface WritePackets {
  /** The pooled buffer of the packet ssh2 is parsing now and its lease (its WRITE handler runs during that parse), else null. */
  readonly delivering: { memory: ArrayBufferLike; lease: UploadBuffers } | null;
}

/**
 * Puts large WRITE packets together in buffers of the upload buffer pool
 * (the SDK's leaseUploadBuffers) instead of ssh2's fresh allocation per
 * packet, so that a long upload leaves no 255 KiB of garbage per WRITE.
 *
 * ssh2's SFTP parser copies every packet that spans several channel data
 * messages (any WRITE over 32 KiB: SSH packets carry at most that) into a
 * new buffer; the WRITE's data is a view of it. Here the channel's bytes
 * are framed before ssh2 sees them: a WRITE of at least
 * {@link POOLED_WRITE_MIN} bytes is copied (one copy, as ssh2's) into a
 * buffer of `buffers()` and handed to ssh2 whole, which then parses it
 * where it is; everything else goes to ssh2 as it came. The session lends
 * the WRITE's data to the storage writer or gives the buffer back
 * (UploadBuffers.lend, giveBack) once its bytes are elsewhere. With no
 * lease (`buffers()` null: no file open for writing) or a packet longer
 * than a buffer, nothing changes.
 *
 * ssh2 1.17's server SFTP object (pinned in package.json): its `push`
 * takes the channel's data. Null when it has none.
 */
export function poolWritePackets(sftp: SFTPWrapper, buffers: () => UploadBuffers | null): WritePackets | null {
  const s = sftp as unknown as { push?: (data: Buffer | null) => boolean };
  const push = s.push;
  if (typeof push !== 'function') return null;
  const head = Buffer.alloc(HEAD);
  let headLength = 0;
  /** Bytes of the current packet still to come (after its head) when it goes to ssh2 as it comes. */
  let passing = 0;
  /** The pooled buffer the current packet is put together in, its lease, and its length with the length field. */
  let pooled: { buffer: Buffer; lease: UploadBuffers; length: number; filled: number } | null = null;
  /** After a packet length ssh2 refuses: everything goes to ssh2, which ends the channel. */
  let off = false;
  const state: { delivering: WritePackets['delivering'] } = { delivering: null };

  const startPacket = (self: unknown): boolean => {
    const length = head.readUInt32BE(0);
    headLength = 0;
    if (length === 0) {
      off = true;
      return push.call(self, Buffer.from(head));
    }
    const lease = head[4] === SSH_FXP_WRITE && length >= POOLED_WRITE_MIN ? buffers() : null;
    if (lease) {
      const buffer = lease.take();
      if (buffer.length >= length + 4) {
        head.copy(buffer, 0);
        pooled = { buffer, lease, length: length + 4, filled: HEAD };
        return true;
      }
      lease.giveBack(buffer);
    }
    passing = length + 4 - HEAD;
    return push.call(self, Buffer.from(head));
  };

  s.push = function (this: unknown, data: Buffer | null): boolean {
    if (data === null || off) return push.call(this, data);
    let ok = true;
    let p = 0;
    /** Some of `data` went to ssh2 as it is (a view): else every byte was copied (a WRITE's pooled buffer, the head). */
    let viewed = false;
    while (p < data.length) {
      if (passing > 0) {
        const n = Math.min(passing, data.length - p);
        passing -= n;
        viewed = true;
        ok = push.call(this, p === 0 && n === data.length ? data : data.subarray(p, p + n)) && ok;
        p += n;
      } else if (pooled) {
        const packet = pooled;
        const n = Math.min(packet.length - packet.filled, data.length - p);
        data.copy(packet.buffer, packet.filled, p, p + n);
        packet.filled += n;
        p += n;
        if (packet.filled < packet.length) break;
        pooled = null;
        state.delivering = { memory: packet.buffer.buffer, lease: packet.lease };
        try {
          ok = push.call(this, packet.buffer.subarray(0, packet.length)) && ok;
        } finally {
          state.delivering = null;
        }
      } else {
        const n = Math.min(HEAD - headLength, data.length - p);
        data.copy(head, headLength, p, p + n);
        headLength += n;
        p += n;
        if (headLength < HEAD) break;
        ok = startPacket(this) && ok;
        if (off) return (p < data.length ? push.call(this, data.subarray(p)) : true) && ok;
      }
    }
    // the SSH packet these bytes came in may be reused for the next one (core's SDK: pooledSshPackets)
    if (!viewed) sshPayloadCopied(data);
    return ok;
  };
  return state;
}
