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
  /**
   * Where the JSON lines go instead of the file or stdout, one per write and at once (no batching):
   * the CLI's readable lines for a terminal (ops/terminal-log.ts).
   */
  stream?: { write(line: string): unknown };
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

/** The message of the access log's lines (one per HTTP request, http/server.ts). */
export const ACCESS_LOG_MSG = 'request';
/** Access-log lines are written once this many bytes wait, or ACCESS_LOG_FLUSH_MS later. */
export const ACCESS_LOG_BATCH = 8192;
export const ACCESS_LOG_FLUSH_MS = 1000;

/**
 * Creates the root logger: JSON lines, secrets redacted by key. The access
 * log's lines (one per request) are written in batches (ACCESS_LOG_BATCH
 * bytes, or ACCESS_LOG_FLUSH_MS later: a write per request cost more than
 * the rest of a small request's logging); any other line is written at
 * once, with the access lines before it. What waits is written at exit.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const options = {
    level: opts.level ?? 'info',
    base: { service: 'ferry' },
    redact: { paths: redactPaths(), censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (opts.stream) return pino(options, opts.stream);
  const destination = opts.file
    ? pino.destination({ dest: opts.file, mkdir: true, sync: false, minLength: ACCESS_LOG_BATCH, periodicFlush: ACCESS_LOG_FLUSH_MS })
    : pino.destination({ dest: 1, sync: false, minLength: ACCESS_LOG_BATCH, periodicFlush: ACCESS_LOG_FLUSH_MS });
  const flushNow = writeOutNow(destination);
  return pino(
    {
      ...options,
      hooks: {
        logMethod(args, method) {
          method.apply(this, args);
          // a line other than the access log's goes out now (startup, warnings, errors: what a reader waits for)
          if (args[1] !== ACCESS_LOG_MSG && args[0] !== ACCESS_LOG_MSG) flushNow();
        },
      },
    },
    destination,
  );
}

/**
 * Writes what the destination holds now, or as soon as the write (or the
 * opening of the file) in progress is over: sonic-boom's flush() does
 * nothing while it writes, and would wait for the next batch.
 */
function writeOutNow(destination: ReturnType<typeof pino.destination>): () => void {
  const state = destination as unknown as { _len: number; _writing: boolean; destroyed: boolean };
  let waiting = false;
  const now = (): void => {
    if (state.destroyed || state._len === 0) return;
    if (!state._writing) return destination.flush();
    if (waiting) return;
    waiting = true;
    const again = () => {
      destination.off('write', again);
      destination.off('ready', again);
      waiting = false;
      now();
    };
    destination.on('write', again);
    destination.on('ready', again);
  };
  return now;
}

/** A logger that writes nothing (tests, tools). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** Levels an admin may set at run time (GET/PUT /api/v2/logs/level, docs/operations.md). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Children of each tracked root logger (pino children keep the level they were created with). */
const trees = new WeakMap<Logger, Set<WeakRef<Logger>>>();

/**
 * Follows every child (and grandchild) created from `root` from now on, so
 * that setLogLevel reaches the loggers of components created at start-up.
 * Idempotent; call it before the children are created.
 */
export function trackLogLevel(root: Logger): void {
  if (trees.has(root)) return;
  const children = new Set<WeakRef<Logger>>();
  trees.set(root, children);
  const previous = root.onChild;
  // pino children are created with Object.create(parent): they inherit onChild, so grandchildren are tracked too
  root.onChild = (child: Logger) => {
    previous?.call(root, child);
    children.add(new WeakRef(child));
    if (children.size % 1024 === 0) for (const r of children) if (!r.deref()) children.delete(r);
  };
}

/** The level of `root` now. */
export function logLevelOf(root: Logger): LogLevel {
  return root.level as LogLevel;
}

/** Sets the level of `root` and of every child tracked by trackLogLevel; returns the previous level. */
export function setLogLevel(root: Logger, level: LogLevel): LogLevel {
  const previous = logLevelOf(root);
  root.level = level;
  for (const r of trees.get(root) ?? []) {
    const child = r.deref();
    if (child) child.level = level;
  }
  return previous;
}
