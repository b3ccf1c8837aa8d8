/**
 * Static sites a plugin serves on the REST API's HTTP bindings
 * (`PluginContext.registerStaticSite()`): built files of a browser
 * application, for example the web client (plugins/web-client).
 *
 * What the core does with one (core/src/http/static-site.ts), for GET and
 * HEAD under `prefix` on every binding with `enable_rest_api` on (404 on the
 * others):
 * - `<prefix>` answers a redirect to `<prefix>/` (the query kept); `<prefix>/`
 *   answers `index` (default index.html);
 * - a file of `root` is answered with its type; `..`, `.` and empty segments,
 *   NUL and backslashes are refused (404): nothing outside `root` is served;
 * - a request that accepts brotli or gzip gets `<file>.br` or `<file>.gz`
 *   when the build left one next to the file (precompressed: no work per
 *   request), with `Vary: Accept-Encoding`;
 * - files under one of the `immutable` prefixes (names that carry a hash of
 *   their content) are cached for a year (`public, max-age=31536000,
 *   immutable`), every other file is `no-cache` with an ETag (a 304 when it
 *   has not changed);
 * - a path with no file whose last segment has no dot (a client route of a
 *   single-page app) answers `fallback` when set, otherwise 404;
 * - `headers` are added to every answer (a Content-Security-Policy...);
 * - `refusalPage`: a browser asking for a page of the site (GET, Accept
 *   text/html) from a host the defender bans gets this file with status 403
 *   instead of the API's JSON refusal.
 *
 * A leaf module: no import of the core.
 */

/** A static site: `PluginContext.registerStaticSite(def)`. */
export interface StaticSiteDef {
  /** URL path the site lives under, without a trailing slash, e.g. '/web/client'; not under /api or /openapi. */
  prefix: string;
  /** Absolute directory whose files are served. */
  root: string;
  /** The file answered for `<prefix>/` (relative to root). Default 'index.html'. */
  index?: string;
  /** The file answered for a client route (a path with no file and no dot in its last segment), relative to root. */
  fallback?: string;
  /** Path prefixes (relative to root, '/'-separated, e.g. 'assets/') of files cached for a year. */
  immutable?: string[];
  /** Headers added to every answer of the site (never to the API's). */
  headers?: Record<string, string>;
  /**
   * What a browser gets, instead of the JSON refusal, when it asks for a page of the site (GET
   * with Accept text/html) from a host banned by the defender: `file` (relative to root),
   * status 403, `headers` instead of the site's. The site's scripts and stylesheets are refused
   * to that host too: the page holds what it shows (its style inline, allowed by its headers' CSP).
   */
  refusalPage?: { file: string; headers?: Record<string, string> };
}
