import Joi from 'joi';
import { normalizeVirtualPath } from '../fs/path.js';

/**
 * Option schemas shared by the actions that write mail (@ferry/action-email
 * sends it, @ferry/action-imap appends it to a mailbox): recipients,
 * attachments and the body's content type.
 */

/** A plain address (`local@domain`), as the SMTP envelope takes it. */
export const EMAIL_ADDRESS = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;

/** A recipient: an email address, or a template (`{{...}}`) checked once rendered. */
export const emailRecipientSchema = Joi.string()
  .trim()
  .min(1)
  .max(320)
  .custom((v: string, h) =>
    v.includes('{{') || EMAIL_ADDRESS.test(v) ? v : h.message({ custom: '{{#label}} is not an email address (local@domain) nor a template' }),
  );

/**
 * An attachment: a virtual path of the user's files, or a template (`{{...}}`)
 * rendering one. `special` maps other accepted values first (e.g. the names
 * of generated attachments) and returns undefined for the rest.
 */
export function mailAttachmentSchema(special?: (v: string) => string | undefined): Joi.StringSchema {
  return Joi.string()
    .trim()
    .min(1)
    .max(4096)
    .custom((v: string, h) => {
      const mapped = special?.(v);
      if (mapped !== undefined) return mapped;
      if (v.includes('{{')) return v;
      try {
        normalizeVirtualPath(v);
      } catch (err) {
        return h.message({ custom: `{{#label}} is not a valid virtual path: ${(err as Error).message}` });
      }
      return v;
    });
}

/**
 * The content type a body gets when `content_type` is not set: HTML (1) when
 * it starts with an HTML tag (`<!doctype html>`, `<html>`, `<p>`, `<div>`,
 * `<table>`...), text (0) otherwise. Decided at save time and stored.
 */
export function mailContentTypeOf(body: string): 0 | 1 {
  return /^\s*(<!doctype\s+html|<(html|head|body|p|div|table|h[1-6]|ul|ol|span|a|b|strong|em|br|img|pre)[\s>/])/i.test(body) ? 1 : 0;
}
