import { useCallback, useEffect, useState } from 'react';
import { onUnauthorized } from './api';
import { ChangePassword } from './ChangePassword';
import { Files } from './Files';
import { Login } from './Login';
import { currentSession, keepAlive, logout, type Session } from './session';
import { t } from './strings';

/** The client route: the folder shown is the URL's path below /web/client/files. */
const BASE = '/web/client';

function dirFromLocation(): string {
  const p = decodeURIComponent(location.pathname);
  if (!p.startsWith(`${BASE}/files`)) return '/';
  const rest = p.slice(`${BASE}/files`.length);
  return rest === '' ? '/' : rest;
}

function locationOfDir(dir: string): string {
  return `${BASE}/files${dir === '/' ? '' : dir.split('/').map(encodeURIComponent).join('/')}`;
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState('');
  const [dir, setDir] = useState(dirFromLocation);

  useEffect(() => {
    void currentSession().then(setSession, () => setSession(null));
    onUnauthorized(() => {
      setSession(null);
      setNotice(t.sessionExpired);
    });
    const pop = () => setDir(dirFromLocation());
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

  const navigate = useCallback((to: string) => {
    setDir(to);
    const url = locationOfDir(to);
    if (location.pathname !== url) history.pushState(null, '', url);
  }, []);

  const signOut = useCallback(async () => {
    await logout().catch(() => {});
    setSession(null);
    setNotice('');
    history.replaceState(null, '', `${BASE}/`);
    setDir('/');
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
          if (!location.pathname.startsWith(`${BASE}/files`)) history.replaceState(null, '', locationOfDir(dir));
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
      <Files dir={dir} onNavigate={navigate} />
    </>
  );
}
