import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { configSchema, type FerryConfig } from './schema.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface LoadConfigOptions {
  /** Extra config file (--config). */
  file?: string;
  /** Environment to read SERVICE_* overrides from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Skip config/default.yaml (tests). */
  skipDefaultFile?: boolean;
  /** Object merged last (tests). */
  overrides?: Record<string, unknown>;
}

export interface LoadedConfig {
  config: FerryConfig;
  /** Directory relative plugin paths and data_dir are resolved against. */
  baseDir: string;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep merge: objects merge key by key; arrays and scalars replace. */
export function deepMerge(target: Obj, source: Obj): Obj {
  const out: Obj = { ...target };
  for (const [k, v] of Object.entries(source)) {
    out[k] = isObj(v) && isObj(out[k]) ? deepMerge(out[k] as Obj, v) : v;
  }
  return out;
}

function readFile(file: string): Obj {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  try {
    const data = file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text);
    if (data == null) return {};
    if (!isObj(data)) throw new Error('the top level must be a mapping');
    return data;
  } catch (err) {
    throw new ConfigError(`invalid config file ${file}: ${(err as Error).message}`);
  }
}

/** Finds config/default.yaml by walking up from this module (works from src and dist). */
export function findDefaultConfigFile(): string | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'config', 'default.yaml');
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}

function parseEnvValue(raw: string, current: unknown): unknown {
  const t = raw.trim();
  if ((t.startsWith('[') && t.endsWith(']')) || (t.startsWith('{') && t.endsWith('}'))) {
    try {
      return JSON.parse(t);
    } catch {
      /* fall through: keep it a string */
    }
  }
  if (Array.isArray(current)) return t === '' ? [] : t.split(',').map((s) => s.trim());
  return raw;
}

/**
 * The key naming a plugin in environment variables: its name without the npm
 * scope, '-' and other non-alphanumerics as '_', lower case (variables are
 * read lower-cased): `@ferry/fs-s3` is `fs_s3` (SERVICE_PLUGINS__FS_S3__...).
 */
export function pluginEnvKey(name: string): string {
  return name
    .replace(/^@[^/]+\//, '')
    .replace(/[^a-zA-Z0-9]/g, '_')
    .toLowerCase();
}

/** Index in the `plugins` list of the plugin an environment variable names by `key` (see pluginEnvKey). */
function pluginIndex(plugins: unknown, key: string, variable: string): number {
  const list = Array.isArray(plugins) ? plugins : [];
  const found: number[] = [];
  list.forEach((p, i) => {
    if (isObj(p) && typeof p.name === 'string' && pluginEnvKey(p.name) === key) found.push(i);
  });
  if (found.length === 1) return found[0]!;
  if (found.length === 0) throw new ConfigError(`${variable}: no plugin of the "plugins" list is named "${key}" (its name without the scope, '-' as '_')`);
  throw new ConfigError(`${variable}: "${key}" names several plugins of the "plugins" list: give its index instead`);
}

/**
 * Folds the `plugin_config` map (`{"@ferry/fs-s3": {...}}`) into the config of
 * the entries of the `plugins` list with those names (deep merge) and drops
 * it. A name that is not in the list is refused.
 */
export function foldPluginConfig(cfg: Obj): Obj {
  const map = cfg.plugin_config;
  if (map === undefined) return cfg;
  const { plugin_config: _, ...out } = cfg;
  if (!isObj(map)) throw new ConfigError('invalid configuration at "plugin_config": it must map plugin names to their config');
  const plugins = Array.isArray(out.plugins) ? [...(out.plugins as unknown[])] : [];
  for (const [name, given] of Object.entries(map)) {
    if (!isObj(given)) throw new ConfigError(`invalid configuration at "plugin_config.${name}": it must be a mapping`);
    const i = plugins.findIndex((p) => isObj(p) && p.name === name);
    if (i < 0) throw new ConfigError(`invalid configuration at "plugin_config.${name}": no plugin of the "plugins" list has that name`);
    const entry = plugins[i] as Obj;
    plugins[i] = { ...entry, config: deepMerge(isObj(entry.config) ? entry.config : {}, given) };
  }
  return { ...out, plugins };
}

/**
 * Applies SERVICE_<SECTION>__<KEY>[__<KEY>...] variables: segments are
 * lower-cased, numeric segments index arrays (SERVICE_HTTPD__BINDINGS__0__PORT).
 * A plugin is named by its name (SERVICE_PLUGINS__FS_S3__CONFIG__PART_SIZE,
 * see pluginEnvKey) or by its index in the `plugins` list.
 * Variables without '__' are not config keys (e.g. SERVICE_DEFAULT_ADMIN_USERNAME).
 */
export function applyEnv(cfg: Obj, env: NodeJS.ProcessEnv): Obj {
  const out = structuredClone(cfg);
  const keys = Object.keys(env)
    .filter((k) => k.startsWith('SERVICE_') && k.includes('__'))
    .sort();
  for (const k of keys) {
    const segs = k.slice('SERVICE_'.length).toLowerCase().split('__');
    if (segs.some((s) => s === '')) throw new ConfigError(`malformed environment variable ${k}`);
    // a plugin named by its name: the index of that entry of the list
    if (segs[0] === 'plugins' && segs.length > 2 && !/^\d+$/.test(segs[1]!)) segs[1] = String(pluginIndex(out.plugins, segs[1]!, k));
    let node: unknown = out;
    for (let i = 0; i < segs.length - 1; i++) {
      const seg = segs[i]!;
      const nextIsIndex = /^\d+$/.test(segs[i + 1]!);
      const container = node as Obj | unknown[];
      const key = Array.isArray(container) ? Number(seg) : seg;
      let child = (container as Obj)[key as string];
      if (child === undefined || typeof child !== 'object' || child === null) {
        child = nextIsIndex ? [] : {};
        (container as Obj)[key as string] = child;
      }
      node = child;
    }
    const last = segs[segs.length - 1]!;
    const container = node as Obj;
    const key = Array.isArray(container) ? Number(last) : last;
    container[key as string] = parseEnvValue(env[k] ?? '', container[key as string]);
  }
  return out;
}

/**
 * Loads config/default.yaml, then the --config file (its `plugin_config` map
 * folded into the `plugins` list), then SERVICE_* env overrides, then
 * validates. A bad value throws ConfigError naming the key.
 */
export function loadConfig(opts: LoadConfigOptions = {}): LoadedConfig {
  const env = opts.env ?? process.env;
  let merged: Obj = {};
  let baseDir = process.cwd();
  if (!opts.skipDefaultFile) {
    const def = findDefaultConfigFile();
    if (def) {
      merged = readFile(def);
      baseDir = path.dirname(path.dirname(def));
    }
  }
  if (opts.file) {
    const file = path.resolve(opts.file);
    merged = deepMerge(merged, readFile(file));
    baseDir = path.dirname(file);
  }
  merged = foldPluginConfig(merged);
  merged = applyEnv(merged, env);
  if (opts.overrides) merged = foldPluginConfig(deepMerge(merged, opts.overrides));
  if (env.SERVICE_DEFAULT_ADMIN_USERNAME || env.SERVICE_DEFAULT_ADMIN_PASSWORD) {
    merged = deepMerge(merged, {
      defaults: {
        admin_username: env.SERVICE_DEFAULT_ADMIN_USERNAME ?? '',
        admin_password: env.SERVICE_DEFAULT_ADMIN_PASSWORD ?? '',
      },
    });
  }
  const { value, error } = configSchema.validate(merged, { abortEarly: true, convert: true, allowUnknown: false });
  if (error) {
    const d = error.details[0]!;
    const key = d.path.join('.');
    throw new ConfigError(`invalid configuration${key ? ` at "${key}"` : ''}: ${d.message}`);
  }
  const config = value as FerryConfig;
  config.common.data_dir = path.resolve(baseDir, config.common.data_dir);
  if (!config.common.temp_dir) config.common.temp_dir = path.join(config.common.data_dir, 'tmp');
  if (!config.common.backups_dir) config.common.backups_dir = path.join(config.common.data_dir, 'backups');
  return { config, baseDir };
}
