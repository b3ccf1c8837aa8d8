import Joi from 'joi';
import { EMAIL_ADDRESS, emailRecipientSchema, mailAttachmentSchema, mailContentTypeOf, secretSchema, type Secret } from '@ferry/core';

/** How the connection is secured: 0 none (plaintext, no STARTTLS), 1 implicit TLS (IMAPS), 2 STARTTLS required. */
export type TlsMode = 0 | 1 | 2;

/**
 * Plugin config (`plugins[].config` of @ferry/action-imap): the default IMAP
 * server of actions that name none, and the limits of every action.
 */
export interface ImapPluginConfig {
  host: string;
  /** 0: the default of the TLS mode (993 for implicit TLS, 143 otherwise). */
  port: number;
  tls: TlsMode;
  username: string;
  password: string;
  skip_tls_verify: boolean;
  /** From header of the messages (default: the account's username when it is an address). */
  from: string;
  /** Bytes all the attachments of one message may total. */
  max_attachments_size: number;
  /** Default seconds of an action's whole run (connect, compose, append). */
  timeout: number;
}

export const DEFAULT_MAX_ATTACHMENTS_SIZE = 10 * 1024 * 1024;
export const MAX_TIMEOUT = 600;

const hostname = Joi.string()
  .trim()
  .max(253)
  .pattern(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|[0-9a-fA-F:]+)$/, 'host name or IP address');

export const pluginConfigSchema = Joi.object<ImapPluginConfig>({
  host: hostname.allow('').default(''),
  port: Joi.number().integer().min(0).max(65535).default(0),
  tls: Joi.number().valid(0, 1, 2).default(2),
  username: Joi.string().allow('').max(320).default(''),
  password: Joi.string().allow('').max(1024).default(''),
  skip_tls_verify: Joi.boolean().default(false),
  from: Joi.string().allow('').max(320).default(''),
  max_attachments_size: Joi.number()
    .integer()
    .min(1)
    .max(1024 * 1024 * 1024)
    .default(DEFAULT_MAX_ATTACHMENTS_SIZE),
  timeout: Joi.number().integer().min(1).max(MAX_TIMEOUT).default(60),
});

/** The options sub-object `imap_config`, as the runner gets it (password decrypted, templates rendered). */
export interface ImapOptions {
  /** Addresses the message is addressed to (To header). */
  email: string[];
  subject: string;
  body: string;
  /** 0 text/plain, 1 text/html. */
  content_type: 0 | 1;
  /** Virtual paths of the event user's files. */
  attachments: string[];
  /** Mailbox path, `/` between levels (default INBOX); created when missing. */
  target_folder: string;
  // connection (defaults from the plugin config)
  host?: string;
  port?: number;
  tls?: TlsMode;
  username?: string;
  password?: string | Secret;
  skip_tls_verify?: boolean;
  /** Seconds (default: the plugin config's timeout). */
  timeout?: number;
}

/** The shared mail option schemas of core's SDK (sdk/mail-options.ts), under this plugin's names. */
export const contentTypeOf = mailContentTypeOf;
export const ADDRESS = EMAIL_ADDRESS;
const address = emailRecipientSchema;
const attachment = mailAttachmentSchema();

/** Mailbox names: `/` separates levels; no empty level, no control characters, no IMAP wildcards. */
export function folderPath(v: string): string[] {
  const s = v.trim().replace(/^\/+|\/+$/g, '');
  if (!s) return ['INBOX'];
  const parts = s.split('/');
  for (const p of parts) {
    if (!p.trim()) throw new Error('has an empty level (two "/" in a row)');
    if (/[\u0000-\u001f\u007f*%]/.test(p)) throw new Error('holds a control character or an IMAP wildcard (* %)');
  }
  if (parts[0]!.toUpperCase() === 'INBOX') parts[0] = 'INBOX';
  return parts;
}

const isSet = (s: unknown): boolean => {
  if (!s || typeof s !== 'object') return false;
  const v = s as Secret;
  return v.status === 'Plain' ? !!v.payload : true;
};

/** The options schema; `defaults` is the plugin config (a connection the action does not set comes from it). */
export function imapOptionsSchema(defaults: ImapPluginConfig): Joi.ObjectSchema<ImapOptions> {
  return Joi.object<ImapOptions>({
    email: Joi.array().items(address).max(100).default([]),
    subject: Joi.string().trim().min(1).max(998).required(),
    body: Joi.string()
      .min(1)
      .max(1024 * 1024)
      .required(),
    content_type: Joi.number().valid(0, 1),
    attachments: Joi.array().items(attachment).max(100).unique().default([]),
    target_folder: Joi.string()
      .allow('')
      .max(1024)
      .default('INBOX')
      .custom((v: string, h) => {
        if (v.includes('{{')) return v;
        try {
          folderPath(v);
        } catch (err) {
          return h.message({ custom: `{{#label}} ${(err as Error).message}` });
        }
        return v;
      }),
    host: hostname.allow(''),
    port: Joi.number().integer().min(0).max(65535),
    tls: Joi.number().valid(0, 1, 2),
    username: Joi.string().trim().allow('').max(320),
    password: secretSchema,
    skip_tls_verify: Joi.boolean(),
    timeout: Joi.number().integer().min(1).max(MAX_TIMEOUT),
  }).custom((v: ImapOptions, h) => {
    const ownServer = !!v.host;
    if (!ownServer && !defaults.host) {
      return h.message({ custom: '"host" is required: no IMAP server is set in the action nor in the plugin config (host)' });
    }
    // credentials of the plugin config are only ever sent to the plugin config's server
    const ownUser = !!v.username;
    if (ownServer && !ownUser) return h.message({ custom: '"username" is required with "host" (the plugin config\'s credentials only go to its own server)' });
    if (!ownUser && !defaults.username) return h.message({ custom: '"username" is required: none in the action nor in the plugin config' });
    if (ownUser && !isSet(v.password)) return h.message({ custom: '"password" is required with "username"' });
    if (!ownUser && isSet(v.password)) return h.message({ custom: '"password" is set without "username"' });
    return v.content_type === undefined ? { ...v, content_type: contentTypeOf(v.body) } : v;
  });
}
