import Joi from 'joi';
import { normalizeVirtualPath } from '@ferry/core';
import { parseIcapUrl } from './icap/endpoint.js';

/** Plugin config (`plugins[].config` of @ferry/action-icap). */
export interface IcapPluginConfig {
  /** Where quarantined files go (default <data_dir>/icap-quarantine); a server directory no user can reach. */
  quarantine_dir: string;
  /** Most connections open to one ICAP server at once (lowered by the server's Max-Connections). */
  max_connections: number;
  /** Seconds an unused pooled connection stays open. */
  idle_timeout: number;
  /** Largest preview sent, in bytes, whatever a service asks for. */
  max_preview: number;
}

export const pluginConfigSchema = Joi.object<IcapPluginConfig>({
  quarantine_dir: Joi.string().allow('').default(''),
  max_connections: Joi.number().integer().min(1).max(64).default(4),
  idle_timeout: Joi.number().integer().min(1).max(3600).default(30),
  max_preview: Joi.number()
    .integer()
    .min(0)
    .max(16 * 1024 * 1024)
    .default(1024 * 1024),
});

/** What to do with a file: the values of block_action, adapt_action and failure_policy. */
export const FileAction = { Ignore: 1, Delete: 2, Quarantine: 3, Overwrite: 4 } as const;
export type FileAction = (typeof FileAction)[keyof typeof FileAction];

/** icap_config of an action (type 17). */
export interface IcapActionOptions {
  endpoint: string;
  method: 'RESPMOD' | 'REQMOD';
  /** Seconds. */
  timeout: number;
  paths: string[];
  block_action: 1 | 2 | 3;
  adapt_action: 1 | 2 | 3 | 4;
  failure_policy: 1 | 2 | 3;
}

const choice = (values: number[], names: string) =>
  Joi.number()
    .integer()
    .valid(...values)
    .default(FileAction.Ignore)
    .messages({ 'any.only': `{{#label}} must be one of ${names}` });

export const icapOptionsSchema = Joi.object<IcapActionOptions>({
  endpoint: Joi.string()
    .trim()
    .max(2048)
    .required()
    .custom((v: string, h) => {
      try {
        parseIcapUrl(v);
        return v;
      } catch (err) {
        return h.message({ custom: `{{#label}} ${(err as Error).message}` });
      }
    }),
  method: Joi.string().uppercase().valid('RESPMOD', 'REQMOD').default('RESPMOD').messages({ 'any.only': '{{#label}} must be RESPMOD or REQMOD' }),
  timeout: Joi.number().integer().min(1).max(3600).default(60).messages({
    'number.min': '{{#label}} is in seconds and must be at least 1',
    'number.max': '{{#label}} is in seconds and must be at most 3600',
  }),
  paths: Joi.array()
    .items(
      Joi.string()
        .trim()
        .min(1)
        .max(4096)
        // a template is checked once rendered; a plain path now
        .custom((v: string, h) => {
          if (v.includes('{{')) return v;
          try {
            return normalizeVirtualPath(v);
          } catch (err) {
            return h.message({ custom: `{{#label}} is not a valid virtual path: ${(err as Error).message}` });
          }
        }),
    )
    .min(1)
    .max(100)
    .required()
    .messages({ 'array.min': '{{#label}} must name at least one file (a virtual path, or a template such as .VirtualPath in double braces)' }),
  block_action: choice([1, 2, 3], '1 (ignore), 2 (delete), 3 (quarantine)'),
  adapt_action: choice([1, 2, 3, 4], '1 (ignore), 2 (delete), 3 (quarantine), 4 (overwrite with the modified content)'),
  failure_policy: choice([1, 2, 3], '1 (ignore), 2 (delete), 3 (quarantine)'),
});
