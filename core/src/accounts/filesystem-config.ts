import { LENIENT_INPUT } from '../util/lenient.js';
import { InvalidError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { FsProviderDef } from '../plugins/manifest.js';
import { isSecret, type Secret, type SecretsService } from '../secrets/secret.js';
import type { StoredFilesystem } from '../data/entities/index.js';
import { getPath, setPath } from '../util/dotted-path.js';

type Obj = Record<string, unknown>;

/** Providers that store data under a local directory when their plugin does not say otherwise (local, encrypted local). */
const LOCAL_ROOT_PROVIDERS = new Set([0, 4]);

export interface NormalizeFsOptions {
  /** Field name used in error messages ('filesystem', 'user_settings.filesystem'). */
  label: string;
  /** Owner name (user, group or folder): the additional data secrets are bound to. */
  owner: string;
  /** The config currently stored, so secrets sent back unchanged keep their stored value. */
  stored?: StoredFilesystem | null;
}

/** Dotted paths of every Secret object inside a value (arrays included, as 'a.0'). */
function secretPaths(v: unknown, prefix = '', out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x, i) => secretPaths(x, prefix ? `${prefix}.${i}` : String(i), out));
  else if (v && typeof v === 'object') {
    if (isSecret(v)) out.push(prefix);
    else for (const [k, x] of Object.entries(v)) secretPaths(x, prefix ? `${prefix}.${k}` : k, out);
  }
  return out;
}

function deletePath(o: Obj, dotted: string): void {
  const keys = dotted.split('.');
  const parent = keys.length > 1 ? getPath(o, keys.slice(0, -1).join('.')) : o;
  if (parent && typeof parent === 'object') delete (parent as Obj)[keys[keys.length - 1]!];
}

const hasPayload = (s: unknown): boolean => isSecret(s) && typeof s.payload === 'string' && s.payload !== '';

/** A Secret as the API shows it: the encrypted form with confidential data, only the status otherwise. */
export function renderSecret(s: Secret, confidential: boolean): Secret {
  if (!confidential) return { status: s.status };
  const out: Secret = { status: s.status };
  if (s.payload !== undefined) out.payload = s.payload;
  if (s.key !== undefined) out.key = s.key;
  if (s.additional_data !== undefined) out.additional_data = s.additional_data;
  if (s.mode !== undefined) out.mode = s.mode;
  return out;
}

/** Deep copy of a stored value with every Secret rendered by renderSecret. */
export function renderSecretsIn<T>(v: T, confidential: boolean): T {
  if (Array.isArray(v)) return v.map((x) => renderSecretsIn(x, confidential)) as T;
  if (v && typeof v === 'object') {
    if (isSecret(v)) return renderSecret(v, confidential) as T;
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) out[k] = renderSecretsIn(x, confidential);
    return out as T;
  }
  return v;
}

/**
 * The FilesystemConfig tagged union, written once for users, groups'
 * user_settings and folders: `provider` selects the one config object kept
 * (key = the provider plugin's configKey; the others are cleared), which the
 * plugin's optionsSchema validates. Secrets (the provider's secretFields and
 * any other Secret object in the config) are stored encrypted with the owner
 * name as additional data; a secret sent back in its encrypted form without
 * payload (as reads show it) keeps the stored value.
 */
@injectable()
export class FilesystemConfigService {
  constructor(
    @inject(TOKENS.Plugins) private readonly registry: PluginRegistry,
    @inject(TOKENS.Secrets) private readonly secrets: SecretsService,
  ) {}

  /** The plugin of a provider number; undefined only for provider 0 without a plugin. 400 for other unknown numbers. */
  provider(n: number, label = 'filesystem'): FsProviderDef | undefined {
    const def = this.registry.fsProvider(n);
    if (!def && n !== 0) {
      throw new InvalidError(`"${label}.provider": filesystem provider ${n} is not available (no plugin registers it)`);
    }
    return def;
  }

  /** True when the provider keeps data under a local directory (home_dir / mapped_path required). */
  requiresLocalRoot(n: number): boolean {
    const def = this.registry.fsProvider(n);
    return def ? (def.requiresLocalRoot ?? LOCAL_ROOT_PROVIDERS.has(n)) : LOCAL_ROOT_PROVIDERS.has(n);
  }

  /** Validates a FilesystemConfig as sent and returns it as stored (selected config only, secrets encrypted). */
  async normalize(input: ({ provider: number } & Obj) | undefined | null, o: NormalizeFsOptions): Promise<StoredFilesystem> {
    const provider = input?.provider ?? 0;
    const def = this.provider(provider, o.label);
    if (!def) {
      // provider 0 with no plugin loaded: nothing to validate against, keep only the selector
      return { provider };
    }
    const key = def.configKey;
    const label = `${o.label}.${key}`;
    const given = input?.[key];
    if (given !== undefined && given !== null && (typeof given !== 'object' || Array.isArray(given))) {
      throw new InvalidError(`"${label}" must be an object`);
    }
    const raw = structuredClone((given ?? {}) as Obj);
    const stored = o.stored && o.stored.provider === provider ? ((o.stored[key] as Obj | undefined) ?? {}) : {};

    // 1. secrets: cleartext strings become Plain secrets, "unchanged" markers take the stored value
    const paths = new Set([...(def.secretFields ?? []), ...secretPaths(raw)]);
    for (const p of paths) {
      const v = getPath(raw, p);
      const resolved = this.resolveSecret(v, getPath(stored, p));
      if (resolved === undefined) {
        if (v !== undefined) deletePath(raw, p);
      } else setPath(raw, p, resolved);
    }

    // 2. the plugin validates its options
    const { value, error } = def.optionsSchema.validate(raw, { abortEarly: true, errors: { wrap: { label: '"' } }, ...LENIENT_INPUT });
    if (error) throw new InvalidError(`${label}: ${error.message}`);
    const cfg = (value ?? {}) as Obj;

    // 3. encrypt cleartexts; an encrypted form must be one this server can decrypt
    for (const p of new Set([...(def.secretFields ?? []), ...secretPaths(cfg)])) {
      const v = getPath(cfg, p);
      if (!isSecret(v)) continue;
      if (!hasPayload(v)) {
        deletePath(cfg, p);
        continue;
      }
      if (v.status === 'Plain') {
        setPath(cfg, p, await this.secrets.encrypt(v.payload!, o.owner));
        continue;
      }
      const before = getPath(stored, p);
      if (isSecret(before) && before.payload === v.payload && before.key === v.key) continue;
      if (!this.secrets.canDecrypt(v)) throw new InvalidError(`"${label}.${p}": a secret of status ${v.status} cannot be decrypted by this server`);
      try {
        await this.secrets.decrypt(v);
      } catch {
        throw new InvalidError(`"${label}.${p}": the encrypted secret cannot be decrypted with this server's key`);
      }
    }
    return { provider, [key]: cfg };
  }

  private resolveSecret(v: unknown, stored: unknown): Secret | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v === '' ? undefined : { status: 'Plain', payload: v };
    if (!isSecret(v)) return undefined;
    if (hasPayload(v)) {
      const s: Secret = { status: v.status, payload: v.payload };
      if (v.status !== 'Plain') {
        if (v.key !== undefined) s.key = v.key;
        if (v.additional_data !== undefined) s.additional_data = v.additional_data;
        if (v.mode !== undefined) s.mode = v.mode;
      }
      return s;
    }
    // no payload: 'Plain' means "clear", an encrypted status (or Redacted) means "unchanged"
    if (v.status === 'Plain') return undefined;
    return hasPayload(stored) ? structuredClone(stored as Secret) : undefined;
  }

  /** A stored FilesystemConfig as the API shows it. */
  render(stored: StoredFilesystem | undefined | null, confidential: boolean): Obj {
    if (!stored) return { provider: 0 };
    return renderSecretsIn(stored as Obj, confidential);
  }
}
