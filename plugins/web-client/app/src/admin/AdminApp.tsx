import { Suspense, lazy, useCallback, useEffect, useState, type MouseEvent } from 'react';
import { onUnauthorized } from '../api';
import { ChangePassword } from '../ChangePassword';
import { Login } from '../Login';
import { keepAlive } from '../session';
import { Dashboard } from './Dashboard';
import { GroupForm } from './GroupForm';
import { Groups } from './Groups';
import { UserForm } from './UserForm';
import { Users } from './Users';
import { NamedSections, namedPagesOf, namedTitle } from './NamedSections';
import { adminLogin, adminLogout, can, changeAdminPassword, currentAdminSession, type AdminSession } from './session';
import { ADMIN_BASE, adminRoutePath, pageOfRoute, parseAdminRoute, type AdminPage, type AdminRoute } from './routes';
import { t } from './strings';

// security, event search, maintenance, profile: loaded when opened (not in the first load)
const Security = lazy(() => import('./Security'));
const Events = lazy(() => import('./Events'));
const Maintenance = lazy(() => import('./Maintenance'));
const Profile = lazy(() => import('./Profile'));

/** The pages an admin may open, in the navigation's order (each needs its permission: what is not allowed is not offered). */
function pagesOf(s: AdminSession): AdminPage[] {
  const pages: AdminPage[] = [];
  if (can(s, 'view_status') || can(s, 'view_conns')) pages.push('dashboard');
  if (can(s, 'view_users')) pages.push('users');
  if (can(s, 'manage_groups')) pages.push('groups');
  // the defender is server-wide (not for admins with a role); a backup spans everything ("*" and no role)
  if ((can(s, 'view_defender') && !s.role) || can(s, 'manage_ip_lists')) pages.push('security');
  if (can(s, 'view_events')) pages.push('events');
  if (s.permissions.includes('*') && !s.role) pages.push('maintenance');
  pages.push(...namedPagesOf(s));
  pages.push('profile'); // every admin's own
  return pages;
}
const TITLES: Partial<Record<AdminPage, string>> = {
  dashboard: t.dashboard,
  users: t.users,
  groups: t.groups,
  security: t.security,
  events: t.events,
  maintenance: t.maintenance,
  profile: t.profile,
};
const pageTitle = (p: AdminPage | null) => TITLES[p ?? 'dashboard'] ?? namedTitle(p) ?? t.dashboard;

export function AdminApp() {
  const [session, setSession] = useState<AdminSession | null | undefined>(undefined);
  const [notice, setNotice] = useState('');
  const [route, setRoute] = useState<AdminRoute>(() => parseAdminRoute(location.pathname + location.search));

  useEffect(() => {
    void currentAdminSession().then(setSession, () => setSession(null));
    onUnauthorized(() => {
      setSession(null);
      setNotice(t.sessionExpired);
    });
    const pop = () => setRoute(parseAdminRoute(location.pathname + location.search));
    window.addEventListener('popstate', pop);
    return () => window.removeEventListener('popstate', pop);
  }, []);

  useEffect(() => {
    if (!session) return;
    return keepAlive(
      () => {
        setSession(null);
        setNotice(t.sessionExpired);
      },
      60_000,
      currentAdminSession,
    );
  }, [session]);

  const go = useCallback((to: AdminRoute) => {
    setRoute(to);
    const url = adminRoutePath(to);
    if (location.pathname + location.search !== url) history.pushState(null, '', url);
  }, []);

  const pages = session ? pagesOf(session) : [];
  // a page the admin may not open is not shown: the first allowed one instead
  const wanted = pageOfRoute(route);
  const page: AdminPage | null = pages.includes(wanted) ? wanted : (pages[0] ?? null);
  const title = pageTitle(page);
  // the event search's user filter, from its URL
  const eventsOf = route.kind === 'events' ? (route.username ?? '') : '';

  useEffect(() => {
    document.title = session ? `${title} · ${t.appName}` : t.loginTitle;
  }, [session, title]);

  const signOut = useCallback(async () => {
    await adminLogout().catch(() => {});
    setSession(null);
    setNotice('');
    history.replaceState(null, '', `${ADMIN_BASE}/`);
    setRoute({ kind: 'dashboard' });
  }, []);

  if (session === undefined) {
    return (
      <main className="center" aria-busy="true">
        <p>{t.loading}</p>
      </main>
    );
  }
  if (!session) {
    return (
      <Login<AdminSession>
        notice={notice}
        title={t.loginTitle}
        signIn={adminLogin}
        kind="admin"
        onSignedIn={(s) => {
          setNotice('');
          setSession(s);
        }}
      />
    );
  }
  if (session.password_change_required) {
    return <ChangePassword change={changeAdminPassword} onCancel={() => void signOut()} onChanged={() => void currentAdminSession().then(setSession)} />;
  }
  const link = (to: AdminRoute) => (e: MouseEvent) => {
    e.preventDefault();
    go(to);
  };
  return (
    <>
      <a className="skip" href="#content">
        {t.skipToContent}
      </a>
      <header className="bar admin-bar">
        <span className="brand">{t.appName}</span>
        <nav aria-label={t.mainNav} className="admin-nav">
          {pages.map((p) => (
            <a key={p} href={adminRoutePath({ kind: p })} aria-current={page === p ? 'page' : undefined} onClick={link({ kind: p })}>
              {pageTitle(p)}
            </a>
          ))}
        </nav>
        <span className="who">{t.signedInAs(session.username, session.role)}</span>
        <button type="button" onClick={() => void signOut()}>
          {t.logout}
        </button>
      </header>
      <main id="content" className="admin-page">
        {page === null && <p>{t.nothingAllowed}</p>}
        {page === 'dashboard' && <Dashboard session={session} />}
        {page === 'users' && route.kind === 'user' && (
          <UserForm
            key={route.username ?? `new:${route.cloneOf ?? ''}`}
            session={session}
            username={route.username}
            cloneOf={route.cloneOf ?? null}
            go={go}
            onDone={() => go({ kind: 'users' })}
            onSaved={(u) => go({ kind: 'user', username: u })}
          />
        )}
        {page === 'users' && route.kind !== 'user' && (
          <Users session={session} onOpen={(u) => go({ kind: 'user', username: u })} onClone={(u) => go({ kind: 'user', username: null, cloneOf: u })} />
        )}
        {page === 'groups' && route.kind === 'group' && (
          <GroupForm
            key={route.name ?? ''}
            session={session}
            name={route.name}
            onDone={() => go({ kind: 'groups' })}
            onSaved={(n) => go({ kind: 'group', name: n })}
          />
        )}
        {page === 'groups' && route.kind !== 'group' && <Groups onOpen={(n) => go({ kind: 'group', name: n })} />}
        <NamedSections session={session} page={page} route={route} go={go} />
        <Suspense fallback={<p aria-busy="true">{t.loading}</p>}>
          {page === 'security' && <Security session={session} />}
          {page === 'events' && <Events key={eventsOf} username={eventsOf} />}
          {page === 'maintenance' && <Maintenance />}
          {page === 'profile' && <Profile />}
        </Suspense>
      </main>
    </>
  );
}
