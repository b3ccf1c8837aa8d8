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
  for (let i = 0; i < 8;) {
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

/** IPv4 masks as unsigned 32-bit numbers. */
const MASKS4 = Array.from({ length: 33 }, (_, p) => (p === 0 ? 0 : (0xffffffff << (32 - p)) >>> 0));

/** The eight 16-bit groups of an IPv6 address already validated by net.isIPv6 (no zone id); one pass, no allocation but the result. */
function v6Groups(ip: string): number[] | null {
  const groups: number[] = [];
  let gap = -1;
  let cur = 0;
  let digits = 0;
  let start = 0;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (c === 58) {
      if (digits) groups.push(cur);
      cur = 0;
      digits = 0;
      if (ip.charCodeAt(i + 1) === 58) {
        gap = groups.length;
        i++;
      }
      start = i + 1;
    } else if (c === 46) {
      // dotted IPv4 tail: two more groups
      const p = ip.slice(start).split('.');
      groups.push((Number(p[0]) << 8) | Number(p[1]), (Number(p[2]) << 8) | Number(p[3]));
      digits = 0;
      break;
    } else {
      cur = cur * 16 + (c <= 57 ? c - 48 : (c | 32) - 87);
      digits++;
    }
  }
  if (digits) groups.push(cur);
  if (gap >= 0) groups.splice(gap, 0, ...Array<number>(8 - groups.length).fill(0));
  return groups.length === 8 ? groups : null;
}

/** Hash key of the first `prefix` bits of an IPv6 address. */
function v6Key(groups: number[], prefix: number): string {
  const full = prefix >> 4;
  const rem = prefix & 15;
  let k = '';
  for (let i = 0; i < full; i++) k += groups[i]! + ':';
  if (rem) k += groups[full]! & ((0xffff << (16 - rem)) & 0xffff);
  return k;
}

/** A single address for lookups: IPv4 as a number, IPv6 as its groups, IPv4-mapped IPv6 as IPv4. */
function addressOf(ip: string): { family: 4; value: number } | { family: 6; groups: number[] } | null {
  if (net.isIPv4(ip)) {
    const p = ip.split('.');
    return { family: 4, value: ((Number(p[0]) << 24) | (Number(p[1]) << 16) | (Number(p[2]) << 8) | Number(p[3])) >>> 0 };
  }
  if (!net.isIPv6(ip) || ip.includes('%')) return null;
  const g = v6Groups(ip);
  if (!g) return null;
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) return { family: 4, value: ((g[6]! << 16) | g[7]!) >>> 0 };
  return { family: 6, groups: g };
}

const groupsOf = (n: bigint): number[] => Array.from({ length: 8 }, (_, i) => Number((n >> BigInt((7 - i) * 16)) & 0xffffn));

/** Networks (with a payload each) indexed by family and prefix length. */
export class IpNetIndex<T> {
  private readonly v4 = new Map<number, Map<number, T>>();
  private readonly v6 = new Map<number, Map<string, T>>();
  /** Prefix lengths in use, longest first. */
  private prefixes4: number[] = [];
  private prefixes6: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(n: IpNet, value: T): void {
    if (n.family === 4) {
      let m = this.v4.get(n.prefix);
      if (!m) {
        this.v4.set(n.prefix, (m = new Map()));
        this.prefixes4 = [...this.v4.keys()].sort((a, b) => b - a);
      }
      const key = Number(n.network);
      if (!m.has(key)) this.count++;
      m.set(key, value);
    } else {
      let m = this.v6.get(n.prefix);
      if (!m) {
        this.v6.set(n.prefix, (m = new Map()));
        this.prefixes6 = [...this.v6.keys()].sort((a, b) => b - a);
      }
      const key = v6Key(groupsOf(n.network), n.prefix);
      if (!m.has(key)) this.count++;
      m.set(key, value);
    }
  }

  /** Payloads of every network containing the address (or network), most specific (longest prefix) first. */
  lookup(ip: string | IpNet): T[] {
    const out: T[] = [];
    let within: number;
    let a: ReturnType<typeof addressOf>;
    if (typeof ip === 'string') {
      a = addressOf(ip.trim());
      if (!a) return out;
      within = a.family === 4 ? 32 : 128;
    } else {
      a = ip.family === 4 ? { family: 4, value: Number(ip.network) } : { family: 6, groups: groupsOf(ip.network) };
      within = ip.prefix;
    }
    if (a.family === 4) {
      for (const prefix of this.prefixes4) {
        if (prefix > within) continue;
        const hit = this.v4.get(prefix)!.get((a.value & MASKS4[prefix]!) >>> 0);
        if (hit !== undefined) out.push(hit);
      }
    } else {
      for (const prefix of this.prefixes6) {
        if (prefix > within) continue;
        const hit = this.v6.get(prefix)!.get(v6Key(a.groups, prefix));
        if (hit !== undefined) out.push(hit);
      }
    }
    return out;
  }
}
