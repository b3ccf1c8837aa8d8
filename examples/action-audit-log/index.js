// A third-party Ferry plugin. It lives outside Ferry's workspaces, is loaded
// from the configuration by path (or by npm name once published), and adds
// event action type 5000: "audit log" — append one line, rendered from a Go
// template against the event, to a file under a configured directory.
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import Joi from 'joi';

/** Third-party action numbers start at 1000 (see Ferry's plugin guide); 5000 is this plugin's. */
export const AUDIT_LOG_ACTION = 5000;

const configSchema = Joi.object({
  /** Directory every audit file lives in; actions cannot write elsewhere. */
  directory: Joi.string().required(),
});

const optionsSchema = Joi.object({
  /** File name inside the configured directory (no separators). */
  file: Joi.string()
    .pattern(/^[^/\\]+$/)
    .required(),
  /** Go template of the line, e.g. "{{.Event}} {{.VirtualPath}} by {{.Name}}". */
  line: Joi.string().min(1).required(),
  /** Append the event user's role and groups, read through Ferry's typed plugin host. */
  with_account: Joi.boolean().default(false),
});

/** @type {import('@ferry/core').PluginManifest<{directory: string}>} */
export default {
  name: 'ferry-plugin-action-audit-log',
  version: '1.0.0',
  apiVersion: 1,
  configSchema,
  register(ctx, config) {
    const directory = path.resolve(config.directory);
    // The typed host (PluginContext.host) is how a plugin reads Ferry's own
    // data: here the accounts. Members resolve on first use, at run time.
    const host = ctx.host;
    ctx.registerActionType({
      type: AUDIT_LOG_ACTION,
      key: 'audit-log',
      optionsKey: 'audit_log_config',
      optionsSchema,
      templateFields: ['line'],
      create(options) {
        const target = path.join(directory, options.file);
        return {
          async execute(actx) {
            let line = actx.render(options.line).replace(/[\r\n]+/g, ' ');
            if (options.with_account && actx.username) {
              const [user] = await host.accounts.users({ username: actx.username });
              line += user ? ` role=${user.role || '-'} groups=${user.groups.join(',') || '-'}` : ' account=unknown';
            }
            await mkdir(directory, { recursive: true });
            await appendFile(target, line + '\n', { signal: actx.signal });
            actx.logger.debug({ file: target }, 'audit line written');
          },
        };
      },
    });
  },
};
