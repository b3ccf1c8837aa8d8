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

  /** The provider's options object of a stored filesystem, secrets decrypted, placeholders interpolated. */
  async options(fs: StoredFilesystem, owner: FsOwner): Promise<Obj> {
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
