/**
 * The security routes of the admin API the console reads and writes: the
 * defender's hosts (GET/DELETE /api/v2/defender/hosts, view_defender and
 * manage_defender) and the IP lists (/api/v2/iplists/{type}, manage_ip_lists).
 */
import type { Paths } from '../api';
import { api } from '../api';
import { failure } from './api-result';

type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;
export type DefenderHost = Json<Paths['/api/v2/defender/hosts/{id}']['get']['responses'][200]>;
export type IpListEntry = Json<Paths['/api/v2/iplists/{type}/{ipornet}']['get']['responses'][200]>;
export type IpListInput = Json<NonNullable<Paths['/api/v2/iplists/{type}']['post']['requestBody']>>;
export type IpListUpdate = Json<NonNullable<Paths['/api/v2/iplists/{type}/{ipornet}']['put']['requestBody']>>;

/** IPListType: 1 the allow list, 2 the defender's lists, 3 the rate limiters' safe list. */
export const IP_LIST_TYPES = [1, 2, 3] as const;
export type IpListType = (typeof IP_LIST_TYPES)[number];
/** The protocol bits of an entry (none set: every protocol). */
export const IP_LIST_PROTOCOLS = { SSH: 1, FTP: 2, DAV: 4, HTTP: 8 } as const;

export async function listDefenderHosts(): Promise<{ hosts?: DefenderHost[]; status: number; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/defender/hosts');
  return data ? { hosts: data, status: 200 } : { status: response.status, message: failure(response.status, error) };
}

/** Unbans a host and clears its score. Null when done, else the message. */
export async function removeDefenderHost(id: string): Promise<string | null> {
  const { error, response } = await api.DELETE('/api/v2/defender/hosts/{id}', { params: { path: { id } } });
  return response.ok ? null : failure(response.status, error);
}

export async function listIpList(
  type: IpListType,
  query: { filter?: string; from?: string; limit: number; order: 'ASC' | 'DESC' },
): Promise<{ entries?: IpListEntry[]; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/iplists/{type}', { params: { path: { type }, query } });
  return data ? { entries: data } : { message: failure(response.status, error) };
}

export async function addIpListEntry(type: IpListType, entry: IpListInput): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/iplists/{type}', { params: { path: { type } }, body: entry });
  return response.ok ? null : failure(response.status, error);
}

export async function updateIpListEntry(type: IpListType, ipornet: string, entry: IpListUpdate): Promise<string | null> {
  const { error, response } = await api.PUT('/api/v2/iplists/{type}/{ipornet}', {
    params: { path: { type, ipornet } },
    body: entry,
  });
  return response.ok ? null : failure(response.status, error);
}

export async function deleteIpListEntry(type: IpListType, ipornet: string): Promise<string | null> {
  const { error, response } = await api.DELETE('/api/v2/iplists/{type}/{ipornet}', { params: { path: { type, ipornet } } });
  return response.ok ? null : failure(response.status, error);
}
