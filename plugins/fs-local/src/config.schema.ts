import Joi from 'joi';

/** Buffer size in MiB, 0-10 (0 = the backend default). Shared with fs-crypt. */
export function bufferSizeSchema(key: string): Joi.NumberSchema {
  return Joi.number()
    .integer()
    .min(0)
    .max(10)
    .default(0)
    .messages({
      'number.base': `{{#label}} must be a whole number of MiB between 0 and 10 (0 = default)`,
      'number.integer': `{{#label}} must be a whole number of MiB between 0 and 10, got {{#value}}`,
      'number.min': `{{#label}} must be between 0 and 10 MiB (0 = default), got {{#value}}`,
      'number.max': `{{#label}} must be between 0 and 10 MiB (0 = default), got {{#value}}; larger buffers only cost memory per transfer`,
    })
    .label(key);
}

/** Per-instance options of the local provider (FilesystemConfig.osconfig). */
export interface OsFsConfig {
  /** Read buffer in MiB (0 = 64 KiB default). */
  read_buffer_size?: number;
  /** Write buffer in MiB (0 = 64 KiB default). */
  write_buffer_size?: number;
}

export const osFsConfigSchema: Joi.ObjectSchema<OsFsConfig> = Joi.object<OsFsConfig>({
  read_buffer_size: bufferSizeSchema('read_buffer_size'),
  write_buffer_size: bufferSizeSchema('write_buffer_size'),
})
  .unknown(false)
  .messages({ 'object.unknown': '{{#label}} is not an osconfig option (known: read_buffer_size, write_buffer_size)' })
  .prefs({ errors: { wrap: { label: false } } });

/** The plugin has no server-wide settings; anything under its config is a mistake worth reporting. */
export const pluginConfigSchema: Joi.ObjectSchema<Record<string, never>> = Joi.object({})
  .unknown(false)
  .messages({ 'object.unknown': '{{#label}} is not a setting of @ferry/fs-local (it has none)' })
  .prefs({ errors: { wrap: { label: false } } });

const MiB = 1024 * 1024;

/** Buffer option (MiB, 0 = default) to bytes (0 = default). */
export function mibToBytes(mib: number | undefined): number {
  return (mib ?? 0) * MiB;
}
