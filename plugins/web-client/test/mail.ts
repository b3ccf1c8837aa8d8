/**
 * The core tests' SMTP receiver (core/test/helpers/smtp.ts: smtp-server and mailparser), loaded at run
 * time from core's test build (npm run build compiles core/test): it is outside this package's build.
 */
import type { Test } from 'tap';

export interface Smtp {
  port: number;
  mails: { rcptTo: string[]; parsed: { text?: string } }[];
  start(): Promise<Smtp>;
  waitFor(to: string, from?: number): Promise<{ parsed: { text?: string } }>;
  stop(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 that keeps what it receives, stopped when `t` ends. */
export async function startSmtp(t: Test): Promise<Smtp> {
  const helper = new URL('../../../core/dist/test/helpers/smtp.js', import.meta.url).href;
  const { TestSmtp } = (await import(helper)) as { TestSmtp: new () => Smtp };
  const smtp = await new TestSmtp().start();
  t.teardown(() => smtp.stop());
  return smtp;
}

/** Ferry's `smtp` configuration sending to it. */
export const smtpConfig = (smtp: Smtp) => ({ host: '127.0.0.1', port: smtp.port, from: 'Ferry <ferry@example.com>' });
