/**
 * Readable log lines for a terminal. `ferry serve` writes pino's JSON lines;
 * when its standard output is a terminal (and no log file is configured) the
 * CLI gives the logger a TerminalLog instead, which prints each line as
 * `12:00:01 INFO  message key=value`, says where Ferry listens in words, and
 * keeps what a newcomer needs (every listening address, the first admin's
 * generated password) for the banner printed once the server has started.
 * JSON stays the format everywhere else (files, pipes, services).
 */

/** pino's numeric levels. */
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Keys every line has, shown in their own places or not at all. */
const OWN_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'service', 'msg', 'component', 'err']);

const ANSI = { reset: '\x1b[0m', bold: '\x1b[1m', dim: '\x1b[2m', red: '\x1b[31m', green: '\x1b[32m', yellow: '\x1b[33m', cyan: '\x1b[36m' };
type Paint = (code: keyof typeof ANSI, s: string) => string;

/** The message of the lines that say where a server listens (`{uri, serves}`), in core and front-ends alike. */
export const LISTENING_MSG = 'listening';
/** The key of the first admin's generated password on its log line (app.ts). */
export const GENERATED_PASSWORD_KEY = 'generated_password';

export interface Listening {
  url: string;
  /** What the address serves: 'REST API', a front-end's protocol... */
  serves: string;
}

export interface TerminalLogOptions {
  /** ANSI colours (a terminal that has them, and no NO_COLOR). */
  color: boolean;
}

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/** One JSON log record as a readable line (more lines for an error's stack). */
export function formatRecord(rec: Record<string, unknown>, paint: Paint = (_c, s) => s): string {
  const level = typeof rec.level === 'number' ? rec.level : 30;
  const name = LEVELS[level] ?? String(level);
  const colour = level >= 50 ? 'red' : level >= 40 ? 'yellow' : level >= 30 ? 'green' : 'dim';
  const time = typeof rec.time === 'string' ? rec.time.slice(11, 19) : typeof rec.time === 'number' ? new Date(rec.time).toISOString().slice(11, 19) : '';
  const head = `${paint('dim', time)} ${paint(colour, name.padEnd(5))} ${rec.component ? paint('cyan', `[${String(rec.component)}] `) : ''}`;
  const msg = String(rec.msg ?? '');
  const rest = Object.keys(rec).filter((k) => !OWN_KEYS.has(k));
  let text: string;
  if (msg === LISTENING_MSG && typeof rec.uri === 'string') {
    text = `${paint('bold', `listening on ${rec.uri}`)}${rec.serves ? ` (${String(rec.serves)})` : ''}`;
    rest.splice(0, rest.length, ...rest.filter((k) => k !== 'uri' && k !== 'serves'));
  } else if (msg === 'request' && typeof rec.method === 'string') {
    text = `${String(rec.method).toUpperCase()} ${String(rec.path)} ${String(rec.status)} ${String(rec.ms)}ms`;
    rest.splice(0, rest.length, ...rest.filter((k) => !['method', 'path', 'status', 'ms'].includes(k)));
  } else text = msg;
  const fields = rest.map((k) => `${paint('dim', `${k}=`)}${value(rec[k])}`).join(' ');
  let out = `${head}${text}${fields ? ` ${fields}` : ''}`;
  const err = rec.err as { message?: string; stack?: string } | undefined;
  if (err && typeof err === 'object') {
    const stack = typeof err.stack === 'string' ? err.stack : String(err.message ?? '');
    out +=
      '\n' +
      stack
        .split('\n')
        .map((l) => `    ${paint('dim', l)}`)
        .join('\n');
  }
  return out;
}

/** The lines printed once the server has started: where it listens, and the generated admin password on the first start. */
export function formatBanner(listening: Listening[], admin: { username: string; password: string } | undefined, paint: Paint = (_c, s) => s): string {
  const rows: [string, string][] = listening.map((l) => [l.serves, l.url]);
  if (admin) rows.push(['first admin', `${admin.username}, password ${paint('bold', admin.password)} (generated: shown only this once, change it now)`]);
  const width = Math.max(0, ...rows.map(([k]) => k.length));
  const title = listening.length ? 'Ferry is ready' : 'Ferry started, listening nowhere (no binding in httpd.bindings)';
  return ['', `  ${paint('bold', title)}`, ...rows.map(([k, v]) => `    ${k.padEnd(width)}  ${v}`), ''].join('\n') + '\n';
}

/** A pino destination writing readable lines to a terminal; remembers the listening addresses and the generated password. */
export class TerminalLog {
  readonly listening: Listening[] = [];
  admin: { username: string; password: string } | undefined;
  private readonly paint: Paint;

  constructor(
    private readonly out: { write(s: string): unknown },
    o: TerminalLogOptions,
  ) {
    this.paint = o.color ? (c, s) => `${ANSI[c]}${s}${ANSI.reset}` : (_c, s) => s;
  }

  /** pino writes one JSON line per call. */
  write(line: string): boolean {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.out.write(line);
      return true;
    }
    if (rec.msg === LISTENING_MSG && typeof rec.uri === 'string') this.listening.push({ url: rec.uri, serves: String(rec.serves ?? 'HTTP') });
    if (typeof rec[GENERATED_PASSWORD_KEY] === 'string') this.admin = { username: String(rec.username ?? 'admin'), password: rec[GENERATED_PASSWORD_KEY] };
    this.out.write(formatRecord(rec, this.paint) + '\n');
    return true;
  }

  /** The banner for what was seen so far. */
  banner(): string {
    return formatBanner(this.listening, this.admin, this.paint);
  }
}
