/**
 * Serves a plugin's static site (sdk/static-site.ts, registered with
 * `PluginContext.registerStaticSite()`): GET and HEAD under its prefix on the
 * bindings serving the REST API. Files are streamed from the site's root;
 * precompressed `.br`/`.gz` variants are preferred when the client accepts
 * them; hashed files are cached for a year, the others revalidated (ETag).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import Boom from '@hapi/boom';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { HttpBinding } from '../config/schema.js';
import type { StaticSiteDef } from '../sdk/static-site.js';
import type { RefusalPage } from './defender-hooks.js';
import type { RouteFactory } from './server.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const YEAR = 'public, max-age=31536000, immutable';

/** The encodings of an Accept-Encoding header with a q above 0, lower-cased. */
export function acceptedEncodings(header: string | undefined): Set<string> {
  const out = new Set<string>();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    out.add(name);
  }
  return out;
}

/** The root-relative path of a request's path parameter, or null when it may not be served (.., ., empty segments, NUL, backslash). */
export function siteRelativePath(param: string): string | null {
  if (param === '') return '';
  if (param.includes('\0') || param.includes('\\')) return null;
  const segments = param.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return segments.join('/');
}

async function fileStat(file: string) {
  try {
    const s = await stat(file);
    return s.isFile() ? s : null;
  } catch {
    return null;
  }
}

/** True when the request is a browser's for a page: GET (or HEAD) with Accept naming text/html. */
function wantsPage(request: Request): boolean {
  const accept = request.headers.accept;
  return (request.method === 'get' || request.method === 'head') && typeof accept === 'string' && /\btext\/html\b/i.test(accept);
}

/**
 * The refusal page of the static site a request is for (StaticSiteDef.refusalPage), answered with
 * 403 to a browser's page request; null for any other request (an API call, an asset, a site
 * without one, a page file missing from its root): it gets the JSON refusal.
 */
export function refusalPages(defs: readonly StaticSiteDef[]): RefusalPage {
  const sites = defs.filter((d) => d.refusalPage);
  return async (request, h) => {
    if (!sites.length || !wantsPage(request)) return null;
    const def = sites.find((d) => request.path === d.prefix || request.path.startsWith(`${d.prefix}/`));
    if (!def?.refusalPage) return null;
    const file = path.join(path.resolve(def.root), ...def.refusalPage.file.split('/'));
    const st = await fileStat(file);
    if (!st) return null;
    const r = h
      .response(request.method === 'head' ? '' : createReadStream(file))
      .code(403)
      .type('text/html; charset=utf-8')
      .header('content-length', String(st.size))
      .header('cache-control', 'no-store');
    for (const [k, v] of Object.entries(def.refusalPage.headers ?? def.headers ?? {})) r.header(k, v);
    return r;
  };
}

/** The routes of one static site (one per site, whatever its binding). */
export function staticSiteRoutes(def: StaticSiteDef): RouteFactory {
  const root = path.resolve(def.root);
  const index = def.index ?? 'index.html';
  const immutable = def.immutable ?? [];
  const siteHeaders = Object.entries(def.headers ?? {});

  const send = async (request: Request, h: ResponseToolkit, rel: string) => {
    const file = path.join(root, ...rel.split('/'));
    if (file !== root && !file.startsWith(root + path.sep)) return null;
    const st = await fileStat(file);
    if (!st) return null;
    const type = TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
    const cached = immutable.some((p) => rel.startsWith(p));
    const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
    const accepted = acceptedEncodings(request.headers['accept-encoding'] as string | undefined);
    let body = file;
    let size = st.size;
    let encoding: string | undefined;
    for (const [name, ext] of [
      ['br', '.br'],
      ['gzip', '.gz'],
    ] as const) {
      if (!accepted.has(name)) continue;
      const variant = await fileStat(file + ext);
      if (variant) {
        body = file + ext;
        size = variant.size;
        encoding = name;
        break;
      }
    }
    const decorate = (r: ReturnType<ResponseToolkit['response']>) => {
      r.header('cache-control', cached ? YEAR : 'no-cache');
      r.header('vary', 'accept-encoding');
      for (const [k, v] of siteHeaders) r.header(k, v);
      return r;
    };
    if (!cached && request.headers['if-none-match'] === etag) {
      return decorate(h.response().code(304).header('etag', etag));
    }
    const r = h
      .response(request.method === 'head' ? '' : createReadStream(body))
      .type(type)
      .header('content-length', String(size))
      .header('etag', etag);
    // already compressed: hapi sets Content-Encoding and compresses no further
    if (encoding) r.compressed(encoding);
    return decorate(r);
  };

  return (): ServerRoute[] => [
    {
      method: 'GET',
      path: `${def.prefix}/{path*}`,
      options: {
        auth: false,
        description: `Static files of a plugin's browser application under ${def.prefix}/`,
        plugins: { ferry: { responses: { 200: { description: 'the file' } } } },
      },
      handler: async (request, h) => {
        const binding = (request.server.settings.app as { binding?: HttpBinding } | undefined)?.binding;
        if (binding && !binding.enable_rest_api) throw Boom.notFound('the REST API is disabled on this binding (httpd.bindings[].enable_rest_api)');
        const param = (request.params as { path?: string }).path ?? '';
        if (param === '') {
          // hapi strips a trailing slash before routing: the raw URL tells /prefix from /prefix/
          const raw = request.raw.req.url ?? '';
          const rawPath = raw.split('?')[0] ?? '';
          if (!rawPath.endsWith('/')) {
            const query = raw.includes('?') ? raw.slice(raw.indexOf('?')) : '';
            return h.redirect(`${def.prefix}/${query}`).code(301);
          }
          return (await send(request, h, index)) ?? Boom.notFound('the site has no index file (is it built?)');
        }
        const rel = siteRelativePath(param);
        if (rel === null) throw Boom.notFound('no such file');
        const found = await send(request, h, rel);
        if (found) return found;
        const last = rel.slice(rel.lastIndexOf('/') + 1);
        if (def.fallback && !last.includes('.')) {
          const page = await send(request, h, def.fallback);
          if (page) return page;
        }
        throw Boom.notFound('no such file');
      },
    },
  ];
}
