import type { ActionTypeDef, PluginHost } from '@ferry/core';
import { runSignal } from '@ferry/core';
import { ADDRESS, contentTypeOf, emailOptionsSchema, type EmailOptions, type EmailPluginConfig } from './config.schema.js';
import { AttachmentSet, humanBytes } from './attachments.js';

/** Why email actions cannot be saved on this server, or undefined when a mail server is configured. */
export function mailUnavailable(host: Pick<PluginHost, 'mail'>): string | undefined {
  return host.mail.configured ? undefined : 'no mail server is configured: set smtp.host (and the other smtp settings) in the configuration';
}

/** Rendered address fields: blanks dropped (a template may render nothing), the rest must be addresses. */
function addresses(list: string[], field: string): string[] {
  const out: string[] = [];
  for (const [i, raw] of list.entries()) {
    const v = raw.trim();
    if (!v) continue;
    if (!ADDRESS.test(v)) throw new Error(`${field}[${i}] rendered to ${JSON.stringify(v)}, which is not an email address`);
    out.push(v);
  }
  return out;
}

/**
 * Type 3 (`email_config`): an email through the core's mailer (config
 * `smtp`). Attachments are the event user's files (any backend, streamed
 * while the mail is sent) and the generated `.RetentionChecks` (one JSON
 * file) / `.EventReports` (the report files); their total is capped by the
 * plugin config. The whole send is bounded by the plugin's `timeout` and
 * stops when the execution is cancelled.
 */
export function emailActionDef(config: EmailPluginConfig, host: PluginHost): ActionTypeDef<EmailOptions> {
  return {
    type: 3,
    key: 'email',
    optionsKey: 'email_config',
    optionsSchema: emailOptionsSchema,
    templateFields: ['recipients[]', 'bcc[]', 'subject', 'body', 'attachments[]'],
    unavailable: () => mailUnavailable(host),
    create: (o) => ({
      async execute(ctx) {
        const to = addresses(o.recipients ?? [], 'recipients');
        const bcc = addresses(o.bcc ?? [], 'bcc');
        if (!to.length && !bcc.length) throw new Error('no recipient: every recipient and bcc address rendered empty');
        const subject = o.subject.replace(/[\r\n]+/g, ' ').trim();
        const run = runSignal(ctx.signal, config.timeout * 1000);
        const signal = run.signal;
        const atts = new AttachmentSet(host, ctx, config.max_attachments_size);
        const started = Date.now();
        try {
          await atts.add(o.attachments ?? [], signal);
          const res = await host.mail.send(
            { to, bcc, subject, body: o.body, html: (o.content_type ?? contentTypeOf(o.body)) === 1, attachments: atts.list },
            { signal },
          );
          ctx.logger.info(
            {
              to: to.length,
              bcc: bcc.length,
              accepted: res.accepted.length,
              rejected: res.rejected,
              attachments: atts.list.map((a) => a.filename),
              elapsed: Date.now() - started,
            },
            'email sent',
          );
        } catch (err) {
          if (run.timedOut) throw new Error(`sending the email timed out after ${config.timeout} s (plugin config timeout)`);
          if (ctx.signal.aborted) throw new Error(`sending the email was cancelled: ${(ctx.signal.reason as Error)?.message ?? 'aborted'}`);
          throw new Error(`unable to send the email: ${(err as Error).message}`);
        } finally {
          run.dispose();
          await atts.close();
        }
      },
    }),
  };
}

export { humanBytes };
