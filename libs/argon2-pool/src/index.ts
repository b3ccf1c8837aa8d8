/**
 * argon2 password hashes (PHC strings, as the `argon2` package writes them)
 * computed by a native addon that keeps each hash's working memory for the
 * next one (native/addon.c). Without the addon (not built on this machine)
 * the `argon2` package computes them, and `native` is false.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

interface Addon {
  hashRaw(password: Buffer, salt: Buffer, hashLength: number, t: number, m: number, p: number, type: number, version: number): Promise<Buffer>;
  setLimit(blocks: number): void;
  trim(): number;
  stats(): { pooled: number; pooledBytes: number; limit: number; reused: number; allocated: number };
}

const TYPES = { argon2d: 0, argon2i: 1, argon2id: 2 } as const;
type TypeName = keyof typeof TYPES;
const NAMES: TypeName[] = ['argon2d', 'argon2i', 'argon2id'];

function loadAddon(): Addon | null {
  if (process.env.FERRY_ARGON2_POOL === 'off') return null;
  const require = createRequire(import.meta.url);
  // dist/src/index.js and src/index.ts both sit two or one folders below the package
  for (const rel of ['../../build/Release/argon2_pool.node', '../build/Release/argon2_pool.node']) {
    const file = new URL(rel, import.meta.url);
    if (existsSync(file)) return require(file.pathname) as Addon;
  }
  return null;
}

const addon = loadAddon();

/** The `argon2` package, loaded only when needed (no addon, or a digest with other parameters). */
let stockPackage: Promise<typeof import('argon2')> | undefined;
const stock = () => (stockPackage ??= import('argon2'));

/** True when hashes run in the native addon (memory kept between hashes); false: the `argon2` package. */
export const native = addon !== null;

export interface HashOptions {
  /** 0 argon2d, 1 argon2i, 2 argon2id (default). */
  type?: 0 | 1 | 2;
  /** KiB of working memory. */
  memoryCost: number;
  timeCost: number;
  parallelism: number;
  /** Bytes of the hash (32). */
  hashLength?: number;
}

let running = 0;
let idleMs = 1000;
let idleTimer: NodeJS.Timeout | undefined;

/**
 * How many working-memory blocks the addon keeps (at most `blocks`, 0-64),
 * and how long after the last hash ends they are freed (`idleMs`). While
 * hashes follow each other closer than that, each reuses a block instead of
 * mapping and faulting in a new one. Defaults: no block kept.
 */
export function configurePool(opts: { blocks: number; idleMs?: number }): void {
  if (!Number.isInteger(opts.blocks) || opts.blocks < 0 || opts.blocks > 64) throw new RangeError('blocks: an integer of 0-64');
  if (opts.idleMs !== undefined) {
    if (!Number.isFinite(opts.idleMs) || opts.idleMs < 0) throw new RangeError('idleMs: a duration in ms, 0 or more');
    idleMs = opts.idleMs;
  }
  addon?.setLimit(opts.blocks);
}

/** What the pool holds now (zeros without the addon). */
export function poolStats(): { native: boolean; pooled: number; pooledBytes: number; reused: number; allocated: number } {
  const s = addon?.stats() ?? { pooled: 0, pooledBytes: 0, reused: 0, allocated: 0 };
  return { native, pooled: s.pooled, pooledBytes: s.pooledBytes, reused: s.reused, allocated: s.allocated };
}

/** Frees the pooled blocks now; answers the bytes freed. */
export function trimPool(): number {
  return addon?.trim() ?? 0;
}

async function pooled<T>(fn: () => Promise<T>): Promise<T> {
  running++;
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  try {
    return await fn();
  } finally {
    if (--running === 0) {
      idleTimer = setTimeout(trimPool, idleMs);
      idleTimer.unref();
    }
  }
}

const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');

/** A new hash of `password` with a random 16-byte salt, as `$argon2id$v=19$m=..,p=..,t=..$salt$hash`. */
export async function hash(password: string | Buffer, opts: HashOptions): Promise<string> {
  const type = opts.type ?? 2;
  const hashLength = opts.hashLength ?? 32;
  if (!addon) {
    return (await stock()).hash(password, { type, memoryCost: opts.memoryCost, timeCost: opts.timeCost, parallelism: opts.parallelism, hashLength });
  }
  const salt = randomBytes(16);
  const out = await pooled(() => addon.hashRaw(Buffer.from(password), salt, hashLength, opts.timeCost, opts.memoryCost, opts.parallelism, type, 0x13));
  return `$${NAMES[type]}$v=19$m=${opts.memoryCost},p=${opts.parallelism},t=${opts.timeCost}$${b64(salt)}$${b64(out)}`;
}

interface Parsed {
  type: number;
  version: number;
  m: number;
  t: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

const PHC = /^\$(argon2id|argon2i|argon2d)(?:\$v=(16|19))?\$([a-z]=\d{1,10}(?:,[a-z]=\d{1,10}){2})\$([A-Za-z0-9+/]{11,})\$([A-Za-z0-9+/]{6,1366})$/;

/** The parts of a PHC string with exactly m, t and p (any order); null for anything else. */
function parse(digest: string): Parsed | null {
  const match = PHC.exec(digest);
  if (!match) return null;
  const params: Record<string, number> = {};
  for (const kv of match[3]!.split(',')) {
    const [k, v] = kv.split('=') as [string, string];
    if (k in params) return null;
    params[k] = Number(v);
  }
  const { m, t, p } = params;
  if (m === undefined || t === undefined || p === undefined || Object.keys(params).length !== 3) return null;
  if (t < 1 || p < 1 || p > 0xffffff || m < 8 * p || m > 0xffffffff || t > 0xffffffff) return null;
  const hashBytes = Buffer.from(match[5]!, 'base64');
  if (hashBytes.length < 4 || hashBytes.length > 1024) return null;
  return {
    type: TYPES[match[1] as TypeName],
    version: match[2] === '16' ? 0x10 : match[2] === '19' ? 0x13 : 0x10,
    m,
    t,
    p,
    salt: Buffer.from(match[4]!, 'base64'),
    hash: hashBytes,
  };
}

/**
 * True when `password` hashes to `digest`. A digest this module cannot read
 * in full (other parameters, such as `data=`) is checked by the `argon2`
 * package; a malformed one is false.
 */
export async function verify(digest: string, password: string | Buffer): Promise<boolean> {
  const parsed = addon ? parse(digest) : null;
  if (!addon || !parsed) {
    try {
      return await (await stock()).verify(digest, password);
    } catch {
      return false;
    }
  }
  const actual = await pooled(() =>
    addon.hashRaw(Buffer.from(password), parsed.salt, parsed.hash.length, parsed.t, parsed.m, parsed.p, parsed.type, parsed.version),
  );
  return timingSafeEqual(actual, parsed.hash);
}
