/** The sections of the virtual folders, admins, roles and the event manager: which the admin may open, their titles, their pages. */
import { Suspense, lazy } from 'react';
import { AdminForm, Admins } from './Admins';
import { FolderForm, Folders } from './Folders';
import { RoleForm, Roles } from './Roles';
import type { AdminPage, AdminRoute, NamedSection } from './routes';
import { can, type AdminSession } from './session';
import { t } from './strings';

// the event manager (and its Go-template library): loaded when opened
const EventManager = lazy(() => import('./EventManager'));

/** Roles are managed by admins with "*" and no role only (the server's rule). */
const manageRoles = (s: AdminSession) => s.permissions.includes('*') && !s.role;

/** The sections `s` may open (each needs what the server requires: manage_folders; "*" for admins). */
export function namedPagesOf(s: AdminSession): NamedSection[] {
  const pages: NamedSection[] = [];
  if (can(s, 'manage_folders')) pages.push('folders');
  if (s.permissions.includes('*')) pages.push('admins');
  if (manageRoles(s)) pages.push('roles');
  // event actions and rules are server-wide: "*" and no role
  if (manageRoles(s)) pages.push('event-rules', 'event-actions');
  return pages;
}

const TITLES: Partial<Record<AdminPage, string>> = {
  folders: t.folders,
  admins: t.admins,
  roles: t.roles,
  'event-rules': t.eventRules,
  'event-actions': t.eventActions,
};
export const namedTitle = (p: AdminPage | null): string | null => (p && TITLES[p]) ?? null;

export function NamedSections({
  session,
  page,
  route,
  go,
}: {
  session: AdminSession;
  page: AdminPage | null;
  route: AdminRoute;
  go: (to: AdminRoute) => void;
}) {
  if (page === 'folders') {
    return route.kind === 'folder' ? (
      <FolderForm key={route.name ?? ''} name={route.name} onDone={() => go({ kind: 'folders' })} onSaved={(n) => go({ kind: 'folder', name: n })} />
    ) : (
      <Folders canScan={can(session, 'quota_scans')} onOpen={(n) => go({ kind: 'folder', name: n })} />
    );
  }
  if (page === 'admins') {
    return route.kind === 'admin' ? (
      <AdminForm
        key={route.name ?? ''}
        name={route.name}
        canReadRoles={manageRoles(session)}
        onDone={() => go({ kind: 'admins' })}
        onSaved={(n) => go({ kind: 'admin', name: n })}
      />
    ) : (
      <Admins onOpen={(n) => go({ kind: 'admin', name: n })} />
    );
  }
  if (page === 'roles') {
    return route.kind === 'role' ? (
      <RoleForm key={route.name ?? ''} name={route.name} onDone={() => go({ kind: 'roles' })} onSaved={(n) => go({ kind: 'role', name: n })} />
    ) : (
      <Roles onOpen={(n) => go({ kind: 'role', name: n })} />
    );
  }
  if (page === 'event-actions' || page === 'event-rules') {
    return (
      <Suspense fallback={<p aria-busy="true">{t.loading}</p>}>
        <EventManager page={page} route={route} go={go} />
      </Suspense>
    );
  }
  return null;
}
