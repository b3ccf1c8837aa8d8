import { getCiphers } from 'node:tls';
import Joi from 'joi';
import { oidcBindingSchema, type OidcBindingConfig } from './oidc.schema.js';

/** Validated server configuration. Keys are snake_case, one section per subsystem. */
export interface FerryConfig {
  common: {
    data_dir: string;
    instance_id: string;
    /** Base URL the other nodes of a cluster reach this node's REST API at (empty: its first REST binding). */
    node_url: string;
    temp_dir: string;
    /** Directory every node of a cluster sees (resumable share uploads); empty: temp_dir, uploads stay on their node. */
    shared_dir: string;
    backups_dir: string;
    /** 0: write uploads in place; 1: atomic (temporary file, renamed when complete). */
    upload_mode: 0 | 1;
    max_total_transfers: number;
    max_per_host_transfers: number;
    /** Only addresses on the allow list (IP list type 1) may connect. */
    allow_list_status: boolean;
    /** Seconds between checks of the IP lists' version in the database (other nodes' changes apply within this delay). */
    ip_lists_cache_ttl: number;
    /** `ferry serve`: V8 old-generation growing factor as 1 + percent/100 after a full GC; 0 leaves V8's heuristics. */
    heap_growing_percent: number;
    /** Seconds a stopping node lets HTTP requests and service plugins' connections finish before closing them. */
    shutdown_grace_period: number;
  };
  log: { level: string; file: string };
  data_provider: {
    driver: 'sqlite' | 'postgresql';
    /** SQLite file (relative to data_dir) or ':memory:'. */
    name: string;
    /** PostgreSQL connection URL. */
    url: string;
    pool_size: number;
    create_default_admin: boolean;
  };
  httpd: {
    bindings: HttpBinding[];
    token_lifetime: number;
    signing_passphrase: string;
    max_request_size: number;
    /** Most files one multipart upload request may carry (file parts); a request with more is refused whole (413). */
    max_multipart_files: number;
    /** PEM files of the certificate authorities client certificates must chain to (bindings with client_auth_type 1). */
    ca_certificates: string[];
    /** Browser sessions of POST /api/v2/user/web-session (http/web-session.ts): seconds. */
    web_session: { idle_timeout: number; max_lifetime: number };
  };
  kms: { master_key: string };
  plugins: PluginEntry[];
  hook: { enabled_action_commands: string[] };
  defaults: { admin_username: string; admin_password: string };
  /** Event manager queue, rule cache, recorder and scheduler (see docs/event-manager.md). */
  event_manager: {
    concurrency: number;
    max_pending: number;
    rules_cache_ttl: number;
    recorder_size: number;
    /** Estimated bytes the recorder may hold per kind (0 disables it). */
    recorder_max_bytes: number;
    scheduler: boolean;
  };
  /** Mail server for notifications (services/mailer.ts); empty host disables mail. */
  smtp: {
    host: string;
    port: number;
    from: string;
    user: string;
    password: string;
    auth_type: 0 | 1 | 2;
    encryption: 0 | 1 | 2;
    domain: string;
    skip_tls_verify: boolean;
  };
  /** Two-factor authentication: the TOTP configurations accounts choose from (auth/two-factor.service.ts, docs/two-factor.md). */
  mfa: { totp: TotpConfigEntry[] };
  /** Forgot/reset password by mailed code (auth/password-reset.service.ts, docs/two-factor.md). */
  password_reset: PasswordResetConfig;
  /** Password strength of admins (users have filters.password_strength): accounts/admin.service.ts, docs/accounts.md. */
  admin_password_policy: AdminPasswordPolicyConfig;
  /** Bans hosts that keep failing to authenticate (services/defender.service.ts, docs/defender.md). Times in minutes. */
  defender: DefenderConfig;
  /** Token-bucket rate limits per request scope (security/rate-limiter.service.ts, docs/rate-limits.md). */
  rate_limit: RateLimitConfig;
  /** Caches that spare repeated password hashing (shares, TUS chunks, token requests). */
  auth_cache: AuthCacheConfig;
  /** One-time codes of email-restricted shares (shares/share-codes.service.ts, docs/shares.md). */
  share_codes: ShareCodesConfig;
}

/** Requests a rate limit applies to: the REST API, the token routes, the public share routes and TUS uploads. */
export type RateLimitScope = 'api' | 'token' | 'shares' | 'tus';

/** One token bucket: `average` requests per `period` ms, at most `burst` at once (0: the average). average 0: off. */
export interface RateLimitBucketConfig {
  average: number;
  period: number;
  burst: number;
  /** Per-host limiters only: a refused request adds defender.score_limit_exceeded to the host. */
  add_to_defender: boolean;
}

export interface RateLimitScopeConfig {
  global: RateLimitBucketConfig;
  per_host: RateLimitBucketConfig;
}

export interface RateLimitConfig extends Record<RateLimitScope, RateLimitScopeConfig> {
  /** Hosts remembered per scope by the per-host limiters (least recently seen forgotten first). */
  max_hosts: number;
}

export interface ShareCodesConfig {
  /** Minutes a mailed code stays valid. */
  code_lifetime: number;
  /** Live codes per share and address; further requests mail nothing. */
  max_codes: number;
  /** Wrong codes tried for an address before its live codes are void. */
  max_attempts: number;
}

export interface AuthCacheConfig {
  /** Seconds a verified share password (or basic-auth login) is trusted without hashing it again; 0: off. */
  ttl: number;
  /** Entries kept (least recently used dropped first). */
  max_entries: number;
}

/** A TOTP configuration (reference.yaml TOTPConfig): the issuer shown by authenticator apps and the HMAC algorithm. */
export interface TotpConfigEntry {
  name: string;
  issuer: string;
  algo: 'sha1' | 'sha256' | 'sha512';
}

export interface AdminPasswordPolicyConfig {
  /** Minimum estimated entropy in bits of an admin password (accounts/password-policy.ts); 0: no minimum. */
  min_entropy: number;
}

export interface PasswordResetConfig {
  /** Minutes a mailed code stays valid. */
  code_lifetime: number;
  /** Codes mailed to one account within `window` minutes; further requests mail nothing. */
  max_codes_per_account: number;
  /** Forgot-password requests one source host may make within `window` minutes (429 beyond). */
  max_requests_per_host: number;
  window: number;
  /** Wrong codes tried against an account before its pending codes are invalidated. */
  max_attempts: number;
}

export interface DefenderConfig {
  enabled: boolean;
  /** Minutes a host stays banned. */
  ban_time: number;
  /** Percent of ban_time added to a ban each time the banned host tries again. */
  ban_time_increment: number;
  /** Score within observation_time that bans a host. */
  threshold: number;
  /** Failed login for an account that does not exist (or an unknown API key, a forged token). */
  score_invalid: number;
  /** Failed login for an existing account (wrong password or 2FA code, refused account). */
  score_valid: number;
  /** A limit refused the request (429). */
  score_limit_exceeded: number;
  /** A token request without any credentials. */
  score_no_auth: number;
  /** Minutes over which a host's scores add up. */
  observation_time: number;
  /** Hosts kept: beyond entries_hard_limit the oldest are forgotten down to entries_soft_limit. */
  entries_soft_limit: number;
  entries_hard_limit: number;
}

export interface HttpBinding {
  address: string;
  port: number;
  enable_rest_api: boolean;
  enable_api_key_auth: boolean;
  upload_chunk_size: number;
  client_ip_proxy_header: string;
  proxy_allowed: string[];
  /** OpenID Connect login (docs/oidc.md); off while oidc.config_url is empty. */
  oidc: OidcBindingConfig;
  /** Serve HTTPS with certificate_file/certificate_key_file (reloaded when they change, see docs/https.md). */
  enable_https: boolean;
  /** PEM certificate (chain) and private key; relative paths are resolved against the config file's directory. */
  certificate_file: string;
  certificate_key_file: string;
  /** Minimum TLS version: 12 (TLS 1.2) or 13 (TLS 1.3). */
  min_tls_version: 12 | 13;
  /** OpenSSL cipher suite names (TLS 1.2) and TLS 1.3 suite names; empty: Node's defaults. */
  tls_cipher_suites: string[];
  /** 0: no client certificate; 1: require a client certificate signed by one of httpd.ca_certificates. */
  client_auth_type: 0 | 1;
  /** Serve Prometheus metrics at /metrics on this binding (docs/operations.md). */
  enable_metrics: boolean;
  /** HTTP basic credentials /metrics requires when either is set. */
  metrics_username: string;
  metrics_password: string;
}

export interface PluginEntry {
  /** npm package name. */
  name: string;
  /** Folder of a package that is not installed under node_modules (relative to the config file). */
  path?: string;
  enabled: boolean;
  config: Record<string, unknown>;
}

const csv = Joi.array().items(Joi.string().trim().min(1));

/** A binding's TLS file: required (non-empty) when the binding enables HTTPS. */
const tlsFile = Joi.string()
  .allow('')
  .default('')
  .when('enable_https', {
    is: true,
    then: Joi.string().trim().invalid('').required().messages({
      'any.required': '{{#label}} is required when enable_https is true',
      'any.invalid': '{{#label}} is required when enable_https is true',
      'string.empty': '{{#label}} is required when enable_https is true',
    }),
  });
const tlsCipherNames = new Set(getCiphers());

const binding = Joi.object<HttpBinding>({
  address: Joi.string().default('127.0.0.1'),
  port: Joi.number().integer().min(0).max(65535).default(8080),
  enable_rest_api: Joi.boolean().default(true),
  enable_api_key_auth: Joi.boolean().default(true),
  upload_chunk_size: Joi.number().integer().min(0).default(0),
  client_ip_proxy_header: Joi.string().allow('').default(''),
  proxy_allowed: csv.default([]),
  oidc: oidcBindingSchema,
  enable_https: Joi.boolean().default(false),
  certificate_file: tlsFile,
  certificate_key_file: tlsFile,
  min_tls_version: Joi.number().valid(12, 13).default(12),
  tls_cipher_suites: Joi.array()
    .items(
      Joi.string()
        .trim()
        .custom((v: string, h) => (tlsCipherNames.has(v.toLowerCase()) ? v : h.error('any.invalid')))
        .messages({ 'any.invalid': '{{#label}} is not a cipher suite this server supports' }),
    )
    .default([]),
  client_auth_type: Joi.number().valid(0, 1).default(0),
  enable_metrics: Joi.boolean().default(false),
  metrics_username: Joi.string().allow('').default(''),
  metrics_password: Joi.string().allow('').default(''),
}).custom((b: HttpBinding, h) => {
  if (b.client_auth_type === 1 && !b.enable_https) return h.message({ custom: '{{#label}}: client_auth_type 1 needs enable_https' });
  return b;
});

const rateBucket = Joi.object<RateLimitBucketConfig>({
  average: Joi.number().min(0).max(1_000_000).default(0),
  period: Joi.number().integer().min(1).max(86_400_000).default(1000),
  burst: Joi.number().integer().min(0).max(1_000_000).default(0),
  add_to_defender: Joi.boolean().default(false),
}).default();
const rateScope = Joi.object<RateLimitScopeConfig>({ global: rateBucket, per_host: rateBucket }).default();

export const configSchema = Joi.object<FerryConfig>({
  common: Joi.object({
    data_dir: Joi.string().default('data'),
    instance_id: Joi.string().allow('').default(''),
    node_url: Joi.string()
      .uri({ scheme: ['http', 'https'] })
      .allow('')
      .default(''),
    temp_dir: Joi.string().allow('').default(''),
    shared_dir: Joi.string().allow('').default(''),
    backups_dir: Joi.string().allow('').default(''),
    upload_mode: Joi.number().valid(0, 1).default(1),
    max_total_transfers: Joi.number().integer().min(0).default(0),
    max_per_host_transfers: Joi.number().integer().min(0).default(20),
    allow_list_status: Joi.boolean().default(false),
    ip_lists_cache_ttl: Joi.number().integer().min(0).max(3600).default(5),
    heap_growing_percent: Joi.number().integer().min(0).max(400).default(100),
    shutdown_grace_period: Joi.number().min(0).max(3600).default(5),
  }).default(),
  log: Joi.object({
    level: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
    file: Joi.string().allow('').default(''),
  }).default(),
  data_provider: Joi.object({
    driver: Joi.string().valid('sqlite', 'postgresql').default('sqlite'),
    name: Joi.string().default('ferry.db'),
    url: Joi.string().allow('').default(''),
    pool_size: Joi.number().integer().min(0).default(0),
    create_default_admin: Joi.boolean().default(true),
  })
    .default()
    .custom((v, h) => {
      if (v.driver === 'postgresql' && !/^postgres(ql)?:\/\//.test(v.url)) {
        return h.message({ custom: '"data_provider.url" must be a postgresql:// URL when the driver is postgresql' });
      }
      // the URL is parsed as a URL when the database is opened: refused here, naming the key (never its value: it may hold a password)
      if (v.driver === 'postgresql' && !URL.canParse(v.url)) {
        return h.message({
          custom:
            '"data_provider.url" is not a valid URL (a Unix socket is written postgresql://user@localhost/dbname?host=/var/run/postgresql: libpq\'s form with no host after the user is not a URL)',
        });
      }
      return v;
    }),
  httpd: Joi.object({
    bindings: Joi.array().items(binding).default([{}]),
    token_lifetime: Joi.number().integer().min(1).max(1440).default(20),
    signing_passphrase: Joi.string().allow('').default(''),
    max_request_size: Joi.number().integer().min(1024).default(1048576),
    max_multipart_files: Joi.number().integer().min(1).max(100_000).default(1000),
    ca_certificates: csv.default([]),
    web_session: Joi.object({
      // seconds: a session unused this long ends; none lives longer than max_lifetime whatever its use
      idle_timeout: Joi.number().integer().min(1).max(86_400).default(1800),
      max_lifetime: Joi.number().integer().min(1).max(2_592_000).default(43_200),
    }).default(),
  })
    .default()
    .custom((v: FerryConfig['httpd'], h) => {
      const i = v.bindings.findIndex((b) => b.client_auth_type === 1);
      if (i >= 0 && !v.ca_certificates.length) {
        return h.message({ custom: `"httpd.ca_certificates" must list a CA file: httpd.bindings.${i} has client_auth_type 1` });
      }
      return v;
    }),
  kms: Joi.object({ master_key: Joi.string().allow('').default('') }).default(),
  plugins: Joi.array()
    .items(
      Joi.object({
        name: Joi.string().required(),
        path: Joi.string(),
        enabled: Joi.boolean().default(true),
        config: Joi.object().unknown(true).default({}),
      }),
    )
    .default([]),
  hook: Joi.object({ enabled_action_commands: csv.default([]) }).default(),
  defaults: Joi.object({
    admin_username: Joi.string().allow('').default(''),
    admin_password: Joi.string().allow('').default(''),
  }).default(),
  event_manager: Joi.object({
    concurrency: Joi.number().integer().min(1).max(256).default(4),
    max_pending: Joi.number().integer().min(0).default(1000),
    rules_cache_ttl: Joi.number().integer().min(0).max(3600).default(10),
    recorder_size: Joi.number().integer().min(0).max(1_000_000).default(10000),
    recorder_max_bytes: Joi.number()
      .integer()
      .min(0)
      .default(16 * 1024 * 1024),
    scheduler: Joi.boolean().default(true),
  }).default(),
  smtp: Joi.object({
    host: Joi.string().allow('').default(''),
    port: Joi.number().integer().min(1).max(65535).default(25),
    from: Joi.string().allow('').default(''),
    user: Joi.string().allow('').default(''),
    password: Joi.string().allow('').default(''),
    auth_type: Joi.number().valid(0, 1, 2).default(0),
    encryption: Joi.number().valid(0, 1, 2).default(0),
    domain: Joi.string().allow('').default(''),
    skip_tls_verify: Joi.boolean().default(false),
  }).default(),
  mfa: Joi.object({
    totp: Joi.array()
      .items(
        Joi.object<TotpConfigEntry>({
          name: Joi.string().trim().min(1).max(255).required(),
          issuer: Joi.string().trim().min(1).max(255).required(),
          algo: Joi.string().lowercase().valid('sha1', 'sha256', 'sha512').default('sha1'),
        }),
      )
      .unique('name')
      .default([{ name: 'Default', issuer: 'Ferry', algo: 'sha1' }]),
  }).default(),
  password_reset: Joi.object<PasswordResetConfig>({
    code_lifetime: Joi.number().integer().min(1).max(1440).default(15),
    max_codes_per_account: Joi.number().integer().min(1).max(100).default(3),
    max_requests_per_host: Joi.number().integer().min(1).max(100_000).default(20),
    window: Joi.number().integer().min(1).max(1440).default(60),
    max_attempts: Joi.number().integer().min(1).max(100).default(5),
  }).default(),
  admin_password_policy: Joi.object<AdminPasswordPolicyConfig>({
    min_entropy: Joi.number().integer().min(0).max(100).default(0),
  }).default(),
  defender: Joi.object<DefenderConfig>({
    enabled: Joi.boolean().default(false),
    ban_time: Joi.number().integer().min(1).max(525600).default(30),
    ban_time_increment: Joi.number().integer().min(0).max(1000).default(50),
    threshold: Joi.number().integer().min(1).max(10000).default(15),
    score_invalid: Joi.number().integer().min(0).max(10000).default(2),
    score_valid: Joi.number().integer().min(0).max(10000).default(1),
    score_limit_exceeded: Joi.number().integer().min(0).max(10000).default(3),
    score_no_auth: Joi.number().integer().min(0).max(10000).default(0),
    observation_time: Joi.number().integer().min(1).max(525600).default(30),
    entries_soft_limit: Joi.number().integer().min(1).default(100),
    entries_hard_limit: Joi.number().integer().min(1).default(150),
  })
    .default()
    .custom((v: DefenderConfig, h) => {
      if (v.entries_soft_limit > v.entries_hard_limit) {
        return h.message({ custom: '"defender.entries_soft_limit" must not be greater than "defender.entries_hard_limit"' });
      }
      return v;
    }),
  rate_limit: Joi.object({
    api: rateScope,
    token: rateScope,
    shares: rateScope,
    tus: rateScope,
    max_hosts: Joi.number().integer().min(1).max(10_000_000).default(10000),
  }).default(),
  auth_cache: Joi.object({
    ttl: Joi.number().integer().min(0).max(3600).default(60),
    max_entries: Joi.number().integer().min(1).max(1_000_000).default(10000),
  }).default(),
  share_codes: Joi.object({
    code_lifetime: Joi.number().integer().min(1).max(1440).default(15),
    max_codes: Joi.number().integer().min(1).max(100).default(3),
    max_attempts: Joi.number().integer().min(1).max(100).default(5),
  }).default(),
});
