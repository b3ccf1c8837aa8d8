import type { CertificateEvent, FsEvent, IdpLoginEvent, ProviderEvent } from '../events/event-types.js';
import { matchAnyPatterns, matchPatterns } from './patterns.js';
import type { EventConditions } from './types.js';

/** Trigger 1: a filesystem event against the rule's conditions. */
export function fsEventMatches(c: EventConditions, e: FsEvent): boolean {
  if (!c.fs_events.includes(e.action)) return false;
  const o = c.options;
  if (!matchPatterns(e.username, o.names)) return false;
  if (o.group_names.length && !matchAnyPatterns(e.groups ?? [], o.group_names)) return false;
  if (o.role_names.length && !matchPatterns(e.role ?? '', o.role_names)) return false;
  if (!matchPatterns(e.virtual_path, o.fs_paths)) return false;
  if (o.protocols.length && !o.protocols.includes(e.protocol)) return false;
  if (o.event_statuses.length && !o.event_statuses.includes(e.status)) return false;
  if (o.min_size > 0 && e.file_size < o.min_size) return false;
  if (o.max_size > 0 && e.file_size > o.max_size) return false;
  return true;
}

/** Trigger 2: a provider event (add/update/delete of a stored object). */
export function providerEventMatches(c: EventConditions, e: ProviderEvent): boolean {
  if (!c.provider_events.includes(e.action)) return false;
  const o = c.options;
  if (o.provider_objects.length && !o.provider_objects.includes(e.object_type)) return false;
  if (!matchPatterns(e.object_name, o.names)) return false;
  if (o.role_names.length && !matchPatterns(e.role ?? '', o.role_names)) return false;
  return true;
}

/** Trigger 5: certificate events, optionally restricted by names patterns on the certificate names. */
export function certificateEventMatches(c: EventConditions, e: CertificateEvent): boolean {
  const names = c.options.names;
  if (!names.length) return true;
  return e.names.some((n) => matchPatterns(n, names));
}

/** Trigger 7: idp_login_event 0 any, 1 users, 2 admins; names and role_names apply to the account. */
export function idpLoginMatches(c: EventConditions, e: IdpLoginEvent): boolean {
  if (c.idp_login_event === 1 && e.kind !== 'user') return false;
  if (c.idp_login_event === 2 && e.kind !== 'admin') return false;
  if (!matchPatterns(e.username, c.options.names)) return false;
  if (c.options.role_names.length && !matchPatterns(e.role ?? '', c.options.role_names)) return false;
  return true;
}

/**
 * Users an action of a scheduled or on-demand rule applies to: names,
 * group_names and role_names of the rule's options (empty: every user).
 */
export function userMatchesConditions(
  o: Pick<EventConditions['options'], 'names' | 'group_names' | 'role_names'>,
  u: { username: string; groups?: string[]; role?: string },
): boolean {
  if (!matchPatterns(u.username, o.names)) return false;
  if (o.group_names?.length && !matchAnyPatterns(u.groups ?? [], o.group_names)) return false;
  if (o.role_names?.length && !matchPatterns(u.role ?? '', o.role_names)) return false;
  return true;
}
