import dns from 'node:dns';
import net from 'node:net';

/**
 * Destinations refused unless the plugin's `allow_link_local` is on:
 * link-local networks (where cloud instance metadata services live) and the
 * metadata addresses and names of the main clouds.
 */
const blocked = new net.BlockList();
blocked.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local: AWS, GCP, Azure, OCI, OpenStack metadata (169.254.169.254), ECS task metadata (169.254.170.2)
blocked.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
blocked.addSubnet('fe80::', 10, 'ipv6'); // IPv6 link-local
blocked.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6
blocked.addAddress('fd00:ec2::23', 'ipv6'); // AWS time sync / DNS over IPv6 (Nitro)

/** Host names of metadata services (refused before any lookup; they also resolve to a blocked address). */
export const METADATA_HOSTNAMES = ['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal'];

/** The IPv4 address an IPv4-mapped or -translated IPv6 address carries, or the address unchanged. */
function unmap(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const lower = address.toLowerCase();
  const m = /^(?:::ffff:(?:0:)?|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (m) return { address: m[1]!, family: 'ipv4' };
  const hex = /^(?:::ffff:(?:0:)?|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, family: 'ipv4' };
  }
  return { address: lower, family: net.isIPv6(lower) ? 'ipv6' : 'ipv4' };
}

/** True when requests to this IP address are refused (without the switch). */
export function isBlockedAddress(address: string): boolean {
  const a = unmap(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  return blocked.check(a.address, a.family);
}

export class RefusedDestination extends Error {}

function refusal(host: string, address?: string): RefusedDestination {
  const what = address && address !== host ? `${host} (${address})` : host;
  return new RefusedDestination(`refused to connect to ${what}: link-local and cloud metadata addresses are blocked (plugin config allow_link_local)`);
}

/** Checks a URL's host before connecting: IP literals and metadata names (names are checked again on their resolved addresses). */
export function checkHost(hostname: string): void {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (net.isIP(host.replace(/%.*$/, ''))) {
    if (isBlockedAddress(host)) throw refusal(host);
    return;
  }
  if (METADATA_HOSTNAMES.includes(host)) throw refusal(host);
}

type LookupAll = (hostname: string, options: dns.LookupAllOptions, cb: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

/**
 * A `lookup` for http.request / tls.connect: resolves the name, drops blocked
 * addresses and hands the socket the addresses it checked, so the connection
 * goes to an address that passed the check (a second, different DNS answer
 * cannot slip in between the check and the connect). When every address is
 * blocked the lookup fails with the refusal.
 */
export function guardedLookup(resolve: LookupAll = dns.lookup as unknown as LookupAll): net.LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, cb: (...a: unknown[]) => void) => {
    const opts = typeof options === 'object' && options ? options : {};
    resolve(hostname, { ...opts, all: true } as dns.LookupAllOptions, (err, addresses) => {
      if (err) return cb(err);
      const ok = addresses.filter((a) => !isBlockedAddress(a.address));
      if (!ok.length) return cb(refusal(hostname, addresses[0]?.address));
      if (opts.all) return cb(null, ok);
      cb(null, ok[0]!.address, ok[0]!.family);
    });
  }) as unknown as net.LookupFunction;
}
