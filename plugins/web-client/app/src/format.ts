/**
 * Numbers, sizes and dates in the language of the UI (the catalogue's, strings.ts `lang`), not the
 * browser's: the words around them are the catalogue's, their digits and separators must match.
 */
import { t } from './strings.js';

const UNITS = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte', 'petabyte'] as const;

/**
 * The formatters, made once per locale and style: building an Intl formatter costs far more than
 * using one (a list of 10,000 entries formats three dates and a size for each row it draws, at
 * every scroll frame; made anew each time, they took most of the frame).
 */
const formatters = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();
function cached<F extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, make: () => F): F {
  let f = formatters.get(key) as F | undefined;
  if (!f) {
    f = make();
    formatters.set(key, f);
  }
  return f;
}

export function formatSize(bytes: number, locale: string = t.lang): string {
  let i = 0;
  let v = bytes;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return cached(
    `size|${locale}|${i}`,
    () =>
      new Intl.NumberFormat(locale, {
        style: 'unit',
        unit: UNITS[i],
        unitDisplay: i === 0 ? 'long' : 'short',
        maximumFractionDigits: i === 0 ? 0 : 1,
      }),
  ).format(v);
}

/** A count (1,234 in English). */
export function formatNumber(n: number, locale: string = t.lang): string {
  return cached(`number|${locale}`, () => new Intl.NumberFormat(locale)).format(n);
}

/**
 * A date in the UI's language: `full`, the date and the time (wide screens);
 * `narrow`, the date alone in numbers (a phone's row, where the full form
 * would be cut off: the full one is then the cell's title).
 */
export function formatDate(iso: string, locale: string = t.lang, style: 'full' | 'narrow' = 'full'): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const options: Intl.DateTimeFormatOptions = style === 'full' ? { dateStyle: 'medium', timeStyle: 'short' } : { dateStyle: 'short' };
  return cached(`date|${locale}|${style}`, () => new Intl.DateTimeFormat(locale, options)).format(d);
}

/** Joins a directory and a name into an absolute path of the user's tree. */
export function joinPath(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}

/** The segments of a path, each with the path leading to it: '/a/b' → [{a, /a}, {b, /a/b}]. */
export function crumbs(dir: string): { name: string; path: string }[] {
  const out: { name: string; path: string }[] = [];
  let p = '';
  for (const name of dir.split('/').filter(Boolean)) {
    p += `/${name}`;
    out.push({ name, path: p });
  }
  return out;
}

/** True for a name a file or folder may have in one path segment. */
export function validName(name: string): boolean {
  return name.length > 0 && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0');
}
