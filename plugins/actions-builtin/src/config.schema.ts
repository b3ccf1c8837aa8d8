import Joi from 'joi';
import { normalizeVirtualPath } from '@ferry/core';

/** Plugin config (`plugins[].config` of @ferry/actions-builtin). */
export interface BuiltinActionsConfig {
  /** Where event reports are written (default <data_dir>/reports). */
  reports_dir: string;
}

export const pluginConfigSchema = Joi.object<BuiltinActionsConfig>({
  reports_dir: Joi.string().allow('').default(''),
});

export const retentionConfigSchema = Joi.object({
  folders: Joi.array()
    .items(
      Joi.object({
        /** A virtual path, stored normalised ('/logs/' and 'logs' are '/logs'); '..' segments and control characters are refused. */
        path: Joi.string()
          .min(1)
          .max(4096)
          .required()
          .custom((v: string, h) => {
            try {
              return normalizeVirtualPath(v);
            } catch (err) {
              return h.message({ custom: `{{#label}} is not a valid virtual path: ${(err as Error).message}` });
            }
          }),
        /** Hours; 0 keeps everything under the path. */
        retention: Joi.number().integer().min(0).required(),
        delete_empty_dirs: Joi.boolean().default(false),
      }),
    )
    .min(1)
    // compared after normalisation: '/logs' and '/logs/' are the same folder
    .unique('path')
    .messages({ 'array.unique': '{{#label}} repeats the path of another folder (paths are compared normalised)' })
    .required(),
});

export const pwdExpirationConfigSchema = Joi.object({
  /** Days before the expiry from which users are notified. */
  threshold: Joi.number().integer().min(1).max(3650).required(),
});

export const userInactivityConfigSchema = Joi.object({
  /** Days without login after which the user is disabled (0: never). */
  disable_threshold: Joi.number().integer().min(0).default(0),
  /** Days without login after which the user is deleted (0: never); greater than disable_threshold when both are set. */
  delete_threshold: Joi.number().integer().min(0).default(0),
}).custom((v, h) => {
  if (!v.disable_threshold && !v.delete_threshold) return h.message({ custom: 'set disable_threshold, delete_threshold or both' });
  if (v.disable_threshold && v.delete_threshold && v.delete_threshold <= v.disable_threshold) {
    return h.message({ custom: 'delete_threshold must be greater than disable_threshold' });
  }
  return v;
});

export const rotateLogsConfigSchema = Joi.object({
  /** Rotated files to keep (0: keep all). */
  keep: Joi.number().integer().min(0).max(10000).default(0),
});

export const shareExpirationConfigSchema = Joi.object({
  /** Notify owners by email of shares expiring within this many days (0: no notice). */
  advance_notice: Joi.number().integer().min(0).max(365).default(0),
  /** Delete shares that expired more than this many days ago (-1: never delete). */
  delete_after: Joi.number().integer().min(-1).max(3650).default(-1),
}).custom((v, h) => (v.advance_notice === 0 && v.delete_after < 0 ? h.message({ custom: 'set advance_notice, delete_after or both' }) : v));

export const EVENT_KINDS = ['fs', 'provider', 'log'] as const;

export const eventReportConfigSchema = Joi.object({
  /** The report covers the hours before the rule fired. */
  hours: Joi.number().integer().min(1).max(8760).default(24),
  event_types: Joi.array()
    .items(Joi.string().valid(...EVENT_KINDS))
    .unique()
    .min(1)
    .default([...EVENT_KINDS]),
  /** true: the report is one zip holding a CSV per event kind (one file to attach); false: one CSV per kind. */
  compress: Joi.boolean().default(false),
});
