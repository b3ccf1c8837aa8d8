import net from 'node:net';
import { inject, injectable } from 'tsyringe';
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { TOKENS } from '../tokens.js';
import { lazyModule } from '../sdk/lazy-module.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { MailSender } from '../sdk/host.js';
import type { MailMessage, MailResult } from '../sdk/mail.js';

export type { MailAttachment, MailMessage, MailResult } from '../sdk/mail.js';

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

/**
 * Sends mail through the configured SMTP server (nodemailer). One transport
 * per app, created on first use.
 */
/** nodemailer (about 650 KB of modules), imported when the first mail is sent. */
const nodemailerModule = lazyModule(() => import('nodemailer'));

@injectable()
export class Mailer implements MailSender {
  private readonly cfg: SmtpConfig;
  private transport: Transporter<SMTPTransport.SentMessageInfo> | null = null;

  constructor(
    @inject(TOKENS.Config) config: FerryConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {
    this.cfg = { ...DEFAULT_SMTP_CONFIG, ...((config as unknown as { smtp?: Partial<SmtpConfig> }).smtp ?? {}) };
  }

  get configured(): boolean {
    return Boolean(this.cfg.host);
  }

  private transportOptions(socket?: net.Socket): SMTPTransport.Options {
    const c = this.cfg;
    const method = ['PLAIN', 'LOGIN', 'CRAM-MD5'][c.auth_type] ?? 'PLAIN';
    return {
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
      ...(socket ? { socket } : {}),
    };
  }

  private async getTransport(): Promise<Transporter<SMTPTransport.SentMessageInfo>> {
    if (!this.cfg.host) throw new Error('no SMTP server is configured (config section smtp)');
    const nodemailer = (await nodemailerModule.load()).default;
    this.transport ??= nodemailer.createTransport(this.transportOptions());
    return this.transport;
  }

  /**
   * Sends one mail. With `signal`, the mail goes over a connection of its
   * own whose socket is destroyed when the signal aborts: the send then
   * rejects with the signal's reason, whatever SMTP step it is in.
   */
  async send(m: MailMessage, o: { signal?: AbortSignal } = {}): Promise<MailResult> {
    if (!m.to.length && !m.bcc?.length) throw new Error('a mail needs at least one recipient');
    const signal = o.signal;
    const reason = () => (signal?.reason instanceof Error ? signal.reason : new Error('mail sending aborted'));
    if (signal?.aborted) throw reason();
    let transport: Transporter<SMTPTransport.SentMessageInfo> = await this.getTransport();
    let socket: net.Socket | undefined;
    const onAbort = () => socket?.destroy(reason());
    if (signal) {
      if (signal.aborted) throw reason();
      socket = new net.Socket();
      transport = (await nodemailerModule.load()).default.createTransport(this.transportOptions(socket));
      signal.addEventListener('abort', onAbort, { once: true });
    }
    let info: SMTPTransport.SentMessageInfo;
    try {
      info = await transport.sendMail({
        from: this.cfg.from || this.cfg.user || undefined,
        to: m.to,
        bcc: m.bcc?.length ? m.bcc : undefined,
        subject: m.subject,
        ...(m.html ? { html: m.body } : { text: m.body }),
        attachments: m.attachments,
      });
    } catch (err) {
      if (signal?.aborted) throw reason();
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (socket) {
        socket.destroy();
        transport.close();
      }
    }
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
