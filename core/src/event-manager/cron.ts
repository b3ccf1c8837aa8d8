/**
 * Cron-style schedules of trigger-3 rules (Schedule: minute, hour,
 * day_of_month, month, day_of_week), evaluated in UTC at minute precision.
 *
 * Each field takes `*`, a value, a range `a-b`, a step `*\/n` or `a-b/n` or
 * `a/n`, and comma-separated lists of these. Months and weekdays also take
 * English three-letter names (`jan`, `mon`); weekday 7 is Sunday like 0.
 * As in cron, when both day_of_month and day_of_week are restricted a day
 * matching either one matches. A missing `minute` means minute 0.
 */
export interface Schedule {
  minute?: string;
  hour: string;
  day_of_week: string;
  day_of_month: string;
  month: string;
}

interface FieldSpec {
  name: keyof Schedule;
  min: number;
  max: number;
  names?: string[];
}

const FIELDS: FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day_of_month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] },
  { name: 'day_of_week', min: 0, max: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

export class CronError extends Error {}

interface ParsedField {
  values: Set<number>;
  star: boolean;
}

export interface CompiledSchedule {
  minute: ParsedField;
  hour: ParsedField;
  day_of_month: ParsedField;
  month: ParsedField;
  day_of_week: ParsedField;
}

function parseValue(s: string, f: FieldSpec): number {
  const lower = s.toLowerCase();
  const idx = f.names?.indexOf(lower) ?? -1;
  if (idx >= 0) return f.name === 'month' ? idx + 1 : idx;
  if (!/^\d+$/.test(s)) throw new CronError(`${f.name}: "${s}" is not a number`);
  const n = Number(s);
  if (n < f.min || n > f.max) throw new CronError(`${f.name}: ${n} is out of range ${f.min}-${f.max}`);
  return n;
}

function parseField(raw: string | undefined, f: FieldSpec): ParsedField {
  const src = (raw ?? '').trim();
  if (!src) throw new CronError(`${f.name} is empty`);
  const values = new Set<number>();
  let star = false;
  for (const part of src.split(',')) {
    const [range, stepStr, extra] = part.trim().split('/');
    if (extra !== undefined || range === undefined || range === '') throw new CronError(`${f.name}: "${part}" is malformed`);
    let step = 1;
    if (stepStr !== undefined) {
      if (!/^\d+$/.test(stepStr) || Number(stepStr) < 1) throw new CronError(`${f.name}: step "${stepStr}" must be a positive integer`);
      step = Number(stepStr);
    }
    let lo: number;
    let hi: number;
    if (range === '*') {
      lo = f.min;
      hi = f.name === 'day_of_week' ? 6 : f.max;
      if (stepStr === undefined) star = true;
    } else if (range.includes('-')) {
      const [a, b, more] = range.split('-');
      if (more !== undefined || !a || !b) throw new CronError(`${f.name}: range "${range}" is malformed`);
      lo = parseValue(a, f);
      hi = parseValue(b, f);
      if (lo > hi) throw new CronError(`${f.name}: range "${range}" is reversed`);
    } else {
      lo = parseValue(range, f);
      hi = stepStr !== undefined ? (f.name === 'day_of_week' ? 6 : f.max) : lo;
    }
    for (let v = lo; v <= hi; v += step) values.add(f.name === 'day_of_week' && v === 7 ? 0 : v);
  }
  return { values, star };
}

/** Parses a schedule; throws CronError naming the bad field. */
export function compileSchedule(s: Schedule): CompiledSchedule {
  const out: Partial<CompiledSchedule> = {};
  for (const f of FIELDS) {
    const raw = f.name === 'minute' && (s.minute === undefined || s.minute === '') ? '0' : s[f.name];
    out[f.name] = parseField(raw, f);
  }
  return out as CompiledSchedule;
}

/** True when the UTC minute of `at` matches the schedule. */
export function scheduleMatches(c: CompiledSchedule, at: Date): boolean {
  if (!c.minute.values.has(at.getUTCMinutes())) return false;
  if (!c.hour.values.has(at.getUTCHours())) return false;
  if (!c.month.values.has(at.getUTCMonth() + 1)) return false;
  const dom = c.day_of_month.values.has(at.getUTCDate());
  const dow = c.day_of_week.values.has(at.getUTCDay());
  if (c.day_of_month.star || c.day_of_week.star) return dom && dow;
  return dom || dow;
}
