import type { PluginHost } from '../sdk/host.js';
import type Joi from 'joi';
import type { Logger } from '../logger.js';
import type { EventBus } from '../events/event-bus.js';
import type { FsHooks } from '../events/fs-hooks.js';
import type { ActionTypeDef } from '../events/action.contract.js';
import type { Fs, FsCapabilities, FsScope } from '../fs/fs.contract.js';
import type { SecretsService } from '../secrets/secret.js';
import type { EventSearch } from '../sdk/event-search.js';
import type { PluginDatabase, PluginEntitiesDef } from '../sdk/plugin-entities.js';
import type { StaticSiteDef } from '../sdk/static-site.js';
import type { ServiceDef } from '../sdk/service.js';

/** Plugin-API major versions this core accepts. */
export const PLUGIN_API_VERSION = 1;
export const SUPPORTED_PLUGIN_API_VERSIONS: readonly number[] = [1];

/** A filesystem backend contributed by a plugin. */
export interface FsProviderDef<O = Record<string, unknown>> {
  /** The public, stored provider number (FilesystemConfig.provider). Numbers are never reused. */
  provider: number;
  /** Short key used in logs and features, e.g. 's3'. */
  key: string;
  /** FilesystemConfig member holding this provider's options (e.g. 's3config'). */
  configKey: string;
  /** Validates the options object when a user, group or folder is saved. */
  optionsSchema: Joi.ObjectSchema<O>;
  /** Dotted paths of Secret fields inside the options. */
  secretFields?: string[];
  /** Options fields in which %username%, %role% and %customN% are interpolated at login. */
  placeholderFields?: string[];
  /** The provider stores data under a local directory (home_dir / mapped_path is required). */
  requiresLocalRoot?: boolean;
  capabilities: FsCapabilities;
  /**
   * Builds an Fs bound to one root; `options` has secrets decrypted to plain
   * strings. The core calls it for every file session (every request), with
   * the same frozen `options` object for one user's filesystem until the
   * account changes: what the provider derives from it can be kept by its
   * identity (derivedFromOptions); it must not be changed.
   */
  create(options: O, scope: FsScope): Fs | Promise<Fs>;
  /**
   * Optional: true when two option objects of this provider (secrets decrypted,
   * placeholders interpolated) reach the same remote storage, e.g. a user's home and a
   * virtual folder on one SFTP server or in one bucket. The core then moves and copies
   * between the two mounts with the destination Fs's `renameFrom()` / `copyFrom()`
   * (server side) instead of streaming the bytes through Ferry. Providers without it
   * always stream across mounts. Must be cheap and must not do I/O.
   */
  sameResource?(a: O, b: O): boolean;
  /** Where the data lives, for filesystem events (bucket, endpoint). */
  describe?(options: O): { bucket?: string; endpoint?: string };
}

/** Narrow view of the core handed to each plugin's register(). */
export interface PluginContext {
  readonly name: string;
  readonly logger: Logger;
  /** The plugin's own config sub-object, validated by manifest.configSchema. */
  readonly config: Record<string, unknown>;
  /** This node's data directory. */
  readonly dataDir: string;
  readonly events: EventBus;
  readonly fsHooks: FsHooks;
  readonly secrets: SecretsService;
  registerFsProvider(def: FsProviderDef<any>): void;
  registerActionType(def: ActionTypeDef<any>): void;
  /**
   * Registers a front-end (a protocol server): started after the crash
   * recovery and before the node reports ready, stopped before the event
   * manager and the database within the shutdown grace period, reporting
   * its section of GET /api/v2/status. It reaches the core through
   * `host.services` (login, file sessions, defender). See `ServiceDef` in
   * core/src/sdk/service.ts and docs/DEVELOPING.md.
   */
  registerService(def: ServiceDef): void;
  /**
   * Serves a directory of static files (a browser application) under
   * `def.prefix` on the REST API's HTTP bindings: precompressed variants,
   * long caching of hashed files, a single-page-app fallback and the site's
   * own headers. See `StaticSiteDef` in core/src/sdk/static-site.ts.
   */
  registerStaticSite(def: StaticSiteDef): void;
  /**
   * Makes the plugin's MikroORM entities known to the core database and runs
   * its pending migrations (the list for the database's dialect); resolves
   * with access to the database. Call it from register().
   */
  registerEntities(def: PluginEntitiesDef): Promise<PluginDatabase>;
  /**
   * Registers the persistent event store the core serves GET
   * /api/v2/events/fs|provider|logs from and event reports read. At most one
   * plugin may register one.
   */
  registerEventSearch(search: EventSearch): void;
  /**
   * Runs `fn` when this app stops: after the HTTP servers and the event
   * manager stopped (no new events), before the plugins' teardown and before
   * the database closes. Hooks run in reverse order of registration; a
   * failure is logged. Unlike `teardown`, the hook belongs to this app, so
   * several apps in one process (tests, cluster simulations) stay apart.
   */
  onStop(fn: () => void | Promise<void>): void;
  /**
   * The core services a plugin may use (accounts, shares, mail, log
   * rotation, retention, event history, backup), typed and resolved on
   * first use: see `PluginHost` in `core/src/sdk/host.ts`.
   */
  readonly host: PluginHost;
  /**
   * Escape hatch: resolves any core service by its token (`TOKENS` of
   * @ferry/core), with a type the caller asserts. Prefer `host`; a service a
   * plugin needs often belongs in `PluginHost`. Throws when nothing is
   * registered under the token.
   */
  readonly core: CoreServicesAccessor;
}

/** Resolves a core service by its token (exported from @ferry/core); see PluginContext.core. */
export interface CoreServicesAccessor {
  get<T>(token: symbol): T;
}

/**
 * The default export of a plugin package. Plain data plus hooks; the core
 * validates it before calling register().
 */
export interface PluginManifest<C = Record<string, unknown>> {
  /** Equals the package name; unique. */
  name: string;
  version: string;
  /** Plugin-API major version the plugin targets. */
  apiVersion: number;
  /** Names of plugins that must be registered first. */
  dependsOn?: string[];
  /** Validates the plugin's config sub-object (config `plugins[].config`). */
  configSchema?: Joi.ObjectSchema<C>;
  register(ctx: PluginContext, config: C): void | Promise<void>;
  teardown?(): void | Promise<void>;
}

/** Identity helper that gives a manifest literal its type. */
export function definePlugin<C = Record<string, unknown>>(m: PluginManifest<C>): PluginManifest<C> {
  return m;
}
