// The WebDAV methods (RFC 4918) over a file session. Longer than 500 lines: one handler per method
// sharing the lock and If header checks and the property rendering, which splitting would scatter.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { DomainError, ErrorKind, FsError, FsErrorCode, type FileInfo, type FileSession, type SessionQuota } from '@ferry/core';
import mime from 'mime-types';
import type { WebdavConfig } from './config.js';
import { IfHeaderError, parseIfHeader, submittedTokens, type IfList } from './if-header.js';
import { coveringIn, type DavLock, type LockStore } from './locks.js';
import { baseName, hrefSegment, isWithin, parentOf, PathError, type Paths } from './paths.js';
import type { DeadProp, PropStore } from './props.js';
import { DAV_NS, davChild, elements, esc, parseXml, serialize, textOf, XmlError, type XmlElement } from './xml.js';

/** A refusal with its HTTP status and, for a precondition of RFC 4918, its DAV: condition element name. */
export class DavError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly condition?: string,
    readonly href?: string,
  ) {
    super(message);
    this.name = 'DavError';
  }
}

/** What the handlers share for the whole service. */
export interface DavShared {
  config: WebdavConfig;
  paths: Paths;
  locks: LockStore;
  props: PropStore;
}

/** One request of a logged-in client. */
export interface DavRequest {
  req: IncomingMessage;
  res: ServerResponse;
  files: FileSession;
  username: string;
  /** The target's virtual path. */
  path: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** A request on a public share (read methods only): no locks, dead or quota properties, hrefs in the share's URLs. */
  share?: ShareView;
}

/** How a public share's request differs from a user's (src/shares.ts). */
export interface ShareView {
  /** The href of an owner's virtual path inside the share. */
  href(vpath: string, isDir: boolean): string;
  /** Called once a file download is checked, before its bytes are read (takes one use of the share). */
  beforeDownload(): Promise<void>;
  /** Members of the made-up root collection when the target is it (a share of a file or of several paths). */
  rootMembers?: FileInfo[];
}

/** The made-up root collection of a share of a file or of several paths. */
const SHARE_ROOT: FileInfo = { name: '', path: '/', isDir: true, size: 0, mtime: new Date(0), mode: 0o040555 };

export const ALLOWED_METHODS = 'OPTIONS, GET, HEAD, PUT, DELETE, MKCOL, COPY, MOVE, PROPFIND, PROPPATCH, LOCK, UNLOCK';
const MS_NS = 'urn:schemas-microsoft-com:';
const XML_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n';

/** A request header as one string (the first when sent several times). */
const hdr = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The HTTP status of an error of a file session. */
export function statusOf(err: unknown): { status: number; message: string } {
  if (err instanceof DavError) return { status: err.status, message: err.message };
  if (err instanceof PathError) return { status: err.status, message: err.message };
  if (err instanceof XmlError || err instanceof IfHeaderError) return { status: 400, message: err.message };
  if (err instanceof FsError) {
    const status: Record<string, number> = {
      [FsErrorCode.NotFound]: 404,
      [FsErrorCode.Exists]: 405,
      [FsErrorCode.Permission]: 403,
      [FsErrorCode.Escape]: 403,
      [FsErrorCode.NotSupported]: 501,
      [FsErrorCode.CrossDevice]: 502,
      [FsErrorCode.Quota]: 507,
      [FsErrorCode.Invalid]: 400,
      [FsErrorCode.IsDirectory]: 409,
      [FsErrorCode.NotDirectory]: 409,
      [FsErrorCode.NotEmpty]: 409,
      [FsErrorCode.Unavailable]: 503,
      [FsErrorCode.Aborted]: 499,
    };
    return { status: status[err.code] ?? 500, message: err.message };
  }
  if (err instanceof DomainError) {
    const status: Record<string, number> = {
      [ErrorKind.Invalid]: 400,
      [ErrorKind.Unauthorized]: 401,
      [ErrorKind.Forbidden]: 403,
      [ErrorKind.NotFound]: 404,
      [ErrorKind.Conflict]: 409,
      [ErrorKind.TooLarge]: 507,
      [ErrorKind.TooManyRequests]: 429,
    };
    return { status: status[err.kind] ?? 503, message: err.message };
  }
  return { status: 500, message: 'internal error' };
}

/** An error answer in WebDAV's own form: a DAV:error element (RFC 4918 section 16) with the message. */
export function sendError(res: ServerResponse, head: boolean, status: number, message: string, condition?: string, href?: string): void {
  if (res.headersSent) return void res.destroy();
  const cond = condition ? `<D:${condition}>${href ? `<D:href>${esc(href)}</D:href>` : ''}</D:${condition}>` : '';
  const body = `${XML_HEAD}<D:error xmlns:D="DAV:" xmlns:F="urn:ferry:webdav">${cond}<F:message>${esc(message)}</F:message></D:error>\n`;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/xml; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(head ? undefined : body);
}

/** The strong entity tag of a file or directory. */
export function etagOf(info: FileInfo): string {
  const own = info.etag?.replace(/^W\//, '').replace(/"/g, '');
  return `"${own || `${info.size.toString(16)}-${info.mtime.getTime().toString(16)}`}"`;
}

/** The request-line methods and what they run. */
export class DavHandlers {
  constructor(private readonly s: DavShared) {}

  async handle(r: DavRequest): Promise<void> {
    switch (r.req.method) {
      case 'OPTIONS':
        return this.options(r);
      case 'GET':
      case 'HEAD':
        return this.get(r);
      case 'PUT':
        return this.put(r);
      case 'DELETE':
        return this.delete(r);
      case 'MKCOL':
        return this.mkcol(r);
      case 'COPY':
      case 'MOVE':
        return this.copyMove(r, r.req.method === 'MOVE');
      case 'PROPFIND':
        return this.propfind(r);
      case 'PROPPATCH':
        return this.proppatch(r);
      case 'LOCK':
        return this.lock(r);
      case 'UNLOCK':
        return this.unlock(r);
      default:
        r.res.setHeader('Allow', ALLOWED_METHODS);
        throw new DavError(405, `method ${r.req.method} is not supported`);
    }
  }

  // ---- helpers ----

  private async statOrNull(r: DavRequest, path: string): Promise<FileInfo | null> {
    try {
      return await r.files.stat(path, { signal: r.signal });
    } catch (err) {
      if (err instanceof FsError && (err.code === FsErrorCode.NotFound || err.code === FsErrorCode.NotDirectory)) return null;
      throw err;
    }
  }

  private async parentMustExist(r: DavRequest, path: string): Promise<void> {
    if (path === '/') return;
    const parent = await this.statOrNull(r, parentOf(path));
    if (!parent || !parent.isDir) throw new DavError(409, 'the parent collection does not exist');
  }

  /** Reads an XML body (null when empty); 413 past max_xml_size. */
  private async xmlBody(r: DavRequest): Promise<XmlElement | null> {
    const max = this.s.config.max_xml_size;
    const declared = Number(r.req.headers['content-length'] ?? NaN);
    if (declared > max) throw new DavError(413, `the XML body is larger than ${max} bytes`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of r.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) throw new DavError(413, `the XML body is larger than ${max} bytes`);
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') return null;
    return parseXml(text, this.s.config.max_xml_depth);
  }

  /** Refuses a body where none is defined (MKCOL: 415). */
  private hasBody(r: DavRequest): boolean {
    const len = r.req.headers['content-length'];
    return (len !== undefined && len !== '0') || r.req.headers['transfer-encoding'] !== undefined;
  }

  private ifLists(r: DavRequest): IfList[] | null {
    const h = hdr(r.req, 'if');
    return h ? parseIfHeader(h) : null;
  }

  /**
   * Checks the If header (412 when it evaluates to false) and the locks
   * on the paths written (423 unless a token of each lock is submitted).
   * `members`: collections whose membership changes (a depth-0 lock on
   * them counts too); `deep`: trees written whole (locks below count).
   */
  private async checkWrite(r: DavRequest, o: { paths: string[]; deep?: string[]; members?: string[] }): Promise<void> {
    const lists = this.ifLists(r);
    if (lists && !(await this.evaluateIf(r, lists))) throw new DavError(412, 'the If header conditions are not met');
    const tokens = lists ? submittedTokens(lists) : new Set<string>();
    const needed: DavLock[] = [];
    for (const p of o.paths) needed.push(...(await this.s.locks.covering(r.username, p)));
    for (const p of o.members ?? []) needed.push(...(await this.s.locks.covering(r.username, p)));
    for (const p of o.deep ?? []) needed.push(...(await this.s.locks.under(r.username, p)));
    const byRoot = new Map<string, DavLock[]>();
    for (const l of needed) byRoot.set(l.path, [...(byRoot.get(l.path) ?? []), l]);
    for (const [root, locks] of byRoot) {
      if (!locks.some((l) => tokens.has(l.token))) {
        throw new DavError(423, 'the resource is locked and no token of its lock was submitted', 'lock-token-submitted', this.s.paths.href(root, false));
      }
    }
  }

  /** True when one list of the If header holds (RFC 4918 section 10.4). */
  private async evaluateIf(r: DavRequest, lists: IfList[]): Promise<boolean> {
    const etags = new Map<string, string | null>();
    for (const list of lists) {
      let path: string;
      try {
        path = list.resource === null ? r.path : this.s.paths.destination(list.resource, r.req.headers.host);
      } catch {
        continue;
      }
      let ok = true;
      for (const c of list.conditions) {
        let holds: boolean;
        if ('token' in c) {
          const lock = await this.s.locks.get(c.token);
          holds = !!lock && lock.username === r.username && coveringIn([lock], path).length > 0;
        } else {
          if (!etags.has(path)) {
            const info = await this.statOrNull(r, path);
            etags.set(path, info ? etagOf(info) : null);
          }
          const current = etags.get(path);
          holds = current !== null && current === c.etag.replace(/^W\//, '');
        }
        if (holds === c.not) {
          ok = false;
          break;
        }
      }
      if (ok) return true;
    }
    return false;
  }

  private contentType(name: string): string {
    const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
    return this.s.config.mime_types[ext] ?? (mime.lookup(name) || 'application/octet-stream');
  }

  // ---- methods ----

  private options(r: DavRequest): void {
    r.res.statusCode = 200;
    r.res.setHeader('DAV', '1, 2');
    r.res.setHeader('MS-Author-Via', 'DAV');
    r.res.setHeader('Allow', ALLOWED_METHODS);
    r.res.setHeader('Content-Length', 0);
    r.res.end();
  }

  private async get(r: DavRequest): Promise<void> {
    const { req, res } = r;
    const head = req.method === 'HEAD';
    const info = r.share?.rootMembers ? SHARE_ROOT : await r.files.stat(r.path, { signal: r.signal });
    if (info.isDir) throw new DavError(405, 'the target is a collection: list it with PROPFIND');
    const etag = etagOf(info);
    const lastModified = new Date(Math.floor(info.mtime.getTime() / 1000) * 1000);
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', lastModified.toUTCString());
    res.setHeader('Accept-Ranges', 'bytes');
    const cond = conditional(req, etag, lastModified);
    if (cond === 412) throw new DavError(412, 'the precondition headers do not match the file');
    if (cond === 304) {
      res.statusCode = 304;
      return void res.end();
    }
    let range = parseRange(req.headers.range, info.size);
    if (range && hdr(req, 'if-range')) {
      const ir = hdr(req, 'if-range')!;
      const same = ir.startsWith('"') || ir.startsWith('W/') ? ir === etag : Date.parse(ir) === lastModified.getTime();
      if (!same) range = null;
    }
    if (range === 'unsatisfiable') {
      res.setHeader('Content-Range', `bytes */${info.size}`);
      throw new DavError(416, 'the range is outside the file');
    }
    res.setHeader('Content-Type', this.contentType(info.name));
    if (range) {
      res.statusCode = 206;
      res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${info.size}`);
      res.setHeader('Content-Length', range.end - range.start + 1);
    } else {
      res.statusCode = 200;
      res.setHeader('Content-Length', info.size);
    }
    if (head) return void res.end();
    await r.share?.beforeDownload();
    if (info.size === 0) return void res.end();
    // read into lent buffers, each given back once the socket took it (no garbage per chunk, larger reads
    // for a long file): 4 to 5 times less CPU than piping a stream of fresh chunks
    const read = await r.files.openRead(r.path, { signal: r.signal, recycle: true, ...(range ? { start: range.start, end: range.end } : {}) });
    try {
      if (read.writeTo) {
        read.writeTo(res);
        await finished(res);
      } else await pipeline(read.stream, res);
    } finally {
      await read.done;
    }
  }

  private async put(r: DavRequest): Promise<void> {
    const { req, res } = r;
    if (req.headers['content-range']) {
      throw new DavError(501, 'partial PUT (Content-Range) is not supported: send the whole file');
    }
    const info = await this.statOrNull(r, r.path);
    if (info?.isDir) throw new DavError(405, 'the target is a collection');
    if (!info) await this.parentMustExist(r, r.path);
    const cond = writeConditions(req, info ? etagOf(info) : null);
    if (cond) throw new DavError(412, cond);
    await this.checkWrite(r, { paths: [r.path], members: info ? [] : [parentOf(r.path)] });
    const length = Number(req.headers['content-length'] ?? NaN);
    const w = await r.files.openWrite(r.path, { signal: r.signal, ...(Number.isSafeInteger(length) && length >= 0 ? { size: length } : {}) });
    try {
      await pipeline(req, w.stream);
    } catch (err) {
      w.abort(err);
      await w.done.catch(() => undefined);
      throw err;
    }
    await w.done;
    res.statusCode = info ? 204 : 201;
    res.setHeader('Content-Length', 0);
    res.end();
  }

  private async delete(r: DavRequest): Promise<void> {
    if (r.path === '/') throw new DavError(403, 'the root collection cannot be deleted');
    const info = await r.files.stat(r.path, { signal: r.signal });
    await this.checkWrite(r, { paths: [r.path], deep: [r.path], members: [parentOf(r.path)] });
    if (info.isDir) await r.files.removeDir(r.path, { signal: r.signal });
    else await r.files.removeFile(r.path, { signal: r.signal });
    await this.s.locks.removeUnder(r.username, r.path);
    await this.s.props.removeUnder(r.username, r.path);
    r.res.statusCode = 204;
    r.res.end();
  }

  private async mkcol(r: DavRequest): Promise<void> {
    if (this.hasBody(r)) throw new DavError(415, 'MKCOL with a body is not supported');
    if (await this.statOrNull(r, r.path)) throw new DavError(405, 'the resource exists already');
    await this.parentMustExist(r, r.path);
    await this.checkWrite(r, { paths: [r.path], members: [parentOf(r.path)] });
    await r.files.mkdir(r.path, false, { signal: r.signal });
    r.res.statusCode = 201;
    r.res.setHeader('Content-Length', 0);
    r.res.end();
  }

  private async copyMove(r: DavRequest, move: boolean): Promise<void> {
    const { req, res } = r;
    const destHeader = hdr(req, 'destination');
    if (!destHeader) throw new DavError(400, 'the Destination header is missing');
    const dest = this.s.paths.destination(destHeader, req.headers.host);
    const depthHeader = (hdr(req, 'depth') ?? 'infinity').toLowerCase();
    if (!['0', 'infinity'].includes(depthHeader) || (move && depthHeader !== 'infinity')) {
      throw new DavError(400, `Depth ${depthHeader} is not allowed for ${req.method}`);
    }
    const overwrite = (hdr(req, 'overwrite') ?? 'T').toUpperCase();
    if (overwrite !== 'T' && overwrite !== 'F') throw new DavError(400, 'the Overwrite header must be T or F');
    if (r.path === '/') throw new DavError(403, `the root collection cannot be the source of ${req.method}`);
    const source = await r.files.stat(r.path, { signal: r.signal });
    if (dest === r.path) throw new DavError(403, 'the source and the destination are the same');
    if (source.isDir && isWithin(dest, r.path)) throw new DavError(403, 'the destination is inside the source');
    if (dest === '/') throw new DavError(403, 'the root collection cannot be replaced');
    await this.parentMustExist(r, dest);
    const existing = await this.statOrNull(r, dest);
    if (existing && overwrite === 'F') throw new DavError(412, 'the destination exists and Overwrite is F');
    await this.checkWrite(r, {
      paths: move ? [r.path, dest] : [dest],
      deep: move ? [r.path, dest] : [dest],
      members: [parentOf(dest), ...(move ? [parentOf(r.path)] : [])],
    });
    if (existing) {
      if (existing.isDir) await r.files.removeDir(dest, { signal: r.signal });
      else await r.files.removeFile(dest, { signal: r.signal });
      await this.s.locks.removeUnder(r.username, dest);
      await this.s.props.removeUnder(r.username, dest);
    }
    const shallow = source.isDir && depthHeader === '0';
    if (move) await r.files.rename(r.path, dest, { signal: r.signal });
    else if (shallow) await r.files.mkdir(dest, false, { signal: r.signal });
    else await r.files.copy(r.path, dest, { signal: r.signal });
    await this.s.props.copy(r.username, r.path, dest, !shallow, move);
    if (move) await this.s.locks.removeUnder(r.username, r.path);
    res.statusCode = existing ? 204 : 201;
    res.setHeader('Content-Length', 0);
    res.end();
  }

  // ---- properties ----

  private async propfind(r: DavRequest): Promise<void> {
    const { req, res } = r;
    const depthHeader = (hdr(req, 'depth') ?? 'infinity').toLowerCase();
    if (!['0', '1', 'infinity'].includes(depthHeader)) throw new DavError(400, `Depth ${depthHeader} is not allowed`);
    if (depthHeader === 'infinity' && !this.s.config.allow_depth_infinity) {
      throw new DavError(403, 'PROPFIND with Depth infinity is not allowed: use Depth 0 or 1', 'propfind-finite-depth');
    }
    const body = await this.xmlBody(r);
    const query = propQuery(body);
    const root = r.share?.rootMembers;
    const info = root ? SHARE_ROOT : await r.files.stat(r.path, { signal: r.signal });
    // the collection's first page before the head: a listing refused at its start is still the answer's status
    const listing = !root && info.isDir && depthHeader !== '0' ? await this.openListing(r, r.path) : undefined;
    res.statusCode = 207;
    res.setHeader('Content-Type', 'application/xml; charset=utf-8');
    // the account's locks once (few), the dead properties by collection when the query shows them (none on a share)
    const locks = r.share ? [] : await this.s.locks.live(r.username);
    const withDead = !r.share && (query.kind !== 'prop' || query.props.some((p) => p.ns !== DAV_NS));
    const ctx: PropContext = {
      query,
      wanted: query.kind === 'prop' ? query.props : query.kind === 'allprop' ? [...ALLPROP_WANTED, ...(query.include ?? [])] : [],
      quota: !r.share && query.kind === 'prop' && query.props.some((p) => p.ns === DAV_NS && p.name.startsWith('quota-')),
      locks,
      dead: withDead ? await this.s.props.listMany(r.username, [r.path]) : new Map(),
    };
    await write(res, `${XML_HEAD}<D:multistatus xmlns:D="DAV:">\n`);
    try {
      await write(res, this.propResponse(r, r.path, info, ctx, await this.quotaOf(r, r.path, ctx)));
      if (root && depthHeader !== '0') {
        for (const m of root) {
          await write(res, this.propResponse(r, m.path, m, ctx, await this.quotaOf(r, m.path, ctx)));
          if (m.isDir && depthHeader === 'infinity') await this.propfindChildren(r, m.path, ctx, false, true);
        }
      } else if (listing) await this.propfindChildren(r, r.path, ctx, withDead, depthHeader === 'infinity', listing);
    } catch (err) {
      // the 207 is sent: a listing that fails on the way (the directory gone, replaced, unreadable) ends
      // the document with the collection's own status, so the client gets a whole answer that says so
      if (r.signal.aborted || res.destroyed) throw err;
      const { status, message } = statusOf(err);
      const phrase = STATUS_CODES[status] ?? 'Error';
      await write(
        res,
        `<D:response><D:href>${esc(this.s.paths.href(r.path, true))}</D:href><D:status>HTTP/1.1 ${status} ${phrase}</D:status>` +
          `<D:responsedescription>${esc(message)}</D:responsedescription></D:response>\n`,
      );
    }
    res.end('</D:multistatus>\n');
  }

  /** The quota a path counts against, when the query asks for a quota property (else nothing is asked). */
  private async quotaOf(r: DavRequest, path: string, ctx: PropContext): Promise<SessionQuota | undefined> {
    return ctx.quota ? r.files.quota(path, { signal: r.signal }) : undefined;
  }

  /** A collection's listing with its first page read (so that its errors come before anything is sent). */
  private async openListing(r: DavRequest, dir: string): Promise<Listing> {
    const pages = (await r.files.list(dir, { signal: r.signal }))[Symbol.asyncIterator]();
    return { first: await pages.next(), pages };
  }

  /**
   * Writes the responses of a collection's members as their pages come (depth infinity: depth first).
   * Each response is rendered synchronously from the entry, the locks and the dead properties read
   * before: nothing is awaited per member (unless quota properties are asked for).
   */
  private async propfindChildren(r: DavRequest, dir: string, ctx: PropContext, withDead: boolean, deep: boolean, opened?: Listing): Promise<void> {
    const { first, pages } = opened ?? (await this.openListing(r, dir));
    // the dead properties of the whole collection in one query, unless it holds more than a bounded number of them:
    // then page by page (the common case, a collection without any, costs one query whatever its size)
    const dirDead = withDead ? await this.s.props.children(r.username, dir, DEAD_PROPS_AT_ONCE) : new Map<string, DeadProp[]>();
    const prefix = dir === '/' ? '/' : `${dir}/`;
    // the members' hrefs: the collection's, encoded once, and each member's name
    const base = r.share ? undefined : this.s.paths.href(dir, true);
    for (let next = first; !next.done; next = await pages.next()) {
      const page = next.value;
      const paths = page.map((entry) => prefix + entry.name);
      const pageCtx: PropContext = dirDead ? { ...ctx, dead: dirDead } : { ...ctx, dead: await this.s.props.listMany(r.username, paths) };
      // the responses go out in writes of about PROPFIND_WRITE_BYTES, not one small chunk each
      let out = '';
      for (let i = 0; i < page.length; i++) {
        const entry = page[i]!;
        const path = paths[i]!;
        const href = base === undefined ? undefined : base + hrefSegment(entry.name) + (entry.isDir ? '/' : '');
        out += this.propResponse(r, path, entry, pageCtx, ctx.quota ? await this.quotaOf(r, path, ctx) : undefined, href);
        if (deep && entry.isDir) {
          await write(r.res, out);
          out = '';
          await this.propfindChildren(r, path, ctx, withDead, true);
        } else if (out.length >= PROPFIND_WRITE_BYTES) {
          await write(r.res, out);
          out = '';
        }
      }
      if (out) await write(r.res, out);
    }
  }

  /** One response of a multistatus: `quota` when the query asks for a quota property, `href` when known already. */
  private propResponse(r: DavRequest, path: string, info: FileInfo, ctx: PropContext, quota?: SessionQuota, href?: string): string {
    const { query } = ctx;
    let found = '';
    let missing = '';
    const dead = ctx.dead.get(path);
    if (query.kind === 'propname') {
      for (const n of LIVE_PROPS) if (!info.isDir || (n !== 'getcontentlength' && n !== 'getcontenttype')) found += `<D:${n}/>`;
      for (const d of dead ?? []) found += emptyElement(d.ns, d.name);
    } else {
      for (const w of ctx.wanted) {
        const value = w.ns === DAV_NS ? this.liveProp(r, path, info, w.name, ctx.locks, quota) : undefined;
        if (value !== undefined) {
          found += value;
          continue;
        }
        const d = dead?.find((p) => p.ns === w.ns && p.name === w.name);
        if (d) found += d.xml;
        else if (query.kind === 'prop') missing += emptyElement(w.ns, w.name);
      }
      if (query.kind === 'allprop' && dead) for (const d of dead) found += d.xml;
    }
    href ??= r.share ? r.share.href(path, info.isDir) : this.s.paths.href(path, info.isDir);
    let out = `<D:response><D:href>${esc(href)}</D:href>`;
    if (found) out += `<D:propstat><D:prop>${found}</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>`;
    if (missing) out += `<D:propstat><D:prop>${missing}</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>`;
    return out + '</D:response>\n';
  }

  /** A live property's element, undefined when the resource has none of that name (quota: the figures of the path, when asked for). */
  private liveProp(r: DavRequest, path: string, info: FileInfo, name: string, locks: DavLock[], quota?: SessionQuota): string | undefined {
    switch (name) {
      case 'resourcetype':
        return info.isDir ? '<D:resourcetype><D:collection/></D:resourcetype>' : '<D:resourcetype/>';
      case 'getetag':
        return `<D:getetag>${esc(etagOf(info))}</D:getetag>`;
      case 'getlastmodified':
        return `<D:getlastmodified>${info.mtime.toUTCString()}</D:getlastmodified>`;
      case 'creationdate':
        // backends keep no creation time: the modification time stands for it
        return `<D:creationdate>${info.mtime.toISOString().replace(/\.\d{3}Z$/, 'Z')}</D:creationdate>`;
      case 'displayname':
        return `<D:displayname>${esc(path === '/' ? '/' : baseName(path))}</D:displayname>`;
      case 'getcontentlength':
        return info.isDir ? undefined : `<D:getcontentlength>${info.size}</D:getcontentlength>`;
      case 'getcontenttype':
        return info.isDir ? undefined : `<D:getcontenttype>${esc(this.contentType(info.name))}</D:getcontenttype>`;
      case 'supportedlock':
        return r.share ? undefined : SUPPORTED_LOCK;
      case 'lockdiscovery': {
        if (r.share) return undefined;
        if (locks.length === 0) return '<D:lockdiscovery/>';
        let active = '';
        for (const l of coveringIn(locks, path)) active += this.activeLock(l);
        return `<D:lockdiscovery>${active}</D:lockdiscovery>`;
      }
      case 'quota-used-bytes':
      case 'quota-available-bytes': {
        // the owner's quota is not the business of a share's visitors
        if (r.share || !quota) return undefined;
        if (name === 'quota-used-bytes') return `<D:quota-used-bytes>${quota.size.used}</D:quota-used-bytes>`;
        // no limit: the property is not defined (RFC 4331 section 3)
        return quota.size.limit > 0 ? `<D:quota-available-bytes>${Math.max(0, quota.size.limit - quota.size.used)}</D:quota-available-bytes>` : undefined;
      }
      default:
        return undefined;
    }
  }

  private async proppatch(r: DavRequest): Promise<void> {
    const body = await this.xmlBody(r);
    if (!body || body.ns !== DAV_NS || body.name !== 'propertyupdate') throw new DavError(400, 'PROPPATCH needs a DAV:propertyupdate body');
    const info = await r.files.stat(r.path, { signal: r.signal });
    await this.checkWrite(r, { paths: [r.path] });
    type Op = { set: boolean; prop: XmlElement; status?: number };
    const ops: Op[] = [];
    for (const action of elements(body)) {
      if (action.ns !== DAV_NS || (action.name !== 'set' && action.name !== 'remove')) continue;
      const prop = davChild(action, 'prop');
      for (const p of prop ? elements(prop) : []) ops.push({ set: action.name === 'set', prop: p });
    }
    if (ops.length === 0) throw new DavError(400, 'the propertyupdate has no property');
    let mtime: Date | null = null;
    for (const op of ops) {
      if (op.prop.ns === DAV_NS) op.status = 403;
      else if (op.prop.ns === MS_NS && op.prop.name === 'Win32LastModifiedTime' && op.set) {
        const t = Date.parse(textOf(op.prop).trim());
        if (Number.isNaN(t)) op.status = 409;
        else mtime = new Date(t);
      }
    }
    if (!(await this.s.props.canSet(r.username, r.path, ops.filter((op) => op.set).length))) for (const op of ops) op.status ??= 507;
    const failed = ops.some((op) => op.status !== undefined);
    if (!failed && mtime && !info.isDir) {
      try {
        await r.files.setMtime(r.path, mtime, { signal: r.signal });
      } catch (err) {
        const st = statusOf(err).status;
        for (const op of ops) if (op.prop.name === 'Win32LastModifiedTime') op.status = st === 501 ? 409 : st;
      }
    }
    const anyFailed = ops.some((op) => op.status !== undefined);
    if (!anyFailed) {
      // in document order: a later set or remove of the same property wins
      const last = new Map<string, Op>();
      for (const op of ops) last.set(`${op.prop.ns}\u0000${op.prop.name}`, op);
      const final = [...last.values()];
      const sets: DeadProp[] = final.filter((op) => op.set).map((op) => ({ ns: op.prop.ns, name: op.prop.name, xml: serialize(op.prop) }));
      await this.s.props.update(
        r.username,
        r.path,
        sets,
        final.filter((op) => !op.set).map((op) => ({ ns: op.prop.ns, name: op.prop.name })),
      );
    }
    // every property answered: the failed with their status, the others 424 when anything failed (the update is atomic)
    const byStatus = new Map<number, string[]>();
    for (const op of ops) {
      const st = anyFailed ? (op.status ?? 424) : 200;
      byStatus.set(st, [...(byStatus.get(st) ?? []), emptyElement(op.prop.ns, op.prop.name)]);
    }
    let out = `${XML_HEAD}<D:multistatus xmlns:D="DAV:"><D:response><D:href>${esc(this.s.paths.href(r.path, info.isDir))}</D:href>`;
    for (const [st, props] of byStatus)
      out += `<D:propstat><D:prop>${props.join('')}</D:prop><D:status>HTTP/1.1 ${st} ${STATUS_TEXT[st] ?? ''}</D:status></D:propstat>`;
    out += '</D:response></D:multistatus>\n';
    r.res.statusCode = 207;
    r.res.setHeader('Content-Type', 'application/xml; charset=utf-8');
    r.res.end(out);
  }

  // ---- locks ----

  private activeLock(l: DavLock): string {
    return (
      `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${l.scope}/></D:lockscope>` +
      `<D:depth>${l.depth === 0 ? '0' : 'infinity'}</D:depth>${l.owner}` +
      `<D:timeout>Second-${Math.max(0, Math.round((l.expires - Date.now()) / 1000))}</D:timeout>` +
      `<D:locktoken><D:href>${esc(l.token)}</D:href></D:locktoken>` +
      `<D:lockroot><D:href>${esc(this.s.paths.href(l.path, false))}</D:href></D:lockroot></D:activelock>`
    );
  }

  private timeout(r: DavRequest): number {
    const max = this.s.config.max_lock_timeout;
    const h = hdr(r.req, 'timeout');
    if (!h) return Math.min(max, 600);
    for (const part of h.split(',')) {
      const v = part.trim();
      if (/^infinite$/i.test(v)) return max;
      const m = /^second-(\d+)$/i.exec(v);
      if (m) return Math.max(1, Math.min(max, Number(m[1])));
    }
    return Math.min(max, 600);
  }

  private lockAnswer(r: DavRequest, lock: DavLock, status: number): void {
    r.res.statusCode = status;
    r.res.setHeader('Content-Type', 'application/xml; charset=utf-8');
    r.res.setHeader('Lock-Token', `<${lock.token}>`);
    r.res.end(`${XML_HEAD}<D:prop xmlns:D="DAV:"><D:lockdiscovery>${this.activeLock(lock)}</D:lockdiscovery></D:prop>\n`);
  }

  private async lock(r: DavRequest): Promise<void> {
    const body = await this.xmlBody(r);
    if (!body) {
      // a refresh: the If header names the lock
      const lists = this.ifLists(r);
      if (!lists) throw new DavError(400, 'a LOCK without a body refreshes a lock: send its token in the If header');
      const tokens = submittedTokens(lists);
      const lock = (await this.s.locks.covering(r.username, r.path)).find((l) => tokens.has(l.token));
      if (!lock) throw new DavError(412, 'no lock of the If header applies to the resource', 'lock-token-matches-request-uri');
      return this.lockAnswer(r, await this.s.locks.refresh(lock, this.timeout(r)), 200);
    }
    if (body.ns !== DAV_NS || body.name !== 'lockinfo') throw new DavError(400, 'LOCK needs a DAV:lockinfo body');
    const scopeEl = davChild(body, 'lockscope');
    const scope = scopeEl && davChild(scopeEl, 'exclusive') ? 'exclusive' : scopeEl && davChild(scopeEl, 'shared') ? 'shared' : null;
    const typeEl = davChild(body, 'locktype');
    if (!scope || !typeEl || !davChild(typeEl, 'write')) throw new DavError(400, 'the lockinfo needs an exclusive or shared scope and the write type');
    const depthHeader = (hdr(r.req, 'depth') ?? 'infinity').toLowerCase();
    if (depthHeader !== '0' && depthHeader !== 'infinity') throw new DavError(400, 'LOCK takes Depth 0 or infinity');
    const depth = depthHeader === '0' ? 0 : 'infinity';
    const ownerEl = davChild(body, 'owner');
    const owner = ownerEl ? serialize(ownerEl) : '';
    if (Buffer.byteLength(owner) > 4096) throw new DavError(400, 'the lock owner is longer than 4096 bytes');
    const info = await this.statOrNull(r, r.path);
    if (!info) await this.parentMustExist(r, r.path);
    const lists = this.ifLists(r);
    if (lists && !(await this.evaluateIf(r, lists))) throw new DavError(412, 'the If header conditions are not met');
    const conflicts = await this.s.locks.conflicts(r.username, r.path, info?.isDir ? depth : 0, scope);
    if (conflicts.length) throw new DavError(423, 'the resource is locked', 'no-conflicting-lock', this.s.paths.href(conflicts[0]!.path, false));
    if (!info) {
      // LOCK of an unmapped URL creates an empty resource (RFC 4918 section 7.3)
      await this.checkWrite(r, { paths: [], members: [parentOf(r.path)] });
      const w = await r.files.openWrite(r.path, { signal: r.signal, size: 0 });
      const empty = new PassThrough();
      empty.end();
      await pipeline(empty, w.stream);
      await w.done;
    }
    const lock = await this.s.locks.create({ username: r.username, path: r.path, depth: info?.isDir ? depth : 0, scope, owner, timeout: this.timeout(r) });
    this.lockAnswer(r, lock, info ? 200 : 201);
  }

  private async unlock(r: DavRequest): Promise<void> {
    const h = hdr(r.req, 'lock-token');
    const token = h ? /^\s*<([^>]+)>\s*$/.exec(h)?.[1] : undefined;
    if (!token) throw new DavError(400, 'the Lock-Token header is missing or malformed');
    const lock = await this.s.locks.get(token);
    if (!lock || lock.username !== r.username || coveringIn([lock], r.path).length === 0) {
      throw new DavError(409, 'no such lock on the resource', 'lock-token-matches-request-uri');
    }
    await this.s.locks.remove(token);
    r.res.statusCode = 204;
    r.res.end();
  }
}

const LIVE_PROPS = [
  'resourcetype',
  'getetag',
  'getlastmodified',
  'creationdate',
  'displayname',
  'getcontentlength',
  'getcontenttype',
  'supportedlock',
  'lockdiscovery',
  'quota-used-bytes',
  'quota-available-bytes',
];
/** allprop: the live properties of RFC 4918 (not the quota ones, RFC 4331 section 3). */
const ALLPROP_WANTED = LIVE_PROPS.filter((n) => !n.startsWith('quota-')).map((name) => ({ ns: DAV_NS, name }));

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 403: 'Forbidden', 409: 'Conflict', 424: 'Failed Dependency', 507: 'Insufficient Storage' };

/** A collection's listing: its first page, read, and the rest to come. */
interface Listing {
  first: IteratorResult<FileInfo[]>;
  pages: AsyncIterator<FileInfo[]>;
}

/** What each response of a PROPFIND needs: the query, the account's locks, the dead properties of the paths at hand. */
interface PropContext {
  query: PropQuery;
  /** The properties asked for (allprop: the live ones and those included). */
  wanted: { ns: string; name: string }[];
  /** Whether a quota property is asked for (its figures are then read per response). */
  quota: boolean;
  locks: DavLock[];
  dead: Map<string, DeadProp[]>;
}

/** Dead properties of a collection's members read in one query at most; past that, page by page. */
const DEAD_PROPS_AT_ONCE = 5000;

const SUPPORTED_LOCK =
  '<D:supportedlock>' +
  '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>' +
  '<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>' +
  '</D:supportedlock>';

type PropQuery = { kind: 'allprop'; include?: { ns: string; name: string }[] } | { kind: 'propname' } | { kind: 'prop'; props: { ns: string; name: string }[] };

function propQuery(body: XmlElement | null): PropQuery {
  if (!body) return { kind: 'allprop' };
  if (body.ns !== DAV_NS || body.name !== 'propfind') throw new DavError(400, 'PROPFIND needs a DAV:propfind body');
  if (davChild(body, 'propname')) return { kind: 'propname' };
  const prop = davChild(body, 'prop');
  if (prop) return { kind: 'prop', props: elements(prop).map((e) => ({ ns: e.ns, name: e.name })) };
  if (davChild(body, 'allprop')) {
    const include = davChild(body, 'include');
    return { kind: 'allprop', ...(include ? { include: elements(include).map((e) => ({ ns: e.ns, name: e.name })) } : {}) };
  }
  throw new DavError(400, 'the propfind needs allprop, propname or prop');
}

const emptyElement = (ns: string, name: string) => (ns === DAV_NS ? `<D:${name}/>` : ns === '' ? `<${name} xmlns=""/>` : `<R:${name} xmlns:R="${esc(ns)}"/>`);

/** Writes and waits while the client reads slower than the listing comes. */
/** Characters of PROPFIND responses gathered before a write to the client. */
const PROPFIND_WRITE_BYTES = 64 * 1024;

function write(res: ServerResponse, chunk: string): Promise<void> {
  if (res.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      res.off('drain', ok);
      res.off('close', closed);
      if (err) reject(err);
      else resolve();
    };
    const ok = () => done();
    const closed = () => done(new FsError(FsErrorCode.Aborted, 'the client went away'));
    res.once('drain', ok);
    res.once('close', closed);
  });
}

const matchesAny = (header: string, etag: string) =>
  header
    .split(',')
    .map((s) => s.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === etag);

/** GET/HEAD conditions (RFC 9110 section 13.2.2): 412, 304 or null to go on. */
function conditional(req: IncomingMessage, etag: string, lastModified: Date): 412 | 304 | null {
  const im = req.headers['if-match'];
  if (im && !matchesAny(im, etag)) return 412;
  const ius = req.headers['if-unmodified-since'];
  if (!im && ius && !Number.isNaN(Date.parse(ius)) && lastModified.getTime() > Date.parse(ius)) return 412;
  const inm = req.headers['if-none-match'];
  if (inm) return matchesAny(inm, etag) ? 304 : null;
  const ims = req.headers['if-modified-since'];
  if (ims && !Number.isNaN(Date.parse(ims)) && lastModified.getTime() <= Date.parse(ims)) return 304;
  return null;
}

/** PUT conditions: the reason of a 412, or null. */
function writeConditions(req: IncomingMessage, etag: string | null): string | null {
  const im = req.headers['if-match'];
  if (im && (etag === null || !matchesAny(im, etag))) return 'If-Match does not match the file';
  const inm = req.headers['if-none-match'];
  if (inm && etag !== null && matchesAny(inm, etag)) return 'If-None-Match matches the file';
  return null;
}

/** One byte range of a Range header; null for none (or several: the whole file is sent). */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  if (end < start) return null;
  return { start, end };
}
