import type { ActionTypeDef } from '@ferry/core';
import { rotateLogsConfigSchema } from './config.schema.js';
import type { PluginHost } from '@ferry/core';

/** Type 15: rotates the log file (config log.file); nothing to do when logging to standard output. */
export function rotateLogsAction(s: PluginHost): ActionTypeDef<{ keep: number }> {
  return {
    type: 15,
    key: 'rotate-logs',
    optionsKey: 'rotate_logs_config',
    optionsSchema: rotateLogsConfigSchema,
    create: (o) => ({
      async execute() {
        const r = await s.logs.rotate({ keep: o.keep });
        return { outputs: { RotatedLog: r.rotated } };
      },
    }),
  };
}
