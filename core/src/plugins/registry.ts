import type { ActionTypeDef } from '../events/action.contract.js';
import type { FsProviderDef } from './manifest.js';

/** Raised when a plugin cannot be loaded; the message always names the plugin. */
export class PluginLoadError extends Error {
  constructor(
    readonly plugin: string,
    message: string,
    opts?: { cause?: unknown },
  ) {
    super(`plugin ${plugin}: ${message}`, opts);
    this.name = 'PluginLoadError';
  }
}

export interface LoadedPlugin {
  name: string;
  version: string;
  apiVersion: number;
  fsProviders: number[];
  actionTypes: number[];
}

interface Owned<T> {
  def: T;
  plugin: string;
}

/** What the loaded plugins contribute, looked up by number. */
export class PluginRegistry {
  readonly plugins: LoadedPlugin[] = [];
  private readonly fs = new Map<number, Owned<FsProviderDef>>();
  private readonly actions = new Map<number, Owned<ActionTypeDef>>();

  addPlugin(p: LoadedPlugin): void {
    this.plugins.push(p);
  }

  registerFsProvider(plugin: string, def: FsProviderDef): void {
    const prev = this.fs.get(def.provider);
    if (prev) {
      throw new PluginLoadError(plugin, `filesystem provider ${def.provider} is already registered by plugin ${prev.plugin}`);
    }
    this.fs.set(def.provider, { def, plugin });
    this.plugins.find((p) => p.name === plugin)?.fsProviders.push(def.provider);
  }

  registerActionType(plugin: string, def: ActionTypeDef): void {
    const prev = this.actions.get(def.type);
    if (prev) {
      throw new PluginLoadError(plugin, `event action type ${def.type} is already registered by plugin ${prev.plugin}`);
    }
    this.actions.set(def.type, { def, plugin });
    this.plugins.find((p) => p.name === plugin)?.actionTypes.push(def.type);
  }

  fsProvider(provider: number): FsProviderDef | undefined {
    return this.fs.get(provider)?.def;
  }

  actionType(type: number): ActionTypeDef | undefined {
    return this.actions.get(type)?.def;
  }

  fsProviders(): FsProviderDef[] {
    return [...this.fs.values()].map((o) => o.def).sort((a, b) => a.provider - b.provider);
  }

  actionTypes(): ActionTypeDef[] {
    return [...this.actions.values()].map((o) => o.def).sort((a, b) => a.type - b.type);
  }

  /** `features` of GET /version: one entry per plugin, `name@version`. */
  features(): string[] {
    return this.plugins.map((p) => `${p.name}@${p.version}`);
  }
}
