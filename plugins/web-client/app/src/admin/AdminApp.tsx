import { useCallback, useEffect, useState, type MouseEvent } from 'react';
import { onUnauthorized } from '../api';
import { ChangePassword } from '../ChangePassword';
import { Login } from '../Login';
import { keepAlive } from '../session';
import { Dashboard } from './Dashboard';
import { UserForm } from './UserForm';
import { Users } from './Users';
import { adminLogin, adminLogout, can, changeAdminPassword, currentAdminSession, type AdminSession } from './session';
import { ADMIN_BASE, adminRoutePath, parseAdminRoute, type AdminRoute } from './routes';
import { t } from './strings';

/** The pages an admin may open, in the navigation's order (each needs its permission: what is not allowed is not offered). */
function pagesOf(s: AdminSession): ('dashboard' | 'users')[] {
  const pages: ('dashboard' | 'users')[] = [];
  if (can(s, 'view_status') || can(s, 'view_conns')) pages.push('dashboard');
  if (can(s, 'view_users')) pages.push('users');
  return pages;
}

export function AdminApp() {
  const [session, setSession] = useState<AdminSession | null | undefined>(undefined);
  const [notice, setNotice] = useState('');
  const [route, setRoute] = useState<AdminRoute>(() => parseAdminRoute(location.pathname));

  useEffect(() => {
    void currentAdminSession().then(setSession, () => setSession(null));
    onUnauthorized(() => {
      setSession(null);
      setNotice(t.sessionExpired);
    });
    const pop = () => setRoute(parseAdminRoute(location.pathname));
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
    if (location.pathname !== url) history.pushState(null, '', url);
  }, []);

  const pages = session ? pagesOf(session) : [];
  // a page the admin may not open is not shown: the first allowed one instead
  const page: 'dashboard' | 'users' | null =
    route.kind === 'dashboard' ? (pages.includes('dashboard') ? 'dashboard' : (pages[0] ?? null)) : pages.includes('users') ? 'users' : (pages[0] ?? null);
  const title = page === 'users' ? t.users : t.dashboard;

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
      <header className="bar">
        <span className="brand">{t.appName}</span>
        <nav aria-label={t.mainNav} className="admin-nav">
          {pages.map((p) => (
            <a key={p} href={adminRoutePath({ kind: p })} aria-current={page === p ? 'page' : undefined} onClick={link({ kind: p })}>
              {p === 'users' ? t.users : t.dashboard}
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
            key={route.username ?? ''}
            session={session}
            username={route.username}
            onDone={() => go({ kind: 'users' })}
            onSaved={(u) => go({ kind: 'user', username: u })}
          />
        )}
        {page === 'users' && route.kind !== 'user' && <Users session={session} onOpen={(u) => go({ kind: 'user', username: u })} />}
      </main>
    </>
  );
}
