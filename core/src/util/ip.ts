import net from 'node:net';

/** Parses "1.2.3.4" or "10.0.0.0/8" (IPv4 or IPv6); returns null when malformed. */
export function parseIpOrNet(s: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [addr, pfx, extra] = s.trim().split('/');
  if (extra !== undefined || !addr) return null;
  const v = net.isIP(addr);
  if (!v) return null;
  const max = v === 4 ? 32 : 128;
  const prefix = pfx === undefined ? max : Number(pfx);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (pfx !== undefined && !/^\d+$/.test(pfx))) return null;
  return { address: addr, prefix, family: v === 4 ? 'ipv4' : 'ipv6' };
}

/** Builds a matcher for a list of IPs/CIDR networks; IPv4-mapped IPv6 addresses match IPv4 entries. */
export function ipMatcher(list: string[]): (ip: string) => boolean {
  const bl = new net.BlockList();
  for (const entry of list) {
    const p = parseIpOrNet(entry);
    if (!p) continue;
    bl.addSubnet(p.address, p.prefix, p.family);
  }
  return (ip: string) => {
    const clean = ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
    const fam = net.isIP(clean);
    if (!fam) return false;
    return bl.check(clean, fam === 4 ? 'ipv4' : 'ipv6');
  };
}
