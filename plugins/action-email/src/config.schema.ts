import Joi from 'joi';
import { EMAIL_ADDRESS, emailRecipientSchema, mailAttachmentSchema, mailContentTypeOf } from '@ferry/core';

/** Plugin config (`plugins[].config` of @ferry/action-email). */
export interface EmailPluginConfig {
  /** Bytes: the attachments of one email together (user files and generated files) may not exceed this. */
  max_attachments_size: number;
  /** Seconds one email may take to be sent (connection, attachments read from storage, SMTP dialogue). */
  timeout: number;
}

export const DEFAULT_MAX_ATTACHMENTS_SIZE = 10 * 1024 * 1024;
export const DEFAULT_TIMEOUT = 60;

export const pluginConfigSchema = Joi.object<EmailPluginConfig>({
  max_attachments_size: Joi.number()
    .integer()
    .min(1)
    .max(1024 * 1024 * 1024)
    .default(DEFAULT_MAX_ATTACHMENTS_SIZE),
  timeout: Joi.number().integer().min(1).max(3600).default(DEFAULT_TIMEOUT),
});

/** The options sub-object `email_config` (EventActionEmailConfig). */
export interface EmailOptions {
  recipients: string[];
  bcc: string[];
  subject: string;
  body: string;
  /** 0 text/plain, 1 text/html. */
  content_type: 0 | 1;
  /** Virtual paths of the event user's files, or the generated `.RetentionChecks` / `.EventReports`. */
  attachments: string[];
}

/** Attachment entries that name outputs of earlier actions instead of a user's file. */
export const GENERATED = ['.RetentionChecks', '.EventReports'] as const;
export type GeneratedName = (typeof GENERATED)[number];

/** `{{.RetentionChecks}}`, `{{ .EventReports }}` and the bare names all mean the generated attachment. */
export function generatedName(v: string): GeneratedName | undefined {
  const m = /^\s*(?:\{\{-?\s*(\.\w+)\s*-?\}\}|(\.\w+))\s*$/.exec(v);
  const name = m?.[1] ?? m?.[2];
  return (GENERATED as readonly string[]).includes(name ?? '') ? (name as GeneratedName) : undefined;
}

/** The shared mail option schemas of core's SDK (sdk/mail-options.ts), under this plugin's names. */
export const contentTypeOf = mailContentTypeOf;
export const ADDRESS = EMAIL_ADDRESS;
const address = emailRecipientSchema;
const attachment = mailAttachmentSchema(generatedName);

export const emailOptionsSchema = Joi.object<EmailOptions>({
  recipients: Joi.array().items(address).max(100).default([]),
  bcc: Joi.array().items(address).max(100).default([]),
  subject: Joi.string().trim().min(1).max(998).required(),
  body: Joi.string()
    .min(1)
    .max(1024 * 1024)
    .required(),
  content_type: Joi.number().valid(0, 1),
  attachments: Joi.array().items(attachment).max(100).unique().default([]),
}).custom((v: EmailOptions, h) => {
  if (!v.recipients.length && !v.bcc.length) return h.message({ custom: 'set at least one address in "recipients" or "bcc"' });
  return v.content_type === undefined ? { ...v, content_type: contentTypeOf(v.body) } : v;
});
