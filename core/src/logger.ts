import { pino } from 'pino';

export type Logger = pino.Logger;

/** Keys whose values are never written to a log line, wherever they appear. */
export const REDACTED_KEYS = [
  'password',
  'current_password',
  'new_password',
  'access_token',
  'token',
  'key',
  'api_key',
  'secret',
  'payload',
  'passphrase',
  'access_secret',
  'account_key',
  'private_key',
  'authorization',
  'x-service-api-key',
  'x-service-otp',
  'cookie',
];

export interface LoggerOptions {
  level?: string;
  /** Log file path; stdout when empty. */
  file?: string;
}

function redactPaths(): string[] {
  const out: string[] = [];
  for (const k of REDACTED_KEYS) {
    const key = /^[a-z_]+$/.test(k) ? k : `["${k}"]`;
    const sep = key.startsWith('[') ? '' : '.';
    out.push(key, `*${sep}${key}`, `*.*${sep}${key}`, `req.headers${sep}${key}`);
  }
  return out;
}

/** Creates the root logger: JSON lines, secrets redacted by key. */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const destination = opts.file ? pino.destination({ dest: opts.file, mkdir: true, sync: false }) : pino.destination(1);
  return pino(
    {
      level: opts.level ?? 'info',
      base: { service: 'ferry' },
      redact: { paths: redactPaths(), censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/** A logger that writes nothing (tests, tools). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
