import { noteShortLived } from './short-lived.js';

/*
 * Large outgoing SSH packets written from reused buffers ("slabs") instead
 * of a fresh buffer each.
 *
 * ssh2 1.17 (pinned exactly) allocates every packet it sends
 * (`Buffer.allocUnsafe` in its cipher's allocPacket), encrypts it in place
 * (the ciphers of its native binding) and writes it to the socket. A 1 GiB
 * SFTP get is 32,768 packets of 32 KiB: 1 GiB of buffers that are garbage
 * once the socket has written them, freed only when the young generation
 * is collected and their backing stores swept. A sampler in the server
 * saw 10-45 MB of them resident during a get (bench/sftp-service.bench.mjs,
 * docs/performance-history.md), on a server that starts at about 120 MB.
 *
 * Here a connection's packets of {@link PACKET_SLAB_MIN} bytes or more are
 * built in a slab of a process-wide free list; the slab goes back to the
 * list once the socket reports the packet written (the write's callback:
 * then neither node nor libuv holds it). Each slab carries one packet at a
 * time. The list keeps at most {@link PACKET_SLABS_KEPT} free slabs and
 * drops them all after {@link PACKET_SLABS_IDLE_MS} without a take, so an
 * idle server holds none. Packets the slabs do not take (smaller, larger,
 * or from a cipher that does not encrypt in place) are written as before,
 * and the large ones are reported to core's GC pacer (noteShortLived).
 *
 * How it reaches ssh2's packets (through loadSsh2(), which loads ssh2 with
 * {@link wrapCreateCipher} in place): every cipher ssh2 makes for a
 * connection whose protocol writes through {@link poolSshPackets}'s writer
 * gets an allocPacket that, for large payloads, has ssh2's own allocPacket
 * draw its `Buffer.allocUnsafe` from a slab (the function swapped in for
 * that synchronous call only: nothing else can run in between), and writes
 * through the writer. Only the classes that encrypt in the packet they
 * allocated and write it once ({@link IN_PLACE_CIPHERS}) are changed.
 *
 * Incoming packets the same way, where their consumer says so. ssh2
 * decrypts a packet that lies whole in one socket read in place, and
 * copies one that spans two reads into a new buffer first (about half of
 * them with 32 KiB packets and 64 KiB reads: 0.5 GiB of garbage in a 1 GiB
 * SFTP put). For such a connection the deciphers of {@link IN_PLACE_DECIPHERS}
 * take that buffer from the connection instead: a buffer whose last payload
 * the consumer declared copied ({@link sshPayloadCopied}: the SFTP service
 * copies a large WRITE into a pooled buffer as it arrives) is taken again,
 * any other is left to its holders and a new one made, as ssh2 does.
 */

/** Outgoing packets from this size on are built in a slab. */
export const PACKET_SLAB_MIN = 8 * 1024;

/** A slab: ssh2's largest packet (35,000 bytes) with the largest MAC (64). */
export const PACKET_SLAB_BYTES = 35 * 1024;

/** Free slabs kept for the next packets (4.4 MiB). */
export const PACKET_SLABS_KEPT = 128;

/** Time without a take after which the free slabs are dropped. */
export const PACKET_SLABS_IDLE_MS = 2000;

/** ssh2 1.17's cipher classes that encrypt in the packet allocPacket made and write it whole, once. */
export const IN_PLACE_CIPHERS: ReadonlySet<string> = new Set(['AESGCMCipherBinding', 'ChaChaPolyCipherBinding', 'GenericCipherBinding']);

/** A slab handed out: its buffer and the writes of it not yet done. */
export interface Lent {
  slab: Buffer;
  writes: number;
}

/** The free list of slabs, shared by every connection of the process. */
export class PacketSlabs {
  private free: Buffer[] = [];
  private readonly lent = new WeakMap<ArrayBufferLike, Lent>();
  private lastTake = 0;
  private lentCount = 0;
  private idle: NodeJS.Timeout | undefined;
  /** Slabs allocated so far. */
  created = 0;
  /** Takes served by a free slab so far. */
  reused = 0;

  constructor(
    readonly minBytes = PACKET_SLAB_MIN,
    readonly slabBytes = PACKET_SLAB_BYTES,
    readonly kept = PACKET_SLABS_KEPT,
    readonly idleMs = PACKET_SLABS_IDLE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Free slabs held now. */
  get held(): number {
    return this.free.length;
  }

  /** Slabs lent and not given back. */
  get outstanding(): number {
    return this.lentCount;
  }

  /** `size` bytes of a slab, or null when `size` is not a slab's (then allocate as usual). */
  take(size: number): Buffer | null {
    if (!(size >= this.minBytes && size <= this.slabBytes)) return null;
    let slab = this.free.pop();
    if (slab) this.reused++;
    else {
      slab = Buffer.allocUnsafeSlow(this.slabBytes);
      this.created++;
    }
    this.lent.set(slab.buffer, { slab, writes: 0 });
    this.lentCount++;
    this.lastTake = this.now();
    return slab.subarray(0, size);
  }

  /** The slab `data` is a view of, while it is lent; else undefined. */
  lentOf(data: Uint8Array): Lent | undefined {
    return this.lent.get(data.buffer);
  }

  /** A lent slab is free again (its writes are done, or it will not be written). */
  giveBack(lent: Lent): void {
    if (this.lent.get(lent.slab.buffer) !== lent) return;
    this.lent.delete(lent.slab.buffer);
    this.lentCount--;
    if (this.free.length < this.kept) this.free.push(lent.slab);
    this.armIdle();
  }

  /** A lent slab that stays with its holders: never taken again (left to the garbage collector). */
  abandon(lent: Lent): void {
    if (this.lent.get(lent.slab.buffer) !== lent) return;
    this.lent.delete(lent.slab.buffer);
    this.lentCount--;
  }

  private armIdle(): void {
    if (this.idle) return;
    const check = () => {
      const quiet = this.now() - this.lastTake;
      if (quiet >= this.idleMs) {
        this.free = [];
        this.idle = undefined;
        return;
      }
      this.idle = setTimeout(check, this.idleMs - quiet);
      this.idle.unref();
    };
    this.idle = setTimeout(check, this.idleMs);
    this.idle.unref();
  }
}

/** The slabs of the process. */
export const packetSlabs = new PacketSlabs();

/** What a connection's socket must offer (net.Socket). */
export interface PacketSocket {
  readonly writable: boolean;
  write(data: Uint8Array, cb: (err?: Error | null) => void): boolean;
}

type Write = (data: Buffer) => void;
const SLABS = Symbol('ferry.packetSlabs');
type SlabWriter = Write & { [SLABS]?: PacketSlabs };

/**
 * The writer of a connection: a packet built in a slab goes to the socket
 * with a callback that gives the slab back; anything else to `fallback`
 * (ssh2's own write), the large ones reported to the GC pacer.
 */
export function slabWriter(slabs: PacketSlabs, socket: PacketSocket, fallback: Write): SlabWriter {
  const write: SlabWriter = (data: Buffer) => {
    const lent = slabs.lentOf(data);
    if (!lent) {
      if (data.length >= slabs.minBytes) noteShortLived(data.length);
      return fallback(data);
    }
    // ssh2 writes only to a socket whose both sides are open (its isWritable); else the packet is dropped
    const readable = (socket as { _readableState?: { ended?: boolean } })._readableState;
    if (!socket.writable || readable?.ended !== false) return slabs.giveBack(lent);
    lent.writes++;
    socket.write(data, () => {
      if (--lent.writes === 0) slabs.giveBack(lent);
    });
  };
  write[SLABS] = slabs;
  return write;
}

interface Ssh2Cipher {
  allocPacket?: (payloadLen: number) => Buffer;
  _onWrite?: Write;
  [SLABS]?: true;
}

/** Has `cipher` (one of {@link IN_PLACE_CIPHERS}) build its large packets in slabs and write through `writer`. */
function patchCipher(cipher: Ssh2Cipher, writer: SlabWriter, slabs: PacketSlabs): boolean {
  const alloc = cipher.allocPacket;
  if (cipher[SLABS] || typeof alloc !== 'function' || !IN_PLACE_CIPHERS.has(cipher.constructor.name)) return false;
  cipher[SLABS] = true;
  cipher._onWrite = writer;
  cipher.allocPacket = function (this: Ssh2Cipher, payloadLen: number): Buffer {
    // header, padding and MAC add 21-84 bytes: payloads that surely fit
    if (payloadLen < slabs.minBytes || payloadLen > slabs.slabBytes - 128) return alloc.call(this, payloadLen);
    const real = Buffer.allocUnsafe;
    Buffer.allocUnsafe = ((size: number) => slabs.take(size) ?? real(size)) as typeof Buffer.allocUnsafe;
    try {
      return alloc.call(this, payloadLen);
    } finally {
      Buffer.allocUnsafe = real;
    }
  };
  return true;
}

/**
 * Replaces `exports[name]` (a factory of ssh2/lib/protocol/crypto.js, before
 * ssh2's kex.js takes it) with one that hands what it makes, and the config
 * it was made from, to `adapt`. False when there is no such function.
 */
function wrapFactory<C, T>(exports: Record<string, unknown>, name: string, adapt: (made: T, config: C) => void): boolean {
  const real = exports[name];
  if (typeof real !== 'function') return false;
  exports[name] = (config: C) => {
    const made = (real as (c: C) => T)(config);
    adapt(made, config);
    return made;
  };
  return true;
}

/** Wraps ssh2's `createCipher`: a cipher made for a protocol that writes through a slab writer builds its large packets in slabs. */
export function wrapCreateCipher(sshCrypto: Record<string, unknown>): boolean {
  return wrapFactory<{ outbound?: { onWrite?: SlabWriter } }, Ssh2Cipher>(sshCrypto, 'createCipher', (cipher, config) => {
    const writer = config?.outbound?.onWrite;
    const slabs = writer?.[SLABS];
    if (writer && slabs) patchCipher(cipher, writer, slabs);
  });
}

/** ssh2 1.17's decipher classes that copy a packet spanning two reads into `_packet` (else decrypt in the read) and hand out views of it. */
export const IN_PLACE_DECIPHERS: ReadonlySet<string> = new Set(['AESGCMDecipherBinding', 'ChaChaPolyDecipherBinding']);

/**
 * The buffer a connection's decipher puts packets spanning two reads
 * together in: taken again once the consumer of its last payload declared
 * it copied, else a new one (the holder keeps the old).
 */
export class IncomingPackets {
  private buffer: Buffer | null = null;
  private free = false;

  /** A buffer of `length` bytes for the next spanning packet. */
  take(length: number): Buffer {
    if (this.buffer && this.free && length <= this.buffer.length) {
      this.free = false;
      incomingPackets.reused++;
      return this.buffer.subarray(0, length);
    }
    incomingPackets.fresh++;
    const b = Buffer.allocUnsafeSlow(length);
    handedOut.set(b.buffer, this);
    return b;
  }

  /** The payload in `memory` was copied by its consumer: the buffer may be taken again (the largest seen kept). */
  copied(memory: ArrayBufferLike): void {
    if (memory === this.buffer?.buffer) this.free = true;
    else if (!this.buffer || memory.byteLength >= this.buffer.buffer.byteLength) {
      if (this.buffer) handedOut.delete(this.buffer.buffer);
      this.buffer = Buffer.from(memory);
      this.free = true;
    }
  }
}

/** Spanning packets of every connection put together in a buffer used before (`reused`) or a new one (`fresh`). */
export const incomingPackets = { reused: 0, fresh: 0 };

/** What {@link sshPayloadCopied} tells: the payload being delivered from `memory` was copied. */
export interface CopyTarget {
  copied(memory: ArrayBufferLike): void;
}

/** The buffers deciphers took from an IncomingPackets, and the read buffers of SshReads, by their memory. */
const handedOut = new WeakMap<ArrayBufferLike, CopyTarget>();

/** Payloads delivered from `memory` tell `target` when their consumer declared them copied. */
export function noteCopyTarget(memory: ArrayBufferLike, target: CopyTarget): void {
  handedOut.set(memory, target);
}

/** The opposite of {@link noteCopyTarget}. */
export function forgetCopyTarget(memory: ArrayBufferLike): void {
  handedOut.delete(memory);
}

/**
 * The reads of a connection's socket into a buffer of its own (ssh2-reads.ts),
 * as poolSshPackets sees them: which payloads came from that buffer, and
 * the state of the connection it asks after each read.
 */
export interface PayloadTracker {
  /** The memory the socket reads into now (undefined when it reads into a buffer copied out at once). */
  readonly memory: ArrayBufferLike | undefined;
  /** Delivers a payload of `memory` to `onPayload`, noting whether its consumer declared it copied. */
  deliver(payload: Buffer, onPayload: (payload: Buffer) => unknown): unknown;
  /** Given by poolSshPackets: the memory of a packet the connection's decipher holds a view of (null: none), or false when its payloads do not all pass through the tracker. */
  attach(decipherState: () => ArrayBufferLike | null | false): void;
}

/** The trackers of sockets whose reads go to a buffer of their own (ssh2-reads.ts registers them), by socket. */
export const payloadTrackers = new WeakMap<object, PayloadTracker>();

/**
 * Declares the payload `data` (a view of what a decipher handed on: a
 * CHANNEL_DATA's bytes) copied elsewhere by its consumer, during the
 * payload's delivery: nothing keeps a view of it, and the buffer it came
 * in may be taken for the next packet. Data of no such buffer is ignored.
 */
export function sshPayloadCopied(data: Uint8Array): void {
  handedOut.get(data.buffer)?.copied(data.buffer);
}

const PENDING = Symbol('ferry.pendingPacket');

interface Ssh2Decipher {
  _len?: number;
  _packet?: Uint8Array | null;
  _onPayload?: unknown;
  [SLABS]?: true;
  /** The packet being put together (a view of a read, or a buffer of its own), or null. */
  [PENDING]?: () => Uint8Array | null;
}

type Payload = ((payload: Buffer) => unknown) & { [SLABS]?: IncomingPackets };

/** Has `decipher` (one of {@link IN_PLACE_DECIPHERS}) take its spanning packets' buffers from `incoming`. */
function patchDecipher(decipher: Ssh2Decipher, incoming: IncomingPackets): boolean {
  if (decipher[SLABS] || !IN_PLACE_DECIPHERS.has(decipher.constructor.name) || !('_packet' in decipher) || typeof decipher._len !== 'number') return false;
  decipher[SLABS] = true;
  let packet = decipher._packet ?? null;
  decipher[PENDING] = () => packet;
  Object.defineProperty(decipher, '_packet', {
    configurable: true,
    enumerable: true,
    // read while unset only where ssh2 is about to allocate a spanning packet (`if (!this._packet)`)
    get(this: Ssh2Decipher) {
      if (packet === null && (this._len ?? 0) > 0) packet = incoming.take(this._len!);
      return packet;
    },
    set(v: Uint8Array | null) {
      packet = v;
    },
  });
  return true;
}

/** Wraps ssh2's `createDecipher`: a decipher made for a protocol whose payloads go through {@link poolSshPackets}'s handler takes its spanning packets' buffers from the connection. */
export function wrapCreateDecipher(sshCrypto: Record<string, unknown>): boolean {
  return wrapFactory<{ inbound?: { onPayload?: Payload } }, Ssh2Decipher>(sshCrypto, 'createDecipher', (decipher, config) => {
    const incoming = config?.inbound?.onPayload?.[SLABS];
    if (incoming) patchDecipher(decipher, incoming);
  });
}

interface Ssh2Connection {
  _protocol?: { _onWrite?: Write; _cipher?: Ssh2Cipher; _onPayload?: Payload; _decipher?: Ssh2Decipher };
}

/**
 * Has ssh2 connection `conn` (a server's client or a client) build its
 * large outgoing packets in {@link packetSlabs} and write them to `socket`
 * with a callback that gives them back. Call it before or after the key
 * exchange (the current cipher is changed too, and those of every rekey).
 * False, and nothing changed, when ssh2 was not loaded through loadSsh2()
 * with the cipher wrapper (`ciphersWrapped`) or the connection is not
 * ssh2 1.17's.
 */
export function poolSshPackets(conn: unknown, socket: PacketSocket, ciphersWrapped: boolean, slabs: PacketSlabs = packetSlabs): boolean {
  const proto = (conn as Ssh2Connection)._protocol;
  const original = proto?._onWrite;
  if (!ciphersWrapped || !proto || typeof original !== 'function' || (original as SlabWriter)[SLABS]) return false;
  const writer = slabWriter(slabs, socket, original);
  proto._onWrite = writer;
  if (proto._cipher) patchCipher(proto._cipher, writer, slabs);
  const onPayload = proto._onPayload;
  if (typeof onPayload === 'function') {
    const incoming = new IncomingPackets();
    const reads = payloadTrackers.get(socket);
    const handler: Payload = reads
      ? (payload: Buffer) => (payload.buffer === reads.memory ? reads.deliver(payload, onPayload) : onPayload(payload))
      : (payload: Buffer) => onPayload(payload);
    handler[SLABS] = incoming;
    proto._onPayload = handler;
    // a decipher made before (the client's side, after its handshake) delivers to the old handler: it is ssh2's own
    if (proto._decipher && patchDecipher(proto._decipher, incoming)) proto._decipher._onPayload = handler;
    // the reads may stay in one buffer while the decipher is one of ours, delivering through the handler
    reads?.attach(() => {
      const d = proto._decipher;
      if (!d?.[SLABS] || d._onPayload !== handler) return false;
      return d[PENDING]?.()?.buffer ?? null;
    });
  }
  return true;
}
