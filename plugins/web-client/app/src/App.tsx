import { lazy, Suspense, useCallback, useEffect, useState } from 'react';
import { api, onUnauthorized } from './api';
import { sessionCheck } from './early';
import { ChangePassword } from './ChangePassword';
import { Files } from './Files';
import { Login } from './Login';
import { Nav, type NavItem } from './Nav';
import { Profile } from './Profile';
import type { ShareChoice, SharePolicy } from './shareForm';
import { currentSession, keepAlive, logout, type Session } from './session';
import { BASE, namesNothing, parseRoute, routePath, type Route } from './routes';
import { t } from './strings';

/** The Shares screen, loaded when first shown (it brings the QR code encoder). */
const Shares = lazy(() => import('./Shares'));

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
  /** The address names no directory: the account's start directory is opened once the session is known. */
  const [toStart, setToStart] = useState(() => namesNothing(location.pathname));
  /** What the account's shares may be (null until known, or when it cannot be read). */
  const [sharePolicy, setSharePolicy] = useState<SharePolicy | null>(null);
  /** Paths chosen in the file browser for a new share, handed to the Shares screen. */
  const [sharePaths, setSharePaths] = useState<ShareChoice | null>(null);

  useEffect(() => {
    void sessionCheck().then(setSession, () => setSession(null));
    onUnauthorized(() => {
      setSession(null);
      setNotice(t.sessionExpired);
    });
    const pop = () => setRoute(parseRoute(location.pathname));
    window.addEventListener('popstate', pop);
    return () => window.removeEventListener('popstate', pop);
  }, []);

  useEffect(() => {
    if (!session || !toStart) return;
    setToStart(false);
    if (session.start_directory === '/') return;
    const start: Route = { kind: 'files', dir: session.start_directory };
    setRoute(start);
    history.replaceState(null, '', routePath(start));
  }, [session, toStart]);

  useEffect(() => {
    if (!session) return;
    return keepAlive(() => {
      setSession(null);
      setNotice(t.sessionExpired);
    });
  }, [session]);

  useEffect(() => {
    setSharePolicy(null);
    if (!session || session.password_change_required) return;
    let live = true;
    // unreadable (an older server, a network error): no shares offered
    const none: SharePolicy = {
      shares_allowed: false,
      password_required: false,
      default_expiration_days: 0,
      max_expiration_days: 0,
      policies: [],
      policy_change_disabled: false,
    };
    void api.GET('/api/v2/user/share-policy').then(
      ({ data }) => live && setSharePolicy(data ?? none),
      () => live && setSharePolicy(none),
    );
    return () => {
      live = false;
    };
  }, [session]);

  useEffect(() => {
    const screen = route.kind === 'shares' ? t.sharesTitle : route.kind === 'profile' ? t.profile : t.filesTitle;
    document.title = session ? `${screen} · ${t.appName}` : t.loginTitle;
  }, [session, route.kind]);

  const go = useCallback((to: Route) => {
    setRoute(to);
    const url = routePath(to);
    if (location.pathname !== url) history.pushState(null, '', url);
  }, []);
  const navigate = useCallback((dir: string) => go({ kind: 'files', dir }), [go]);
  const share = useCallback(
    (chosen: ShareChoice) => {
      setSharePaths(chosen);
      go({ kind: 'shares' });
    },
    [go],
  );
  const pathsTaken = useCallback(() => setSharePaths(null), []);

  const signOut = useCallback(async () => {
    await logout().catch(() => {});
    setSession(null);
    setNotice('');
    history.replaceState(null, '', `${BASE}/`);
    setRoute({ kind: 'files', dir: '/' });
    setToStart(true);
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
  const canShare = !!sharePolicy?.shares_allowed;
  /** The header's navigation: one item a screen. */
  const navItems: NavItem[] = [
    { route: { kind: 'files', dir: '/' }, label: t.filesTitle },
    ...(canShare ? [{ route: { kind: 'shares' } as const, label: t.sharesTitle }] : []),
    { route: { kind: 'profile' }, label: t.profile },
  ];
  return (
    <>
      <a className="skip" href="#content">
        {t.skipToContent}
      </a>
      <header className="bar">
        <span className="brand">{t.appName}</span>
        <Nav items={navItems} current={route} onGo={go} />
        <span className="who">{t.signedInAs(session.username)}</span>
        <button type="button" onClick={() => void signOut()}>
          {t.logout}
        </button>
      </header>
      {route.kind === 'shares' && sharePolicy?.shares_allowed ? (
        <Suspense
          fallback={
            <main id="content" className="center" aria-busy="true">
              <p>{t.loading}</p>
            </main>
          }
        >
          <Shares policy={sharePolicy} paths={sharePaths} onPathsTaken={pathsTaken} />
        </Suspense>
      ) : route.kind === 'shares' && !sharePolicy ? (
        <main id="content" className="center" aria-busy="true">
          <p>{t.loading}</p>
        </main>
      ) : route.kind === 'profile' ? (
        <Profile onPasswordChanged={passwordChanged} />
      ) : (
        <Files dir={route.kind === 'files' ? route.dir : '/'} onNavigate={navigate} onShare={canShare ? share : undefined} />
      )}
    </>
  );
}
