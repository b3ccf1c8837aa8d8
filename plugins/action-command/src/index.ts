import Joi from 'joi';
import { definePlugin, packageInfo } from '@ferry/core';
import { commandActionDef } from './command.action.js';

export {
  commandActionDef,
  commandOptionsSchema,
  childEnv,
  runCommand,
  INHERITED_ENV,
  SETTING,
  MAX_TIMEOUT,
  DEFAULT_TIMEOUT,
  type CommandOptions,
  type CommandActionSettings,
  type EnvVar,
} from './command.action.js';

/** Plugin config (`plugins[].config` of @ferry/action-command). */
export interface CommandPluginConfig {
  /** Bytes of stdout and of stderr kept in the log line of each run. */
  output_limit: number;
  /** Milliseconds between SIGTERM and SIGKILL of the process group at a timeout or cancellation. */
  kill_grace_ms: number;
}

export const pluginConfigSchema = Joi.object<CommandPluginConfig>({
  output_limit: Joi.number()
    .integer()
    .min(0)
    .max(16 * 1024 * 1024)
    .default(64 * 1024),
  kill_grace_ms: Joi.number().integer().min(0).max(60_000).default(2000),
});

const pkg = packageInfo(import.meta.url);

/**
 * Event action type 2 (`cmd_config`): runs a command listed in
 * `hook.enabled_action_commands`, without a shell, in its own process group.
 */
export default definePlugin<CommandPluginConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: pluginConfigSchema,
  register(ctx, config) {
    ctx.registerActionType(
      commandActionDef({
        allowed: () => ctx.host.hook.enabledActionCommands,
        outputLimit: config.output_limit,
        killGraceMs: config.kill_grace_ms,
      }),
    );
  },
});
