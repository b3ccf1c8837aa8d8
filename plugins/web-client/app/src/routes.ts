/**
 * The client's routes: each screen is a URL below /web/client/, so reloads,
 * bookmarks and the browser's history work.
 *
 *   /web/client/files/<dir>           the signed-in user's files
 *   /web/client/shares                the user's shares
 *   /web/client/profile               the user's profile (password, keys, 2FA)
 *   /web/client/pub/<share id>/<dir>  a public share, for external parties (no sign-in)
 */
export const BASE = '/web/client';

export type Route = { kind: 'files'; dir: string } | { kind: 'shares' } | { kind: 'profile' } | { kind: 'pub'; shareId: string; dir: string };

const segments = (p: string) => p.split('/').map(encodeURIComponent).join('/');

/** The route of a pathname (anything unknown is the home folder). */
export function parseRoute(pathname: string): Route {
  let p: string;
  try {
    p = decodeURIComponent(pathname);
  } catch {
    return { kind: 'files', dir: '/' };
  }
  if (!p.startsWith(`${BASE}/`)) return { kind: 'files', dir: '/' };
  const rest = p.slice(BASE.length);
  if (rest === '/shares') return { kind: 'shares' };
  if (rest === '/profile') return { kind: 'profile' };
  const pub = /^\/pub\/([^/]+)(\/.*)?$/.exec(rest);
  if (pub) return { kind: 'pub', shareId: pub[1]!, dir: pub[2] && pub[2] !== '/' ? pub[2] : '/' };
  if (rest === '/files' || rest.startsWith('/files/')) {
    const dir = rest.slice('/files'.length);
    return { kind: 'files', dir: dir === '' || dir === '/' ? '/' : dir };
  }
  return { kind: 'files', dir: '/' };
}

/** Whether a pathname is the client's bare address (/web/client or /web/client/): no screen, no directory named. */
export function namesNothing(pathname: string): boolean {
  return pathname === BASE || pathname === `${BASE}/`;
}

/** The pathname of a route. */
export function routePath(r: Route): string {
  switch (r.kind) {
    case 'files':
      return `${BASE}/files${r.dir === '/' ? '' : segments(r.dir)}`;
    case 'shares':
      return `${BASE}/shares`;
    case 'profile':
      return `${BASE}/profile`;
    case 'pub':
      return `${BASE}/pub/${encodeURIComponent(r.shareId)}${r.dir === '/' ? '' : segments(r.dir)}`;
  }
}
