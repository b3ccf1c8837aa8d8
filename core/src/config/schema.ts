import Joi from 'joi';

/** Validated server configuration. Keys are snake_case, one section per subsystem. */
export interface FerryConfig {
  common: {
    data_dir: string;
    instance_id: string;
    temp_dir: string;
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
}

export interface HttpBinding {
  address: string;
  port: number;
  enable_rest_api: boolean;
  enable_api_key_auth: boolean;
  upload_chunk_size: number;
  client_ip_proxy_header: string;
  proxy_allowed: string[];
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

const binding = Joi.object<HttpBinding>({
  address: Joi.string().default('127.0.0.1'),
  port: Joi.number().integer().min(0).max(65535).default(8080),
  enable_rest_api: Joi.boolean().default(true),
  enable_api_key_auth: Joi.boolean().default(true),
  upload_chunk_size: Joi.number().integer().min(0).default(0),
  client_ip_proxy_header: Joi.string().allow('').default(''),
  proxy_allowed: csv.default([]),
});

export const configSchema = Joi.object<FerryConfig>({
  common: Joi.object({
    data_dir: Joi.string().default('data'),
    instance_id: Joi.string().allow('').default(''),
    temp_dir: Joi.string().allow('').default(''),
    backups_dir: Joi.string().allow('').default(''),
    upload_mode: Joi.number().valid(0, 1).default(1),
    max_total_transfers: Joi.number().integer().min(0).default(0),
    max_per_host_transfers: Joi.number().integer().min(0).default(20),
    allow_list_status: Joi.boolean().default(false),
    ip_lists_cache_ttl: Joi.number().integer().min(0).max(3600).default(5),
    heap_growing_percent: Joi.number().integer().min(0).max(400).default(100),
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
      return v;
    }),
  httpd: Joi.object({
    bindings: Joi.array().items(binding).default([{}]),
    token_lifetime: Joi.number().integer().min(1).max(1440).default(20),
    signing_passphrase: Joi.string().allow('').default(''),
    max_request_size: Joi.number().integer().min(1024).default(1048576),
  }).default(),
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
});
