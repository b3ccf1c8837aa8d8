/**
 * The requests a page load sends at once, from main.tsx before the first render, in parallel with
 * the session check instead of after it: the session itself, and the listing and capabilities of
 * the folder in the address. A new tab on a folder then waits for one round trip, not three in a
 * row. Each early answer is taken once, by the first caller asking for the same thing; any later
 * call (a reload of the folder, another folder) makes its own request.
 */
import { api, quietApi } from './api';
import { parseRoute } from './routes';
import { currentSession } from './session';

const listingOf = (dir: string) => api.GET('/api/v2/user/dirs', { params: { query: { path: dir } } });
const capabilitiesOf = (dir: string) => api.GET('/api/v2/user/capabilities', { params: { query: { path: dir } } });

let session: ReturnType<typeof currentSession> | null = null;
let folder: { dir: string; listing: ReturnType<typeof listingOf> | null; capabilities: ReturnType<typeof capabilitiesOf> | null } | null = null;

/** Sends the early requests of the page at `pathname` (a public share's page has none: it needs no session). */
export function startEarlyRequests(pathname: string): void {
  const route = parseRoute(pathname);
  if (route.kind === 'pub') return;
  session = currentSession();
  // no session (or no answer): the early folder requests were refused, the folder is asked again after the sign-in
  void session.then(
    (s) => {
      if (!s) folder = null;
    },
    () => {
      folder = null;
    },
  );
  // sent before the session is known: without one they answer 401, which is no lost session (quietApi)
  if (route.kind === 'files') {
    const query = { params: { query: { path: route.dir } } };
    folder = {
      dir: route.dir,
      listing: quietApi.GET('/api/v2/user/dirs', query),
      capabilities: quietApi.GET('/api/v2/user/capabilities', query),
    };
  }
}

/** The session of the cookie: the early check's answer the first time, else a new check. */
export function sessionCheck(): ReturnType<typeof currentSession> {
  const early = session;
  session = null;
  return early ?? currentSession();
}

/** The listing of `dir` (GET /api/v2/user/dirs): the early answer when it was for `dir` and not taken yet. */
export function listing(dir: string): ReturnType<typeof listingOf> {
  const early = folder?.dir === dir ? folder.listing : null;
  if (early) folder!.listing = null;
  return early ?? listingOf(dir);
}

/** The capabilities of `dir` (GET /api/v2/user/capabilities): the early answer when it was for `dir` and not taken yet. */
export function capabilities(dir: string): ReturnType<typeof capabilitiesOf> {
  const early = folder?.dir === dir ? folder.capabilities : null;
  if (early) folder!.capabilities = null;
  return early ?? capabilitiesOf(dir);
}
