import Joi from 'joi';
import { secretSchema, type Secret } from '@ferry/core';
import { bufferSizeSchema } from '@ferry/fs-local';

/** Per-instance options of the encrypted provider (FilesystemConfig.cryptconfig). */
export interface CryptFsConfig {
  /** A Secret when stored; create() receives the decrypted string. */
  passphrase: Secret | string;
  /** Read buffer in MiB (0 = one 64 KiB record). */
  read_buffer_size?: number;
  /** Write buffer in MiB (0 = 64 KiB). */
  write_buffer_size?: number;
}

const passphraseSchema = secretSchema
  .custom((v: Secret, h) => (v.status === 'Plain' && !v.payload ? h.error('passphrase.empty') : v))
  .messages({
    'object.base': 'passphrase must be a secret object with a status and a payload (status Plain on input)',
    'passphrase.empty': 'passphrase must not be empty',
  });

export const cryptFsConfigSchema: Joi.ObjectSchema<CryptFsConfig> = Joi.object<CryptFsConfig>({
  passphrase: passphraseSchema,
  read_buffer_size: bufferSizeSchema('read_buffer_size'),
  write_buffer_size: bufferSizeSchema('write_buffer_size'),
})
  .unknown(false)
  // Checked here rather than with .required() so the message does not leak into the Secret's own fields.
  .custom((v: CryptFsConfig, h) => (v.passphrase === undefined ? h.error('passphrase.missing') : v))
  .messages({
    'object.unknown': '{{#label}} is not a cryptconfig option (known: passphrase, read_buffer_size, write_buffer_size)',
    'passphrase.missing': 'passphrase is required: fs-crypt encrypts every file with a key derived from it',
  })
  .prefs({ errors: { wrap: { label: false } } });

/** No server-wide settings. */
export const pluginConfigSchema: Joi.ObjectSchema<Record<string, never>> = Joi.object({})
  .unknown(false)
  .messages({ 'object.unknown': '{{#label}} is not a setting of @ferry/fs-crypt (it has none)' })
  .prefs({ errors: { wrap: { label: false } } });
