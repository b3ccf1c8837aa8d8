import net from 'node:net';

/**
 * IPv4/IPv6 addresses and CIDR networks in canonical form, and an index
 * answering "which networks contain this address" in time bounded by the
 * number of distinct prefix lengths (at most 33 for IPv4, 129 for IPv6),
 * whatever the number of networks.
 *
 * Canonical form: `address/prefix` with the host bits cleared; a single
 * address gets /32 (IPv4) or /128 (IPv6); IPv6 is written as RFC 5952
 * (lowercase, zeros compressed); IPv4-mapped IPv6 (`::ffff:a.b.c.d`, prefix
 * 96 or longer) is written as the IPv4 network it denotes.
 */
export interface IpNet {
  family: 4 | 6;
  /** Network address (host bits cleared): 32 or 128 bits. */
  network: bigint;
  prefix: number;
  /** `address/prefix`. */
  canonical: string;
}

const V4_MAPPED = 0xffffn << 32n;

function parseV4(s: string): bigint | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  let out = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out = (out << 8n) | BigInt(n);
  }
  return out;
}

function parseV6(s: string): bigint | null {
  let groups: string[];
  let tail: bigint | null = null;
  let str = s;
  const lastColon = str.lastIndexOf(':');
  if (str.slice(lastColon + 1).includes('.')) {
    tail = parseV4(str.slice(lastColon + 1));
    if (tail === null) return null;
    str = str.slice(0, lastColon + 1) + '0:0';
  }
  const halves = str.split('::');
  if (halves.length > 2) return null;
  const split = (h: string) => (h === '' ? [] : h.split(':'));
  if (halves.length === 2) {
    const head = split(halves[0]!);
    const rest = split(halves[1]!);
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return null;
    groups = [...head, ...Array<string>(missing).fill('0'), ...rest];
  } else {
    groups = split(str);
  }
  if (groups.length !== 8) return null;
  let out = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    out = (out << 16n) | BigInt(parseInt(g, 16));
  }
  if (tail !== null) out = (out & ~0xffffffffn) | tail;
  return out;
}

function formatV4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
}

/** RFC 5952: lowercase hex, no leading zeros, the longest run (2+) of zero groups as `::` (the first one on ties). */
function formatV6(n: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((n >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

const masks = (bits: number): bigint[] =>
  Array.from({ length: bits + 1 }, (_, p) => (p === 0 ? 0n : (((1n << BigInt(p)) - 1n) << BigInt(bits - p)) & ((1n << BigInt(bits)) - 1n)));
const MASKS = { 4: masks(32), 6: masks(128) };
const maskOf = (family: 4 | 6, prefix: number): bigint => MASKS[family][prefix]!;

/** Parses an address or CIDR network; null when malformed (zone ids, bad prefixes, extra slashes...). */
export function parseIpNet(input: string): IpNet | null {
  const s = input.trim();
  if (s.length > 64) return null;
  const slash = s.indexOf('/');
  const addr = slash < 0 ? s : s.slice(0, slash);
  const pfx = slash < 0 ? undefined : s.slice(slash + 1);
  const kind = net.isIP(addr);
  if (!kind || addr.includes('%')) return null;
  let family: 4 | 6 = kind === 4 ? 4 : 6;
  const maxPrefix = family === 4 ? 32 : 128;
  if (pfx !== undefined && !/^\d{1,3}$/.test(pfx)) return null;
  let prefix = pfx === undefined ? maxPrefix : Number(pfx);
  if (prefix > maxPrefix) return null;
  let value = family === 4 ? parseV4(addr) : parseV6(addr);
  if (value === null) return null;
  if (family === 6 && prefix >= 96 && value >> 32n === V4_MAPPED >> 32n) {
    family = 4;
    prefix -= 96;
    value &= 0xffffffffn;
  }
  const network = value & maskOf(family, prefix);
  const text = family === 4 ? formatV4(network) : formatV6(network);
  return { family, network, prefix, canonical: `${text}/${prefix}` };
}

/** The canonical `address/prefix` of an address or network, or null when malformed. */
export function canonicalIpNet(input: string): string | null {
  return parseIpNet(input)?.canonical ?? null;
}

/** Networks (with a payload each) indexed by family and prefix length. */
export class IpNetIndex<T> {
  private readonly byFamily = { 4: new Map<number, Map<bigint, T>>(), 6: new Map<number, Map<bigint, T>>() };
  /** Prefix lengths in use, longest first. */
  private prefixes: { 4: number[]; 6: number[] } = { 4: [], 6: [] };
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(n: IpNet, value: T): void {
    const fam = this.byFamily[n.family];
    let m = fam.get(n.prefix);
    if (!m) {
      m = new Map();
      fam.set(n.prefix, m);
      this.prefixes[n.family] = [...fam.keys()].sort((a, b) => b - a);
    }
    if (!m.has(n.network)) this.count++;
    m.set(n.network, value);
  }

  /** Payloads of every network containing the address, most specific (longest prefix) first. */
  lookup(ip: string | IpNet): T[] {
    const p = typeof ip === 'string' ? parseIpNet(ip) : ip;
    if (!p) return [];
    const out: T[] = [];
    const fam = this.byFamily[p.family];
    for (const prefix of this.prefixes[p.family]) {
      if (prefix > p.prefix) continue;
      const hit = fam.get(prefix)!.get(p.network & maskOf(p.family, prefix));
      if (hit !== undefined) out.push(hit);
    }
    return out;
  }
}
