/**
 * The web admin's routes: each page is a URL below /web/admin/.
 *
 *   /web/admin/                  the dashboard
 *   /web/admin/users             the users (list)
 *   /web/admin/new-user          a new user's form
 *   /web/admin/new-user?clone=<name>   a new user's form filled from that user
 *   /web/admin/users/<name>      a user's form
 *   /web/admin/groups            the groups (list)
 *   /web/admin/new-group         a new group's form
 *   /web/admin/groups/<name>     a group's form
 *   /web/admin/folders, /web/admin/new-folder, /web/admin/folders/<name>   the virtual folders
 *   /web/admin/admins, /web/admin/new-admin, /web/admin/admins/<name>      the admins
 *   /web/admin/roles, /web/admin/new-role, /web/admin/roles/<name>         the roles
 *   /web/admin/event-actions, /web/admin/new-event-action, /web/admin/event-actions/<name>   the event manager's actions
 *   /web/admin/event-rules, /web/admin/new-event-rule, /web/admin/event-rules/<name>         the event manager's rules
 *   /web/admin/security          the defender's hosts and the IP lists
 *   /web/admin/events            the event search
 *   /web/admin/events?username=<name>   the event search of that user's events
 *   /web/admin/maintenance       backup and restore
 *   /web/admin/profile           the signed-in admin's own profile (details, password, 2FA)
 */
export const ADMIN_BASE = '/web/admin';

/** Pages that are one URL each, with no sub-route (their URL is /web/admin/<page>). */
export const SIMPLE_PAGES = ['security', 'events', 'maintenance', 'profile'] as const;
export type SimplePage = (typeof SIMPLE_PAGES)[number];

export type AdminRoute =
  | { kind: 'dashboard' }
  | { kind: 'users' }
  | { kind: 'user'; username: string | null; cloneOf?: string }
  | { kind: 'groups' }
  | { kind: 'group'; name: string | null }
  | NamedRoute
  | { kind: Exclude<SimplePage, 'events'> }
  | { kind: 'events'; username?: string };

// --- the named-object sections (virtual folders, admins, roles, event actions and rules): a list, a new object's form, an object's form
/** Each section's list path and the kind of its object's form. */
export const NAMED_SECTIONS = {
  folders: 'folder',
  admins: 'admin',
  roles: 'role',
  'event-actions': 'event-action',
  'event-rules': 'event-rule',
} as const;
export type NamedSection = keyof typeof NAMED_SECTIONS;
type NamedItem = (typeof NAMED_SECTIONS)[NamedSection];
export type NamedRoute = { kind: NamedSection } | { kind: NamedItem; name: string | null };
const sectionOfItem = (kind: NamedItem): NamedSection => `${kind}s` as NamedSection;
const isNamedItem = (kind: string): kind is NamedItem => Object.values(NAMED_SECTIONS).includes(kind as NamedItem);

function parseNamedRoute(rest: string): NamedRoute | null {
  for (const [section, item] of Object.entries(NAMED_SECTIONS) as [NamedSection, NamedItem][]) {
    if (rest === `/${section}`) return { kind: section };
    if (rest === `/new-${item}`) return { kind: item, name: null };
    const m = new RegExp(`^/${section}/([^/]+)$`).exec(rest);
    if (m) return { kind: item, name: m[1]! };
  }
  return null;
}
// --- end of the named-object sections

/** The navigation's pages: each route belongs to one. */
export type AdminPage = 'dashboard' | 'users' | 'groups' | NamedSection | SimplePage;
export const pageOfRoute = (r: AdminRoute): AdminPage =>
  r.kind === 'user' ? 'users' : r.kind === 'group' ? 'groups' : isNamedItem(r.kind) ? sectionOfItem(r.kind) : r.kind;

/** The route of a URL's path and query (`?clone=`, `?username=`). */
export function parseAdminRoute(url: string): AdminRoute {
  const [pathname = '', search = ''] = url.split('?', 2);
  const query = new URLSearchParams(search);
  let p: string;
  try {
    p = decodeURIComponent(pathname);
  } catch {
    return { kind: 'dashboard' };
  }
  const rest = p.startsWith(`${ADMIN_BASE}/`) ? p.slice(ADMIN_BASE.length) : '/';
  if (rest === '/users') return { kind: 'users' };
  if (rest === '/new-user') {
    const cloneOf = query.get('clone');
    return cloneOf ? { kind: 'user', username: null, cloneOf } : { kind: 'user', username: null };
  }
  if (rest === '/events') {
    const username = query.get('username');
    return username ? { kind: 'events', username } : { kind: 'events' };
  }
  const user = /^\/users\/([^/]+)$/.exec(rest);
  if (user) return { kind: 'user', username: user[1]! };
  if (rest === '/groups') return { kind: 'groups' };
  if (rest === '/new-group') return { kind: 'group', name: null };
  const group = /^\/groups\/([^/]+)$/.exec(rest);
  if (group) return { kind: 'group', name: group[1]! };
  const simple = SIMPLE_PAGES.find((k) => rest === `/${k}`);
  if (simple) return { kind: simple };
  return parseNamedRoute(rest) ?? { kind: 'dashboard' };
}

export function adminRoutePath(r: AdminRoute): string {
  switch (r.kind) {
    case 'dashboard':
      return `${ADMIN_BASE}/`;
    case 'users':
      return `${ADMIN_BASE}/users`;
    case 'user':
      if (r.username !== null) return `${ADMIN_BASE}/users/${encodeURIComponent(r.username)}`;
      return r.cloneOf ? `${ADMIN_BASE}/new-user?clone=${encodeURIComponent(r.cloneOf)}` : `${ADMIN_BASE}/new-user`;
    case 'groups':
      return `${ADMIN_BASE}/groups`;
    case 'group':
      return r.name === null ? `${ADMIN_BASE}/new-group` : `${ADMIN_BASE}/groups/${encodeURIComponent(r.name)}`;
    case 'folders':
    case 'admins':
    case 'roles':
    case 'event-actions':
    case 'event-rules':
      return `${ADMIN_BASE}/${r.kind}`;
    case 'folder':
    case 'admin':
    case 'role':
    case 'event-action':
    case 'event-rule':
      return r.name === null ? `${ADMIN_BASE}/new-${r.kind}` : `${ADMIN_BASE}/${sectionOfItem(r.kind)}/${encodeURIComponent(r.name)}`;
    case 'events':
      return r.username ? `${ADMIN_BASE}/events?username=${encodeURIComponent(r.username)}` : `${ADMIN_BASE}/events`;
    case 'security':
    case 'maintenance':
    case 'profile':
      return `${ADMIN_BASE}/${r.kind}`;
  }
}
