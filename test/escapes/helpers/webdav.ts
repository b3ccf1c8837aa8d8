/**
 * A user's WebDAV requests (not a test file): node's http client over the
 * world's `Client`, so the request target goes out exactly as written (no
 * URL normalisation of `..` or percent escapes) and every reply is scanned
 * by the world's canary, as the HTTP suites' replies are.
 */
import { Client, type Reply, type User, type World } from './world.js';
import { inUrlPath, type Crafted } from './crafted.js';

/** What node's http client refuses in a request target (outside 0x21-0xff), and what would cut the path (`?`, `#`). */
const UNSENDABLE = /[^\u0021-\u007e]|[?#]/g;

/**
 * The request targets of a crafted path, rooted at the WebDAV prefix `/`:
 * its segments percent-encoded (`inUrlPath`), and as literal as a request
 * line allows (`..`, backslashes and percent escapes as written, only the
 * characters no request target may hold encoded). Duplicates dropped.
 */
export function davTargets(c: Crafted): string[] {
  const root = (s: string) => (s.startsWith('/') ? s : '/' + s);
  const literal = (c.raw ? c.p : c.p.replace(/%/g, '%25')).replace(UNSENDABLE, (ch) => encodeURIComponent(ch));
  return [...new Set([root(inUrlPath(c)), root(literal)])];
}

export const LOCKINFO =
  '<?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>escapes</D:owner></D:lockinfo>';
export const PROPPATCH =
  '<?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:ferry-escapes"><D:set><D:prop><Z:note>pwned</Z:note></D:prop></D:set></D:propertyupdate>';
export const PROPFIND_ALL = '<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>';

/** One user's WebDAV session: Basic auth, requests counted by method. */
export class DavUser {
  readonly client: Client;
  /** `127.0.0.1:<port>`: the Host the client sends, so what a same-host Destination names. */
  readonly host: string;
  readonly counts = new Map<string, number>();
  private readonly basic: { username: string; password: string };

  constructor(
    w: World,
    readonly user: User,
  ) {
    this.client = new Client(`http://127.0.0.1:${w.webdavPort}`);
    this.client.listeners.push((label, r) => w.canary.check(`${user.name} webdav ${label}`, r));
    this.host = `127.0.0.1:${w.webdavPort}`;
    this.basic = { username: user.name, password: user.password };
  }

  request(method: string, target: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Reply> {
    this.counts.set(method, (this.counts.get(method) ?? 0) + 1);
    const h = body !== undefined && typeof body === 'string' ? { 'content-type': 'application/xml; charset=utf-8', ...headers } : headers;
    return this.client.request(method, target, { basic: this.basic, headers: h, body });
  }

  propfind(target: string, depth: '0' | '1'): Promise<Reply> {
    return this.request('PROPFIND', target, { depth }, PROPFIND_ALL);
  }

  /** LOCK (exclusive write, Depth 0); when granted, the lock is released again with UNLOCK. */
  async lock(target: string): Promise<Reply> {
    const r = await this.request('LOCK', target, { depth: '0', timeout: 'Second-60' }, LOCKINFO);
    const token = r.headers['lock-token'];
    if (r.status < 300 && typeof token === 'string') await this.request('UNLOCK', target, { 'lock-token': token });
    return r;
  }

  copyMove(method: 'COPY' | 'MOVE', source: string, destination: string, overwrite: 'T' | 'F' = 'T'): Promise<Reply> {
    return this.request(method, source, { destination, overwrite });
  }

  close(): void {
    this.client.close();
  }
}
