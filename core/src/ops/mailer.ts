import { inject, injectable } from 'tsyringe';
import nodemailer, { type Transporter } from 'nodemailer';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';

/** Config section `smtp`: the mail server Ferry sends notifications through. */
export interface SmtpConfig {
  /** Empty: mail is disabled and sending fails with a clear error. */
  host: string;
  port: number;
  /** Sender address, e.g. `Ferry <ferry@example.com>`. */
  from: string;
  user: string;
  password: string;
  /** 0 PLAIN, 1 LOGIN, 2 CRAM-MD5 (used only with a user). */
  auth_type: 0 | 1 | 2;
  /** 0 none (STARTTLS is not attempted), 1 implicit TLS, 2 STARTTLS required. */
  encryption: 0 | 1 | 2;
  /** Name sent in EHLO (default: the host name). */
  domain: string;
  skip_tls_verify: boolean;
}

export const DEFAULT_SMTP_CONFIG: SmtpConfig = {
  host: '',
  port: 25,
  from: '',
  user: '',
  password: '',
  auth_type: 0,
  encryption: 0,
  domain: '',
  skip_tls_verify: false,
};

export interface MailAttachment {
  filename: string;
  /** A local file to attach (streamed). */
  path?: string;
  content?: string | Buffer;
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

/**
 * Sends mail through the configured SMTP server (nodemailer). One transport
 * per app, created on first use.
 */
@injectable()
export class Mailer {
  private readonly cfg: SmtpConfig;
  private transport: Transporter | null = null;

  constructor(
    @inject(TOKENS.Config) config: FerryConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {
    this.cfg = { ...DEFAULT_SMTP_CONFIG, ...((config as unknown as { smtp?: Partial<SmtpConfig> }).smtp ?? {}) };
  }

  get configured(): boolean {
    return Boolean(this.cfg.host);
  }

  private getTransport(): Transporter {
    if (!this.cfg.host) throw new Error('no SMTP server is configured (config section smtp)');
    if (!this.transport) {
      const c = this.cfg;
      const method = ['PLAIN', 'LOGIN', 'CRAM-MD5'][c.auth_type] ?? 'PLAIN';
      this.transport = nodemailer.createTransport({
        host: c.host,
        port: c.port,
        secure: c.encryption === 1,
        requireTLS: c.encryption === 2,
        ignoreTLS: c.encryption === 0,
        name: c.domain || undefined,
        auth: c.user ? { user: c.user, pass: c.password } : undefined,
        authMethod: c.user ? method : undefined,
        tls: { rejectUnauthorized: !c.skip_tls_verify },
        connectionTimeout: 30_000,
        greetingTimeout: 30_000,
        socketTimeout: 60_000,
      });
    }
    return this.transport;
  }

  async send(m: MailMessage): Promise<MailResult> {
    if (!m.to.length && !m.bcc?.length) throw new Error('a mail needs at least one recipient');
    const info = await this.getTransport().sendMail({
      from: this.cfg.from || this.cfg.user || undefined,
      to: m.to,
      bcc: m.bcc?.length ? m.bcc : undefined,
      subject: m.subject,
      ...(m.html ? { html: m.body } : { text: m.body }),
      attachments: m.attachments,
    });
    const addr = (a: unknown) => (typeof a === 'string' ? a : ((a as { address?: string }).address ?? ''));
    const res = { accepted: (info.accepted ?? []).map(addr), rejected: (info.rejected ?? []).map(addr), messageId: info.messageId };
    this.logger.info({ component: 'mailer', to: m.to.length, bcc: m.bcc?.length ?? 0, accepted: res.accepted.length, rejected: res.rejected }, 'mail sent');
    if (!res.accepted.length) throw new Error(`every recipient was rejected: ${res.rejected.join(', ')}`);
    return res;
  }

  close(): void {
    this.transport?.close();
    this.transport = null;
  }
}
