import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { definePlugin, packageInfo } from '@ferry/core';
import Joi from 'joi';

const pkg = packageInfo(import.meta.url);

/** Where the build (scripts/build.mjs) leaves the site: index.html, assets/ and their .br/.gz variants. */
export const SITE_DIR = path.join(pkg.dir, 'www');
export const SITE_PREFIX = '/web/client';
/** The web admin's site (the same build: app/admin/), and where it is served. */
export const ADMIN_SITE_DIR = path.join(pkg.dir, 'www-admin');
export const ADMIN_SITE_PREFIX = '/web/admin';

/**
 * The site's Content-Security-Policy: its own scripts, styles and API only, no inline script or
 * style, no plugin, not framed by any page. Images may be blob: URLs (previews of the user's own
 * files); frames show pages of its own origin only (the preview's PDF, which the API lets this
 * origin frame).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface WebClientConfig {
  /** Absolute directory of the built site; empty or absent: the package's www/. */
  site_dir?: string;
  /** Absolute directory of the built web admin; empty or absent: the package's www-admin/. */
  admin_site_dir?: string;
}

export const configSchema = Joi.object({ site_dir: Joi.string().allow(''), admin_site_dir: Joi.string().allow('') });

const SITE_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

/** The page a browser of a host the defender bans gets for a page of the web client (scripts/build.mjs writes it). */
export const REFUSAL_PAGE = 'blocked.html';

/**
 * The headers of the refusal page of `root` (null when it is not built): nothing but its own inline
 * style, allowed by its hash (the site's assets are refused to a banned host: the page holds its style).
 */
export function refusalPageHeaders(root: string): Record<string, string> | null {
  let html: string;
  try {
    html = readFileSync(path.join(root, REFUSAL_PAGE), 'utf8');
  } catch {
    return null;
  }
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
  return {
    ...SITE_HEADERS,
    'content-security-policy': [
      "default-src 'none'",
      `style-src ${styles.join(' ') || "'none'"}`,
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  };
}

/** The web client and the web admin: their built files under /web/client/ and /web/admin/ on the REST API's bindings (see README.md). */
export default definePlugin<WebClientConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema,
  register(ctx, config) {
    const sites = [
      { name: 'web client', prefix: SITE_PREFIX, root: path.resolve(config.site_dir || SITE_DIR) },
      { name: 'web admin', prefix: ADMIN_SITE_PREFIX, root: path.resolve(config.admin_site_dir || ADMIN_SITE_DIR) },
    ];
    for (const site of sites) {
      if (!existsSync(path.join(site.root, 'index.html'))) {
        ctx.logger.warn({ root: site.root }, `the ${site.name} is not built (npm run build): ${site.prefix}/ answers 404`);
      }
      const refusalHeaders = site.prefix === SITE_PREFIX ? refusalPageHeaders(site.root) : null;
      ctx.registerStaticSite({
        prefix: site.prefix,
        root: site.root,
        index: 'index.html',
        fallback: 'index.html',
        immutable: ['assets/'],
        headers: SITE_HEADERS,
        ...(refusalHeaders ? { refusalPage: { file: REFUSAL_PAGE, headers: refusalHeaders } } : {}),
      });
    }
  },
});
