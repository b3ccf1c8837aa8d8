/**
 * The web admin's routes: each page is a URL below /web/admin/.
 *
 *   /web/admin/                  the dashboard
 *   /web/admin/users             the users (list)
 *   /web/admin/new-user          a new user's form
 *   /web/admin/users/<name>      a user's form
 *   /web/admin/groups            the groups (list)
 *   /web/admin/new-group         a new group's form
 *   /web/admin/groups/<name>     a group's form
 *   /web/admin/security          the defender's hosts and the IP lists
 *   /web/admin/events            the event search
 *   /web/admin/maintenance       backup and restore
 */
export const ADMIN_BASE = '/web/admin';

/** Pages that are one URL each, with no sub-route (their URL is /web/admin/<page>). */
export const SIMPLE_PAGES = ['security', 'events', 'maintenance'] as const;
export type SimplePage = (typeof SIMPLE_PAGES)[number];

export type AdminRoute =
  | { kind: 'dashboard' }
  | { kind: 'users' }
  | { kind: 'user'; username: string | null }
  | { kind: 'groups' }
  | { kind: 'group'; name: string | null }
  | { kind: SimplePage };

/** The navigation's pages: each route belongs to one. */
export type AdminPage = 'dashboard' | 'users' | 'groups' | SimplePage;
export const pageOfRoute = (r: AdminRoute): AdminPage => (r.kind === 'user' ? 'users' : r.kind === 'group' ? 'groups' : r.kind);

export function parseAdminRoute(pathname: string): AdminRoute {
  let p: string;
  try {
    p = decodeURIComponent(pathname);
  } catch {
    return { kind: 'dashboard' };
  }
  const rest = p.startsWith(`${ADMIN_BASE}/`) ? p.slice(ADMIN_BASE.length) : '/';
  if (rest === '/users') return { kind: 'users' };
  if (rest === '/new-user') return { kind: 'user', username: null };
  const user = /^\/users\/([^/]+)$/.exec(rest);
  if (user) return { kind: 'user', username: user[1]! };
  if (rest === '/groups') return { kind: 'groups' };
  if (rest === '/new-group') return { kind: 'group', name: null };
  const group = /^\/groups\/([^/]+)$/.exec(rest);
  if (group) return { kind: 'group', name: group[1]! };
  const simple = SIMPLE_PAGES.find((k) => rest === `/${k}`);
  if (simple) return { kind: simple };
  return { kind: 'dashboard' };
}

export function adminRoutePath(r: AdminRoute): string {
  switch (r.kind) {
    case 'dashboard':
      return `${ADMIN_BASE}/`;
    case 'users':
      return `${ADMIN_BASE}/users`;
    case 'user':
      return r.username === null ? `${ADMIN_BASE}/new-user` : `${ADMIN_BASE}/users/${encodeURIComponent(r.username)}`;
    case 'groups':
      return `${ADMIN_BASE}/groups`;
    case 'group':
      return r.name === null ? `${ADMIN_BASE}/new-group` : `${ADMIN_BASE}/groups/${encodeURIComponent(r.name)}`;
    case 'security':
    case 'events':
    case 'maintenance':
      return `${ADMIN_BASE}/${r.kind}`;
  }
}
