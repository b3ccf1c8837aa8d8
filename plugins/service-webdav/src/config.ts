import Joi from 'joi';

/** CORS for browser clients: the origins allowed to call the server from their pages. */
export interface CorsConfig {
  /** Exact origins (`https://app.example.com`); empty: no CORS header is ever sent. */
  allowed_origins: string[];
  /** Let those pages send credentials (Authorization, cookies): Access-Control-Allow-Credentials. */
  allow_credentials: boolean;
  /** Seconds a browser may keep a preflight answer (0: not sent). */
  max_age: number;
}

/** One address the WebDAV server listens on (port 0: any free port, shown by /status). */
export interface WebdavBinding {
  address: string;
  port: number;
  /** Serve HTTPS with certificate_file/certificate_key_file (reloaded when they change, as core's HTTPS bindings: docs/https.md). */
  tls: boolean;
  /** PEM certificate (chain) and key; relative paths are resolved against the configuration file's directory. */
  certificate_file: string;
  certificate_key_file: string;
  /** 12 (TLS 1.2) or 13. */
  min_tls_version: 12 | 13;
  /** OpenSSL cipher suite names; empty: Node's defaults. */
  tls_cipher_suites: string[];
}

export interface WebdavConfig {
  bindings: WebdavBinding[];
  /** The URL path the users' trees are served under ('/' or '/dav'...): requests elsewhere are 404. */
  prefix: string;
  /** Seconds a verified login is reused without asking the login service again (0: every request logs in). */
  login_cache_ttl: number;
  /** Answer PROPFIND with Depth: infinity (streamed); refused with 403 propfind-finite-depth when false. */
  allow_depth_infinity: boolean;
  /** Largest XML request body (PROPFIND, PROPPATCH, LOCK), in bytes: larger is 413. */
  max_xml_size: number;
  /** Deepest element nesting accepted in an XML body: deeper is 400. */
  max_xml_depth: number;
  /** Longest lock timeout granted, in seconds (a client asking for more or for Infinite gets this). */
  max_lock_timeout: number;
  /** Extra MIME types by file extension (without the dot), over the built-in table. */
  mime_types: Record<string, string>;
  /** Accept Basic credentials over plain HTTP from clients that are not on a loopback address (else 403). */
  allow_insecure_basic: boolean;
  /** CORS for browser clients (src/cors.ts). */
  cors: CorsConfig;
  /** Users' public shares served read-only (src/shares.ts, docs/webdav.md). */
  public_shares: PublicSharesConfig;
}

/** Public shares over WebDAV: `<prefix>/<share id>/...`, read-only, with the share's password as Basic credentials. */
export interface PublicSharesConfig {
  enabled: boolean;
  /** URL path the shares are served under; checked before the users' trees (it hides a user folder of that path). */
  prefix: string;
}

/** A TLS file: required when the binding sets `tls`. */
const tlsFile = Joi.string()
  .allow('')
  .default('')
  .when('tls', { is: true, then: Joi.string().trim().invalid('').required().messages({ 'any.invalid': '{{#label}} is required when tls is true' }) });

export const configSchema = Joi.object<WebdavConfig>({
  bindings: Joi.array()
    .items(
      Joi.object({
        address: Joi.string().default('127.0.0.1'),
        port: Joi.number().integer().min(0).max(65535).default(8090),
        tls: Joi.boolean().default(false),
        certificate_file: tlsFile,
        certificate_key_file: tlsFile,
        min_tls_version: Joi.number().valid(12, 13).default(12),
        tls_cipher_suites: Joi.array().items(Joi.string().trim().min(1)).default([]),
      }),
    )
    .min(1)
    .default([{ address: '127.0.0.1', port: 8090 }]),
  prefix: Joi.string()
    .pattern(/^\/([A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*)?$/)
    .default('/'),
  login_cache_ttl: Joi.number().integer().min(0).max(3600).default(60),
  allow_depth_infinity: Joi.boolean().default(false),
  max_xml_size: Joi.number()
    .integer()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  max_xml_depth: Joi.number().integer().min(4).max(1000).default(64),
  max_lock_timeout: Joi.number().integer().min(1).default(3600),
  mime_types: Joi.object()
    .pattern(/^[A-Za-z0-9._+-]+$/, Joi.string().pattern(/^[\w.+-]+\/[\w.+-]+$/))
    .default({}),
  allow_insecure_basic: Joi.boolean().default(false),
  cors: Joi.object({
    allowed_origins: Joi.array()
      .items(
        Joi.string()
          .uri({ scheme: ['http', 'https'] })
          .pattern(/^[a-z]+:\/\/[^/]+$/i, 'origin (scheme://host[:port], no path)'),
      )
      .default([]),
    allow_credentials: Joi.boolean().default(false),
    max_age: Joi.number().integer().min(0).max(86400).default(0),
  }).default(),
  public_shares: Joi.object({
    enabled: Joi.boolean().default(false),
    prefix: Joi.string()
      .pattern(/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/)
      .default('/shares'),
  }).default(),
});
