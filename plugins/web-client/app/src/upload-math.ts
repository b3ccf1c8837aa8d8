/** The pure arithmetic of uploads: names on a conflict, speed and time left, the fingerprint of a file. */
import { t } from './strings.js';

/**
 * The name "keep both" gives: `name (1).ext`, `name (2).ext`... the first one
 * `taken` does not hold. The extension is what follows the last dot (not a
 * leading one: `.bashrc (1)`); a `(n)` already there is counted on.
 */
export function keepBothName(name: string, taken: (name: string) => boolean): string {
  const dot = name.lastIndexOf('.');
  const [stem0, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  const numbered = /^(.*) \((\d{1,9})\)$/.exec(stem0);
  const stem = numbered ? numbered[1]! : stem0;
  for (let n = numbered ? Number(numbered[2]) + 1 : 1; ; n++) {
    const candidate = `${stem} (${n})${ext}`;
    if (!taken(candidate)) return candidate;
  }
}

/**
 * Speed over a sliding window: samples of (time in ms, bytes sent so far);
 * the rate is the bytes of the window over its duration, so a stall shows
 * as a falling speed and a burst does not last.
 */
export class RateMeter {
  private samples: { at: number; sent: number }[] = [];
  constructor(private readonly windowMs = 4000) {}

  add(at: number, sent: number): void {
    const last = this.samples.at(-1);
    if (last && sent < last.sent) this.samples = []; // restarted (a retry from the server's offset counts from there)
    this.samples.push({ at, sent });
    // keep one sample at or before the window's start, so the window is full
    while (this.samples.length > 2 && this.samples[1]!.at <= at - this.windowMs) this.samples.shift();
  }

  /** Bytes per second, or 0 before two samples a moment apart. */
  rate(): number {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.at - first.at < 200) return 0;
    return ((last.sent - first.sent) * 1000) / (last.at - first.at);
  }
}

/** Seconds left for `remaining` bytes at `rate` bytes/s; undefined while the rate is unknown. */
export function secondsLeft(remaining: number, rate: number): number | undefined {
  if (remaining <= 0) return 0;
  if (!(rate > 0)) return undefined;
  return Math.ceil(remaining / rate);
}

/** Sums of several uploads: bytes, bytes sent, speed (the sum of the running ones') and time left. */
export function overall(items: readonly { size: number; sent: number; rate: number; active: boolean }[]) {
  let size = 0;
  let sent = 0;
  let rate = 0;
  for (const i of items) {
    size += i.size;
    sent += Math.min(i.sent, i.size);
    if (i.active) rate += i.rate;
  }
  return { size, sent, rate, secondsLeft: secondsLeft(size - sent, rate) };
}

/** What identifies a file picked again after a reload (never its content): its target, name, size and modification time. */
export function fingerprint(dest: string, file: { name: string; size: number; lastModified: number }): string {
  return JSON.stringify([dest, file.name, file.size, file.lastModified]);
}

/** A duration in the UI's language (strings.ts `lang`), to the second under a minute, then minutes, then hours and minutes. */
export function formatSeconds(seconds: number, locale: string = t.lang): string {
  const unit = (v: number, u: 'second' | 'minute' | 'hour') => new Intl.NumberFormat(locale, { style: 'unit', unit: u, unitDisplay: 'narrow' }).format(v);
  if (seconds < 60) return unit(Math.max(0, Math.round(seconds)), 'second');
  if (seconds < 3600) return unit(Math.round(seconds / 60), 'minute');
  const h = Math.floor(seconds / 3600);
  const m = Math.round((seconds % 3600) / 60);
  return m ? `${unit(h, 'hour')} ${unit(m, 'minute')}` : unit(h, 'hour');
}
