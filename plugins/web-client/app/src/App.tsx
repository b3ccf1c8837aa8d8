import { useCallback, useEffect, useState } from 'react';
import { onUnauthorized } from './api';
import { ChangePassword } from './ChangePassword';
import { Files } from './Files';
import { Login } from './Login';
import { Profile } from './Profile';
import { currentSession, keepAlive, logout, type Session } from './session';
import { BASE, parseRoute, routePath, type Route } from './routes';
import { t } from './strings';

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState('');
  const [route, setRoute] = useState<Route>(() => parseRoute(location.pathname));

  useEffect(() => {
    void currentSession().then(setSession, () => setSession(null));
    onUnauthorized(() => {
      setSession(null);
      setNotice(t.sessionExpired);
    });
    const pop = () => setRoute(parseRoute(location.pathname));
    window.addEventListener('popstate', pop);
    return () => window.removeEventListener('popstate', pop);
  }, []);

  useEffect(() => {
    if (!session) return;
    return keepAlive(() => {
      setSession(null);
      setNotice(t.sessionExpired);
    });
  }, [session]);

  useEffect(() => {
    document.title = session ? `${route.kind === 'profile' ? t.profile : t.filesTitle} · ${t.appName}` : t.loginTitle;
  }, [session, route.kind]);

  const go = useCallback((to: Route) => {
    setRoute(to);
    const url = routePath(to);
    if (location.pathname !== url) history.pushState(null, '', url);
  }, []);
  const navigate = useCallback((dir: string) => go({ kind: 'files', dir }), [go]);

  const signOut = useCallback(async () => {
    await logout().catch(() => {});
    setSession(null);
    setNotice('');
    history.replaceState(null, '', `${BASE}/`);
    setRoute({ kind: 'files', dir: '/' });
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
      <Login
        notice={notice}
        onSignedIn={(s) => {
          setNotice('');
          setSession(s);
          if (location.pathname !== routePath(route)) history.replaceState(null, '', routePath(route));
        }}
      />
    );
  }
  // the server may end the sessions of a changed password: ask it
  const passwordChanged = () =>
    void currentSession().then((s) => {
      setSession(s);
      if (!s) setNotice(t.passwordChanged);
    });
  if (session.password_change_required) {
    return <ChangePassword onCancel={() => void signOut()} onChanged={passwordChanged} />;
  }
  return (
    <>
      <a className="skip" href="#content">
        {t.skipToContent}
      </a>
      <header className="bar">
        <span className="brand">{t.appName}</span>
        <span className="who">{t.signedInAs(session.username)}</span>
        <a
          href={routePath({ kind: 'profile' })}
          aria-current={route.kind === 'profile' ? 'page' : undefined}
          onClick={(e) => {
            e.preventDefault();
            go({ kind: 'profile' });
          }}
        >
          {t.profile}
        </a>
        <button type="button" onClick={() => void signOut()}>
          {t.logout}
        </button>
      </header>
      {route.kind === 'files' ? (
        <Files dir={route.dir} onNavigate={navigate} />
      ) : route.kind === 'profile' ? (
        <Profile onPasswordChanged={passwordChanged} />
      ) : (
        <Files dir="/" onNavigate={navigate} />
      )}
    </>
  );
}
