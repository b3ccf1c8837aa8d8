import type net from 'node:net';
import { adoptSocket } from './adopt-socket.js';
import { forgetCopyTarget, noteCopyTarget, PacketSlabs, payloadTrackers, type CopyTarget, type Lent, type PayloadTracker } from './ssh2-packets.js';

/*
 * An SSH connection's socket read into reused buffers instead of a new one
 * per read.
 *
 * A net.Socket reads into a buffer Node allocates for that read (64 KiB at
 * most): a 1 GiB SFTP put is 16,384 of them, garbage as soon as ssh2 has
 * decrypted the packets in them, freed only when the young generation is
 * collected (docs/performance-history.md: what was left of a put's peak
 * RSS). Node's `onread` option has the socket read into a buffer of ours.
 *
 * Every read goes first to one buffer of the process ({@link SSH_SHARED_READ_BYTES})
 * and is copied out of it before the read's callback returns, so the
 * socket of an idle or quiet connection holds nothing of its own. A read
 * that fills half of it, on a connection whose payloads all pass through
 * the tracker (after the key exchange, with a decipher of poolSshPackets),
 * moves the connection's next reads to a buffer of its own
 * ({@link SSH_READ_BYTES}, from a free list of the process): ssh2 decrypts
 * the packets that lie whole in a read in place and hands their payloads
 * on as views of it, so that buffer is read into again only when, after
 * the read's delivery, nothing can hold a view of it:
 * - every payload delivered from it was declared copied by its consumer
 *   (sshPayloadCopied: the SFTP service copies a WRITE's data into a pooled
 *   buffer), and went through the tracker (a key exchange's payloads do
 *   not: the connection copies its reads until it is over);
 * - the socket's readable side did not keep the read (a paused socket);
 * - the decipher holds no view of it (a packet whose tag is in the next read).
 * Otherwise the buffer stays with its holders, and the connection copies
 * its next {@link SSH_READ_COOLDOWN} reads before it takes another. A
 * small read gives the buffer back to the free list.
 */

/** A connection's own read buffer: the largest read it takes in one system call. */
export const SSH_READ_BYTES = 256 * 1024;

/** The buffer of the process every connection reads into while it has none of its own. */
export const SSH_SHARED_READ_BYTES = 64 * 1024;

/** Free read buffers kept for the next connections (4 MiB), dropped after 2 s without a take. */
export const SSH_READ_BUFFERS_KEPT = 16;

/** Reads a connection copies after its buffer stayed with its holders, before it takes another. */
export const SSH_READ_COOLDOWN = 16;

/** A read under this size gives the connection's buffer back (a quiet connection holds none). */
export const SSH_READ_SMALL = 4096;

/** The free list of connections' read buffers. */
export const sshReadBuffers = new PacketSlabs(SSH_READ_BYTES, SSH_READ_BYTES, SSH_READ_BUFFERS_KEPT);

/** Reads of every connection: in a buffer of its own read into again (`inPlace`), copied out (`copied`), buffers left to their holders (`left`). */
export const sshReadCounts = { inPlace: 0, copied: 0, left: 0 };

let shared: Buffer | null = null;

/** The tracker of one connection's reads (see the comment at the top). */
class SshReads implements PayloadTracker, CopyTarget {
  private own: Lent | null = null;
  private decipherState: () => ArrayBufferLike | null | false = () => false;
  private delivering = false;
  private declared = false;
  private tainted = false;
  private cooldown = 0;

  constructor(
    private readonly socket: () => net.Socket,
    private readonly buffers: PacketSlabs,
  ) {}

  get memory(): ArrayBufferLike | undefined {
    return this.own?.slab.buffer;
  }

  attach(decipherState: () => ArrayBufferLike | null | false): void {
    this.decipherState = decipherState;
  }

  deliver(payload: Buffer, onPayload: (payload: Buffer) => unknown): unknown {
    this.delivering = true;
    this.declared = false;
    try {
      return onPayload(payload);
    } finally {
      if (!this.declared) this.tainted = true;
      this.delivering = false;
    }
  }

  copied(memory: ArrayBufferLike): void {
    if (this.delivering && memory === this.own?.slab.buffer) this.declared = true;
  }

  /** The buffer the next read goes to. */
  readonly buffer = (): Uint8Array => this.own?.slab ?? (shared ??= Buffer.allocUnsafeSlow(SSH_SHARED_READ_BYTES));

  /** A read of `n` bytes into `buf`, pushed to the socket's readable side (false: stop reading until it is read). */
  readonly callback = (n: number, buf: Uint8Array): boolean => {
    const socket = this.socket();
    const own = this.own;
    if (own && buf.buffer === own.slab.buffer) {
      this.tainted = false;
      const ok = socket.push(Buffer.from(buf.buffer, buf.byteOffset, n));
      const state = this.decipherState();
      if (this.tainted || socket.readableLength > 0 || state === false || state === own.slab.buffer) {
        this.release(own, false);
        sshReadCounts.left++;
        this.cooldown = SSH_READ_COOLDOWN;
      } else {
        sshReadCounts.inPlace++;
        if (n < SSH_READ_SMALL) this.release(own, true);
      }
      return ok;
    }
    const copy = Buffer.allocUnsafe(n);
    copy.set(n === buf.length ? buf : buf.subarray(0, n));
    sshReadCounts.copied++;
    const ok = socket.push(copy);
    if (this.cooldown > 0) this.cooldown--;
    else if (n >= buf.length / 2 && this.decipherState() !== false && !socket.destroyed) this.take();
    return ok;
  };

  /** Gives the buffer back (nothing holds it) at the socket's close. */
  close(): void {
    if (this.own) this.release(this.own, true);
  }

  private take(): void {
    const b = this.buffers.take(this.buffers.slabBytes);
    const lent = b && this.buffers.lentOf(b);
    if (!lent) return;
    this.own = lent;
    noteCopyTarget(lent.slab.buffer, this);
  }

  private release(own: Lent, free: boolean): void {
    this.own = null;
    forgetCopyTarget(own.slab.buffer);
    if (free) this.buffers.giveBack(own);
    else this.buffers.abandon(own);
  }
}

/**
 * The same connection as `s` (accepted with `pauseOnConnect`, not read
 * from yet) as a socket whose reads go to reused buffers, for an ssh2
 * connection: hand the returned socket to ssh2 (Server#injectSocket) and
 * to pooledSshPackets, which tells the reads when they may stay in one
 * buffer. `s` is left without its handle (see adoptSocket).
 */
export function withSshReads(s: net.Socket, buffers: PacketSlabs = sshReadBuffers): net.Socket {
  let reads: SshReads | null = null;
  const socket = adoptSocket(s, (sock) => {
    reads = new SshReads(sock, buffers);
    return { buffer: reads.buffer, callback: reads.callback };
  });
  const r = reads as SshReads | null;
  if (r) {
    payloadTrackers.set(socket, r);
    socket.once('close', () => r.close());
  }
  return socket;
}
