import { lazy, Suspense, useCallback, useEffect, useState } from 'react';
import { onUnauthorized } from './api';
import { ChangePassword } from './ChangePassword';
import { Files } from './Files';
import { Login } from './Login';
import { currentSession, keepAlive, logout, type Session } from './session';
import { BASE, parseRoute, routePath, type Route } from './routes';
import { t } from './strings';

/** The public share page (app/src/pub/), loaded only when a share link is opened. */
const PubShare = lazy(() => import('./pub/PubShare'));

/** A public share's page needs no user session: it is chosen before the session is asked for. */
export function App() {
  const [first] = useState(() => parseRoute(location.pathname));
  if (first.kind === 'pub') {
    return (
      <Suspense
        fallback={
          <main className="center" aria-busy="true">
            <p>{t.loading}</p>
          </main>
        }
      >
        <PubShare shareId={first.shareId} dir={first.dir} />
      </Suspense>
    );
  }
  return <UserApp />;
}

function UserApp() {
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
    document.title = session ? `${t.filesTitle} · ${t.appName}` : t.loginTitle;
  }, [session]);

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
  if (session.password_change_required) {
    return (
      <ChangePassword
        onCancel={() => void signOut()}
        onChanged={() => {
          // the server may end the sessions of a changed password: ask it
          void currentSession().then((s) => {
            setSession(s);
            if (!s) setNotice(t.passwordChanged);
          });
        }}
      />
    );
  }
  return (
    <>
      <a className="skip" href="#content">
        {t.skipToContent}
      </a>
      <header className="bar">
        <span className="brand">{t.appName}</span>
        <span className="who">{t.signedInAs(session.username)}</span>
        <button type="button" onClick={() => void signOut()}>
          {t.logout}
        </button>
      </header>
      {route.kind === 'files' ? <Files dir={route.dir} onNavigate={navigate} /> : <Files dir="/" onNavigate={navigate} />}
    </>
  );
}
