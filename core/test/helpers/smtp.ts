/**
 * An SMTP receiver for core tests: smtp-server in-process on 127.0.0.1
 * (STARTTLS disabled: the package's bundled certificate is expired), each
 * message parsed with mailparser and kept with its envelope.
 */
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export interface ReceivedMail {
  rcptTo: string[];
  parsed: ParsedMail;
}

export class TestSmtp {
  readonly mails: ReceivedMail[] = [];
  port = 0;
  private waiters: (() => void)[] = [];
  private readonly server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    onData: (stream, session, cb) => {
      simpleParser(stream).then(
        (parsed) => {
          this.mails.push({ rcptTo: session.envelope.rcptTo.map((r) => r.address), parsed });
          for (const w of this.waiters.splice(0)) w();
          cb();
        },
        (err: Error) => cb(err),
      );
    },
  });

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.server.address() as { port: number }).port;
    return this;
  }

  /** The next mail to `to` received after `from` mails (waits up to `ms`). */
  async waitFor(to: string, from = 0, ms = 10_000): Promise<ReceivedMail> {
    const deadline = Date.now() + ms;
    for (;;) {
      const m = this.mails.slice(from).find((x) => x.rcptTo.includes(to));
      if (m) return m;
      if (Date.now() > deadline) throw new Error(`no mail to ${to} within ${ms} ms`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200);
      });
    }
  }

  stop(): Promise<void> {
    return new Promise<void>((r) => this.server.close(() => r()));
  }
}
