import type { Readable } from 'node:stream';

// The mail a plugin sends through the server's SMTP settings (PluginHost.mail; core's ops/mailer.ts).

export interface MailAttachment {
  filename: string;
  /** A local file to attach (streamed). */
  path?: string;
  /** The bytes, or a stream read while the message is sent (its error fails the send). */
  content?: string | Buffer | Readable;
  contentType?: string;
}

export interface MailMessage {
  to: string[];
  bcc?: string[];
  subject: string;
  /** Plain text body, or HTML when `html` is true. */
  body: string;
  html?: boolean;
  attachments?: MailAttachment[];
}

export interface MailResult {
  accepted: string[];
  rejected: string[];
  messageId: string;
}
