import { InvalidError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { FsProviderDef } from '../plugins/manifest.js';
import type { SecretsService } from '../secrets/secret.js';
import { isSecret } from '../secrets/secret.js';
import type { FerryConfig } from '../config/schema.js';
import type { StoredFilesystem } from '../data/entities/index.js';
import type { Fs } from '../fs/fs.contract.js';
import type { Logger } from '../logger.js';
import { getPath, setPath } from '../util/dotted-path.js';
import { interpolatePlaceholders } from '../accounts/effective-user.js';
import { setBounded } from '../util/bounded-map.js';
import { deepFreeze } from '../util/deep-freeze.js';

type Obj = Record<string, unknown>;

/** Child loggers FsFactory keeps. */
const LOGGERS_KEPT = 1024;

export interface FsOwner {
  username: string;
  role?: string;
  custom_placeholders?: string[];
}

/**
 * Builds Fs instances from stored filesystem configs through the provider
 * registered for the number: decrypts the provider's secret fields,
 * interpolates its placeholder fields and hands the result to the plugin.
 */
@injectable()
export class FsFactory {
  /** The child loggers handed to filesystems, by provider and user (the oldest forgotten first past LOGGERS_KEPT). */
  private readonly loggers = new Map<string, Logger>();
  /**
   * The options of each stored filesystem object, by owner, as options()
   * made them (frozen). A session creates its filesystems on every
   * request, and each made them again: a copy, the secrets decrypted
   * (AES-GCM, about 35 us each), the placeholders interpolated, twice for
   * a remote backend (create and describe), about 0.2 ms of a small
   * download from SFTP storage. Kept by the object's identity: the account
   * cache hands the same effective user (and its filesystem objects) to
   * every request until a change to the account, its groups, folders or
   * role drops it (accounts/account-cache.ts), and a user read from the
   * database, uncached, brings new objects; the entries go with them.
   */
  private readonly resolved = new WeakMap<StoredFilesystem, Map<string, Promise<Readonly<Obj>>>>();

  constructor(
    @inject(TOKENS.Plugins) private readonly registry: PluginRegistry,
    @inject(TOKENS.Secrets) private readonly secrets: SecretsService,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  provider(n: number): FsProviderDef {
    const def = this.registry.fsProvider(n);
    if (!def) throw new InvalidError(`filesystem provider ${n} is not available (no plugin registers it)`);
    return def;
  }

  /**
   * The provider's options object of a stored filesystem, secrets
   * decrypted, placeholders interpolated: frozen, and the same object for
   * the same stored filesystem object and owner (see `resolved`), so a
   * provider may keep what it derives from it by its identity
   * (derivedFromOptions in the SDK).
   */
  options(fs: StoredFilesystem, owner: FsOwner): Promise<Readonly<Obj>> {
    const key = `${fs.provider}\u0000${owner.username}\u0000${owner.role ?? ''}\u0000${(owner.custom_placeholders ?? []).join('\u0000')}`;
    let byOwner = this.resolved.get(fs);
    if (!byOwner) this.resolved.set(fs, (byOwner = new Map()));
    const kept = byOwner.get(key);
    if (kept) return kept;
    const made = this.makeOptions(fs, owner).then(deepFreeze);
    const owners = byOwner;
    owners.set(key, made);
    // a failure (a secret that cannot be decrypted) is not kept: the next request tries again
    made.catch(() => owners.get(key) === made && owners.delete(key));
    return made;
  }

  private async makeOptions(fs: StoredFilesystem, owner: FsOwner): Promise<Obj> {
    const def = this.provider(fs.provider);
    const opts = structuredClone((fs[def.configKey] as Obj | undefined) ?? {});
    for (const f of def.secretFields ?? []) {
      const v = getPath(opts, f);
      setPath(opts, f, isSecret(v) && v.payload ? await this.secrets.decrypt(v) : undefined);
    }
    for (const f of def.placeholderFields ?? []) {
      const v = getPath(opts, f);
      if (typeof v === 'string') setPath(opts, f, interpolatePlaceholders(v, owner));
    }
    return opts;
  }

  /**
   * Creates an Fs for a stored filesystem rooted at `root` (local providers)
   * or the config's prefix; `o.skipRootCheck`: see FsScope.
   */
  async create(fs: StoredFilesystem, root: string, owner: FsOwner, connectionId?: string, o: { skipRootCheck?: boolean } = {}): Promise<Fs> {
    const def = this.provider(fs.provider);
    const options = await this.options(fs, owner);
    if (def.requiresLocalRoot && !root) throw new InvalidError(`filesystem provider ${fs.provider} needs a local root directory`);
    return def.create(options, {
      username: owner.username,
      root: root || undefined,
      dataDir: this.config.common.data_dir,
      connectionId,
      ...(o.skipRootCheck ? { skipRootCheck: true } : {}),
      logger: this.loggerOf(owner.username, fs.provider),
    });
  }

  /**
   * The logger of a user's filesystems of a provider: one child per user
   * and provider, kept, rather than one per filesystem created (a session
   * creates its filesystems on every request; a pino child, and the weak
   * reference that lets setLogLevel reach it, were 1.1% of a small upload).
   */
  private loggerOf(username: string, provider: number): Logger {
    const key = `${provider}\u0000${username}`;
    return this.loggers.get(key) ?? setBounded(this.loggers, key, this.logger.child({ user: username, provider }), LOGGERS_KEPT);
  }

  /** Bucket/endpoint description for filesystem events. */
  async describe(fs: StoredFilesystem, owner: FsOwner): Promise<{ bucket?: string; endpoint?: string }> {
    const def = this.provider(fs.provider);
    return def.describe ? def.describe(await this.options(fs, owner)) : {};
  }
}
