/** An ICAP service URL: `icap://host[:port]/service[?query]` (RFC 3507 4.2, default port 1344). */
export interface IcapEndpoint {
  host: string;
  port: number;
  /** Path and query of the service, e.g. `/avscan?allow204=on`. */
  service: string;
  /** The URL as written in request lines: `icap://host:port/service?query`. */
  url: string;
}

export const DEFAULT_ICAP_PORT = 1344;

/** Parses and checks an ICAP URL; throws an Error whose message says what is wrong. */
export function parseIcapUrl(input: string): IcapEndpoint {
  const text = input.trim();
  if (/^icaps:\/\//i.test(text)) throw new Error('icaps:// (ICAP over TLS) is not supported: use an icap:// URL');
  if (!/^icap:\/\//i.test(text)) throw new Error('must be an icap:// URL, e.g. icap://127.0.0.1:1344/avscan');
  let u: URL;
  try {
    // the WHATWG parser treats unknown schemes opaquely for host and port; parse it as http for those
    u = new URL(`http://${text.slice('icap://'.length)}`);
  } catch {
    throw new Error('is not a valid URL');
  }
  if (u.username || u.password) throw new Error('must not carry credentials');
  if (u.hash) throw new Error('must not have a fragment');
  if (!u.hostname) throw new Error('has no host');
  const port = u.port ? Number(u.port) : DEFAULT_ICAP_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error('has an invalid port');
  if (u.pathname === '/' || u.pathname === '') throw new Error('must name the ICAP service in its path, e.g. icap://host:1344/avscan');
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  const service = `${u.pathname}${u.search}`;
  return { host, port, service, url: `icap://${u.hostname}:${port}${service}` };
}
