/**
 * The URL of the address a server bound, as a newcomer types it: the
 * binding's address and port (`http://127.0.0.1:8080`), not the host name
 * hapi's `info.uri` puts there (`http://vm:8080`, which may not even resolve
 * to the bound address). IPv6 addresses are bracketed.
 */
export function boundUrl(info: { protocol: string; address?: string | null; port: number | string }): string {
  const a = info.address || '0.0.0.0';
  return `${info.protocol}://${a.includes(':') ? `[${a}]` : a}:${info.port}`;
}
