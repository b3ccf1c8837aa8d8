import { GoNamedInt, GoTime } from './values.js';

/**
 * Go's time.Time.Format for times in UTC (the only location Ferry renders in),
 * and the accessor methods templates call on time values.
 */

const longDays = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const longMonths = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

/** Layout chunks, longest first where prefixes collide (Go's nextStdChunk order). */
const chunks: [string, (t: Fields) => string][] = [
  ['January', (t) => longMonths[t.month - 1]!],
  ['Jan', (t) => longMonths[t.month - 1]!.slice(0, 3)],
  ['Monday', (t) => longDays[t.weekday]!],
  ['Mon', (t) => longDays[t.weekday]!.slice(0, 3)],
  ['MST', () => 'UTC'],
  ['01', (t) => pad(t.month, 2)],
  ['02', (t) => pad(t.day, 2)],
  ['03', (t) => pad(t.hour % 12 === 0 ? 12 : t.hour % 12, 2)],
  ['04', (t) => pad(t.minute, 2)],
  ['05', (t) => pad(t.second, 2)],
  ['06', (t) => pad(t.year % 100, 2)],
  ['002', (t) => pad(t.yday, 3)],
  ['2006', (t) => pad(t.year, 4)],
  ['15', (t) => pad(t.hour, 2)],
  ['1', (t) => String(t.month)],
  ['2', (t) => String(t.day)],
  ['_2', (t) => String(t.day).padStart(2, ' ')],
  ['__2', (t) => String(t.yday).padStart(3, ' ')],
  ['3', (t) => String(t.hour % 12 === 0 ? 12 : t.hour % 12)],
  ['4', (t) => String(t.minute)],
  ['5', (t) => String(t.second)],
  ['PM', (t) => (t.hour >= 12 ? 'PM' : 'AM')],
  ['pm', (t) => (t.hour >= 12 ? 'pm' : 'am')],
  ['Z070000', () => 'Z'],
  ['Z07:00:00', () => 'Z'],
  ['Z0700', () => 'Z'],
  ['Z07:00', () => 'Z'],
  ['Z07', () => 'Z'],
  ['-070000', () => '+000000'],
  ['-07:00:00', () => '+00:00:00'],
  ['-0700', () => '+0000'],
  ['-07:00', () => '+00:00'],
  ['-07', () => '+00'],
];

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  nsec: number;
  weekday: number;
  yday: number;
}

function fields(t: GoTime): Fields {
  const d = t.date();
  const start = Date.UTC(d.getUTCFullYear(), 0, 1);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    nsec: t.nsec,
    weekday: d.getUTCDay(),
    yday: Math.floor((d.getTime() - start) / 86400000) + 1,
  };
}

/** Matches a fractional-second chunk (.000 / ,999...) after a digit-free position. */
function fraction(layout: string, i: number): [string, number] | null {
  const sep = layout[i];
  if ((sep !== '.' && sep !== ',') || i + 1 >= layout.length) return null;
  const digit = layout[i + 1];
  if (digit !== '0' && digit !== '9') return null;
  let j = i + 1;
  while (j < layout.length && layout[j] === digit) j++;
  // Go only treats it as a fraction when no digit follows the run.
  if (j < layout.length && layout[j]! >= '0' && layout[j]! <= '9') return null;
  return [layout.slice(i, j), j];
}

function formatFraction(chunk: string, nsec: number): string {
  const sep = chunk[0]!;
  const n = chunk.length - 1;
  let digits = pad(nsec, 9).slice(0, n);
  if (chunk[1] === '9') {
    digits = digits.replace(/0+$/, '');
    return digits ? sep + digits : '';
  }
  return sep + digits;
}

/** time.Time.Format(layout) in UTC. */
export function formatTime(t: GoTime, layout: string): string {
  const f = fields(t);
  let out = '';
  let i = 0;
  outer: while (i < layout.length) {
    const frac = fraction(layout, i);
    if (frac) {
      out += formatFraction(frac[0], f.nsec);
      i = frac[1];
      continue;
    }
    for (const [chunk, render] of chunks) {
      if (!layout.startsWith(chunk, i)) continue;
      // Go's special cases: "Jan"/"Mon" style words must not run into lowercase letters.
      if ((chunk === 'Jan' || chunk === 'Mon') && /^[a-z]/.test(layout.slice(i + 3))) break;
      // "_2006" is a literal "_" followed by the year.
      if (chunk === '_2' && layout.startsWith('006', i + 2)) break;
      out += render(f);
      i += chunk.length;
      continue outer;
    }
    out += layout[i];
    i++;
  }
  return out;
}

/** time.Time.String(): 2006-01-02 15:04:05.999999999 +0000 UTC. */
export function timeString(t: GoTime): string {
  return formatTime(t, '2006-01-02 15:04:05.999999999 -0700 MST');
}

/** RFC 3339 with nanoseconds, as encoding/json writes a time.Time. */
export function timeJSON(t: GoTime): string {
  return formatTime(t, '2006-01-02T15:04:05.999999999Z07:00');
}

/** Methods a template can call on a time value, like Go's time.Time methods. */
export function timeMethod(t: GoTime, name: string): ((...args: unknown[]) => unknown) | undefined {
  const f = () => fields(t);
  switch (name) {
    case 'Format':
      return (layout: unknown) => formatTime(t, String(layout));
    case 'String':
      return () => timeString(t);
    case 'UTC':
    case 'Local':
      return () => t;
    case 'Unix':
      return () => t.sec;
    case 'UnixMilli':
      return () => t.sec * 1000 + Math.floor(t.nsec / 1e6);
    case 'UnixMicro':
      return () => t.sec * 1e6 + Math.floor(t.nsec / 1e3);
    case 'UnixNano':
      return () => BigInt(t.sec) * 1000000000n + BigInt(t.nsec);
    case 'Year':
      return () => f().year;
    case 'Month':
      return () => new GoNamedInt(f().month, 'time.Month', longMonths[f().month - 1]!);
    case 'Day':
      return () => f().day;
    case 'Hour':
      return () => f().hour;
    case 'Minute':
      return () => f().minute;
    case 'Second':
      return () => f().second;
    case 'Nanosecond':
      return () => t.nsec;
    case 'YearDay':
      return () => f().yday;
    case 'Weekday':
      return () => new GoNamedInt(f().weekday, 'time.Weekday', longDays[f().weekday]!);
    case 'IsZero':
      return () => t.sec === -62135596800 && t.nsec === 0;
  }
  return undefined;
}
