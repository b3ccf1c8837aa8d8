import { createRequire } from 'node:module';
import Joi from 'joi';
import type * as Ssh2 from 'ssh2';
import { hostPortSchema, isEmptySecret, isSecret, keyPrefixSchema, secretSchema, type Secret } from '@ferry/core';

/** A secret field as stored (Secret object) or as handed to create() (decrypted string). */
export type SecretValue = Secret | string;

const requireCjs = createRequire(import.meta.url);

/**
 * ssh2 (its key parser) is loaded on the first private key checked, not when
 * the plugin is imported: a server that never sees an SFTP key never loads it.
 */
function ssh2(): typeof Ssh2 {
  return requireCjs('ssh2') as typeof Ssh2;
}

/** `sftpconfig` of a FilesystemConfig (reference.yaml SFTPFsConfig). */
export interface SftpOptions {
  /** host:port of the SFTP server. */
  endpoint: string;
  username: string;
  password?: SecretValue;
  private_key?: SecretValue;
  key_passphrase?: SecretValue;
  /** Accepted host key fingerprints, 'SHA256:<base64>' as `ssh-keygen -l` prints them. */
  fingerprints?: string[];
  /** Remote directory every path lives under; relative prefixes start at the login directory. */
  prefix?: string;
  /** One read request in flight at a time (servers that delete files once read). */
  disable_concurrent_reads?: boolean;
  /** MB kept in flight per transfer (pipelined reads and writes); 0 = default (2 MB). */
  buffer_size?: number;
  /**
   * When two configurations count as the same server (moves between their mounts are
   * one rename on the server): 0 same endpoint and username, 1 same endpoint (both sides).
   */
  equality_check_mode?: 0 | 1;
}

/** Plugin-level settings (`plugins[].config` of @ferry/fs-sftp). */
export interface SftpPluginConfig {
  /** Connections per pool, one pool per (endpoint, username, credentials, fingerprints). */
  max_connections: number;
  /** Idle connections are closed after this many seconds. */
  idle_timeout: number;
  /** TCP connect + SSH handshake timeout, seconds. */
  connect_timeout: number;
}

export const SECRET_FIELDS = ['password', 'private_key', 'key_passphrase'];
const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/;

/** Cleartext of a secret field ('' when empty or still encrypted). */
export function secretText(v: SecretValue | undefined): string {
  if (typeof v === 'string') return v;
  if (isSecret(v) && v.status === 'Plain') return v.payload ?? '';
  return '';
}

function filled(v: unknown): boolean {
  return typeof v === 'string' ? v !== '' : !isEmptySecret(v);
}

const secretField = Joi.alternatives().try(secretSchema, Joi.string().allow('')).messages({
  'alternatives.match': '{{#label}} must be a Secret object with a status and a payload',
  'alternatives.types': '{{#label}} must be a Secret object with a status and a payload',
});

export const sftpOptionsSchema = Joi.object<SftpOptions>({
  endpoint: hostPortSchema
    .required()
    .custom((v: string, h) => (Number(v.slice(v.lastIndexOf(':') + 1)) > 65535 ? h.error('endpoint.port') : v))
    .messages({
      'any.required': '"endpoint" is required: host:port of the SFTP server, e.g. sftp.example.com:22',
      'string.empty': '"endpoint" is required: host:port of the SFTP server, e.g. sftp.example.com:22',
      'string.pattern.name': '"endpoint" must be host:port, e.g. sftp.example.com:22 (got "{{#value}}")',
      'endpoint.port': '"endpoint" port must be between 1 and 65535 (got "{{#value}}")',
    }),
  username: Joi.string().trim().required().messages({
    'any.required': '"username" is required: the SFTP login name',
    'string.empty': '"username" is required: the SFTP login name',
  }),
  password: secretField,
  private_key: secretField,
  key_passphrase: secretField,
  fingerprints: Joi.array()
    .items(
      Joi.string().pattern(FINGERPRINT).messages({
        'string.pattern.base': '{{#label}} must be a SHA256 host key fingerprint as ssh-keygen -l prints it ("SHA256:" + 43 base64 characters)',
      }),
    )
    .default([]),
  prefix: keyPrefixSchema.default('').messages({ 'any.invalid': '"prefix" must not contain ".." segments' }),
  disable_concurrent_reads: Joi.boolean().default(false),
  buffer_size: Joi.number().integer().min(0).max(16).default(0).messages({
    'number.min': '"buffer_size" is in MB, between 0 and 16',
    'number.max': '"buffer_size" is in MB, between 0 and 16',
  }),
  equality_check_mode: Joi.number().valid(0, 1).default(0),
})
  .custom((o: SftpOptions, h) => {
    if (!filled(o.password) && !filled(o.private_key)) return h.error('sftp.credentials');
    if (filled(o.key_passphrase) && !filled(o.private_key)) return h.error('sftp.passphrase');
    // A cleartext key can be checked now; an encrypted one is checked at connect time.
    const key = isSecret(o.private_key) ? secretText(o.private_key) : '';
    if (key) {
      const parsed = ssh2().utils.parseKey(key, secretText(o.key_passphrase) || undefined);
      if (parsed instanceof Error) return h.error('sftp.privateKey', { reason: parsed.message });
    }
    return o;
  })
  .messages({
    'sftp.credentials': 'set "password" and/or "private_key": the SFTP server needs a credential',
    'sftp.passphrase': '"key_passphrase" is set but "private_key" is empty',
    'sftp.privateKey': '"private_key" cannot be used: {{#reason}}',
  });

export const sftpPluginConfigSchema = Joi.object<SftpPluginConfig>({
  max_connections: Joi.number().integer().min(1).max(64).default(8),
  idle_timeout: Joi.number().min(1).default(60),
  connect_timeout: Joi.number().min(1).default(20),
});
