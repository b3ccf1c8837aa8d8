/**
 * Users' public shares over WebDAV, read-only: `<shares prefix>/<share id>/<path>`.
 * The share's checks and the owner's file session come from the core
 * (ServiceHost.shares); this module maps URLs and refuses what writes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServiceHost, ShareSession } from '@ferry/core';
import type { PublicSharesConfig } from './config.js';
import { DavError, type DavHandlers } from './dav.js';
import { Paths } from './paths.js';

/** The methods a share answers; every other one is refused with 403 before the share is opened. */
export const SHARE_METHODS = 'OPTIONS, GET, HEAD, PROPFIND';
const READ_METHODS = new Set(SHARE_METHODS.split(', '));
const REALM = 'Basic realm="Ferry share", charset="UTF-8"';

export interface ShareRequest {
  req: IncomingMessage;
  res: ServerResponse;
  ip: string;
  /** The Basic credentials the request carries. */
  credential: { username: string; password: string } | null;
  signal: AbortSignal;
}

export class DavShares {
  private readonly paths: Paths;
  private readonly base: string;
  constructor(
    config: PublicSharesConfig,
    private readonly handlers: DavHandlers,
    private readonly host: () => ServiceHost,
    private readonly protocol: 'DAV',
  ) {
    this.base = config.prefix.replace(/\/+$/, '');
    this.paths = new Paths(this.base);
  }

  /** The path under the shares prefix of a request target ('/<id>/...'), null when it is not under it. */
  target(url: string): string | null {
    return this.paths.toVirtual(url);
  }

  /** Answers a request on a share; `target` is what target() returned. */
  async handle(r: ShareRequest, target: string): Promise<void> {
    const { req, res } = r;
    const slash = target.indexOf('/', 1);
    const id = slash < 0 ? target.slice(1) : target.slice(1, slash);
    if (!id) throw new DavError(404, 'not a share: the URL names a share by its id, <prefix>/<share id>/');
    const method = req.method ?? '';
    if (!READ_METHODS.has(method)) {
      res.setHeader('Allow', SHARE_METHODS);
      throw new DavError(403, `shares are read-only over WebDAV: ${method} is refused`);
    }
    let share: ShareSession;
    try {
      share = await this.host().shares.open({
        id,
        ip: r.ip,
        protocol: this.protocol,
        ...(r.credential ? { credential: r.credential } : {}),
        clientVersion: String(req.headers['user-agent'] ?? '').slice(0, 256),
        command: method,
        // not the request's signal: it fires when the response ends, and the session's signal cuts the socket
      });
    } catch (err) {
      if ((err as { kind?: string }).kind === 'unauthorized') res.setHeader('WWW-Authenticate', REALM);
      throw err;
    }
    // closed by an administrator (DELETE /api/v2/connections/{id}): the client is cut, as for users
    const cut = () => req.socket.destroy();
    share.files.signal.addEventListener('abort', cut, { once: true });
    try {
      if (method === 'OPTIONS') {
        res.statusCode = 200;
        res.setHeader('DAV', '1');
        res.setHeader('Allow', SHARE_METHODS);
        res.setHeader('Content-Length', 0);
        return void res.end();
      }
      const rel = slash < 0 ? '/' : target.slice(slash);
      const vpath = share.resolve(rel);
      const shareBase = `${this.base}/${encodeURIComponent(id)}`;
      const hrefs = new Paths(shareBase);
      await this.handlers.handle({
        req,
        res,
        files: share.files,
        username: '',
        path: vpath ?? '/',
        signal: r.signal,
        share: {
          href: (p, isDir) => hrefs.href(share.relative(p), isDir),
          beforeDownload: () => share.consume(),
          ...(vpath === null ? { rootMembers: await share.rootMembers() } : {}),
        },
      });
    } finally {
      share.files.signal.removeEventListener('abort', cut);
      await share.close();
    }
  }
}
