import Joi from 'joi';
import { normalizeVirtualPath } from '@ferry/core';

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

/**
 * The content type a body gets when `content_type` is not set: HTML (1) when
 * it starts with an HTML tag (`<!doctype html>`, `<html>`, `<p>`, `<div>`,
 * `<table>`...), text (0) otherwise. Decided at save time and stored.
 */
export function contentTypeOf(body: string): 0 | 1 {
  return /^\s*(<!doctype\s+html|<(html|head|body|p|div|table|h[1-6]|ul|ol|span|a|b|strong|em|br|img|pre)[\s>/])/i.test(body) ? 1 : 0;
}

/** A plain address (`local@domain`), as the SMTP envelope takes it. */
export const ADDRESS = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;

const address = Joi.string()
  .trim()
  .min(1)
  .max(320)
  .custom((v: string, h) =>
    v.includes('{{') || ADDRESS.test(v) ? v : h.message({ custom: '{{#label}} is not an email address (local@domain) nor a template' }),
  );

const attachment = Joi.string()
  .trim()
  .min(1)
  .max(4096)
  .custom((v: string, h) => {
    const gen = generatedName(v);
    if (gen) return gen;
    if (v.includes('{{')) return v;
    try {
      normalizeVirtualPath(v);
    } catch (err) {
      return h.message({ custom: `{{#label}} is not a valid virtual path: ${(err as Error).message}` });
    }
    return v;
  });

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
