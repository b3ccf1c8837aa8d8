import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import type { PacketSocket } from './ssh2-packets.js';
import { poolSshPackets, wrapCreateCipher, wrapCreateDecipher } from './ssh2-packets.js';

/*
 * ssh2 (the SSH server of service-sftp, the client under fs-sftp's
 * ssh2-sftp-client, core's key parser), loaded so that the random padding of
 * every SSH packet it sends comes from a pool of random bytes rather than
 * from one randomFillSync call each.
 *
 * ssh2 1.17 (pinned exactly) pads each outgoing packet with 4-19 random
 * bytes, one `crypto.randomFillSync` per packet. That call costs about
 * 4 us whatever the length (a job object and OpenSSL's fork check, getpid,
 * each time): a 1 GiB SFTP get sends 32,768 data packets, a small file put
 * three answers, and a CPU profile of `put -r` of 10,000 small files put
 * 5% of the server's busy time in it. The pool draws its bytes from the
 * same generator 16 KiB at a time and hands each out once, so the padding
 * stays unpredictable bytes of the system's CSPRNG.
 *
 * ssh2 takes `randomFillSync` from the crypto module when its modules are
 * first evaluated (`const { randomFillSync } = require('crypto')`), so the
 * pooled function is put in the crypto module's exports only for that
 * synchronous require and the real one restored right after: nothing else
 * in the process can run in between, and nothing else sees it. There is one
 * ssh2 in a process: whoever loads it first decides, so every user of ssh2
 * loads it through loadSsh2() before anything else can (a plugin whose
 * library requires 'ssh2' itself calls loadSsh2() in a module it imports
 * before that library). When ssh2 was already loaded by someone else (a
 * test process that imported a client first), it is used as it is, with
 * its own calls (`pooled` is then false).
 */

const require = createRequire(import.meta.url);

/** Random bytes of the CSPRNG, drawn `size` bytes at a time and handed out once each. */
export class RandomPool {
  private readonly pool: Buffer;
  private at: number;
  /** Refills of the pool so far. */
  refills = 0;
  /** Requests served from the pool so far. */
  served = 0;

  constructor(
    size: number,
    private readonly fillFromCsprng: (buf: Buffer) => unknown,
  ) {
    this.pool = Buffer.allocUnsafe(size);
    this.at = size;
  }

  /** The largest request served from the pool; larger ones go to the CSPRNG directly. */
  get largest(): number {
    return this.pool.length >> 4;
  }

  /** Writes `size` random bytes into `target` from `offset` (size <= largest). */
  copyInto(target: Uint8Array, offset: number, size: number): void {
    if (this.at + size > this.pool.length) {
      this.fillFromCsprng(this.pool);
      this.at = 0;
      this.refills++;
    }
    this.pool.copy(target, offset, this.at, this.at + size);
    // a byte handed out is never handed out again
    this.at += size;
    this.served++;
  }
}

/** 16 KiB of random bytes: about 1,400 packets' padding per refill. */
const POOL_BYTES = 16 * 1024;

type RandomFill = typeof crypto.randomFillSync;

/**
 * randomFillSync with small requests on a Buffer or Uint8Array served by
 * `pool`; every other call (other types, large sizes, arguments the real
 * function would refuse) goes to `real`, which answers or throws as usual.
 */
export function pooledRandomFill(pool: RandomPool, real: RandomFill): RandomFill {
  const fill = (buf: NodeJS.ArrayBufferView, offset?: number, size?: number): NodeJS.ArrayBufferView => {
    if (buf instanceof Uint8Array) {
      const start = offset ?? 0;
      const n = size ?? buf.length - start;
      if (Number.isInteger(start) && Number.isInteger(n) && start >= 0 && n >= 0 && start + n <= buf.length && n <= pool.largest) {
        pool.copyInto(buf, start, n);
        return buf;
      }
    }
    return real(buf, offset, size);
  };
  return fill as RandomFill;
}

/** The pool ssh2's packet padding is drawn from (when `pooledPadding`). */
export const paddingPool = new RandomPool(POOL_BYTES, (b) => crypto.randomFillSync(b));

let loaded: { module: typeof import('ssh2'); pooled: boolean } | undefined;
/** ssh2's createCipher wrapped when loadSsh2() loaded it (ssh2-packets.ts). */
let ciphersWrapped = false;

/**
 * ssh2, loaded on the first call with its packets' padding drawn from
 * paddingPool; `pooled` is false when something had loaded it before
 * (then it pads with its own calls).
 */
export function loadSsh2(): { module: typeof import('ssh2'); pooled: boolean } {
  if (loaded) return loaded;
  const probe = require.resolve('ssh2/lib/protocol/crypto.js');
  if (require.cache[probe]) return (loaded = { module: require('ssh2') as typeof import('ssh2'), pooled: false });
  // the crypto module's exports object itself (what ssh2's require('crypto') returns)
  const exports = require('node:crypto') as { randomFillSync: RandomFill };
  const real = exports.randomFillSync;
  exports.randomFillSync = pooledRandomFill(paddingPool, real);
  try {
    // ssh2's kex.js takes createCipher and createDecipher from these exports when it loads: wrapped first (ssh2-packets.ts)
    const sshCrypto = require(probe) as Record<string, unknown>;
    ciphersWrapped = wrapCreateCipher(sshCrypto) && wrapCreateDecipher(sshCrypto);
    return (loaded = { module: require('ssh2') as typeof import('ssh2'), pooled: true });
  } finally {
    exports.randomFillSync = real;
  }
}

/**
 * Has an ssh2 connection (a server's client, or a client once connecting)
 * build its large outgoing packets in reused buffers written to `socket`
 * (ssh2-packets.ts). False, and nothing changed, when ssh2 was loaded by
 * someone else before loadSsh2().
 */
export function pooledSshPackets(conn: unknown, socket: PacketSocket): boolean {
  return poolSshPackets(conn, socket, ciphersWrapped);
}
