/** Outcome of a Range header against a representation of `size` bytes. */
export type RangeResult =
  /** No usable range: send the whole representation (200). */
  | { kind: 'full' }
  /** One satisfiable range, bounds inclusive (206). */
  | { kind: 'partial'; start: number; end: number }
  /** Syntactically valid but nothing satisfiable (416). */
  | { kind: 'unsatisfiable' };

/**
 * The longest Range header read: one range of two safe integers fits in 40
 * characters; the rest allows for optional whitespace. A longer header (many
 * ranges, or padding) is ignored before any parsing, so its cost is bounded.
 */
export const MAX_RANGE_HEADER = 256;

/**
 * Parses a Range header (RFC 9110 §14.2) for a single byte range:
 * `bytes=a-b`, `bytes=a-`, `bytes=-n`. Malformed headers, other units,
 * multi-range requests and headers over {@link MAX_RANGE_HEADER} characters
 * are ignored (the whole file is sent, as the RFC allows).
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (!header || header.length > MAX_RANGE_HEADER) return { kind: 'full' };
  const m = /^\s*bytes\s*=\s*(.+)$/i.exec(header);
  if (!m) return { kind: 'full' };
  const specs = m[1]!
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  if (specs.length !== 1) return { kind: 'full' };
  const r = /^(\d*)\s*-\s*(\d*)$/.exec(specs[0]!);
  if (!r || (r[1] === '' && r[2] === '')) return { kind: 'full' };
  if (r[1] === '') {
    const suffix = Number(r[2]);
    if (!Number.isSafeInteger(suffix)) return { kind: 'full' };
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(r[1]);
  const end = r[2] === '' ? size - 1 : Number(r[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) return { kind: 'full' };
  if (r[2] !== '' && end < start) return { kind: 'full' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}

/** Strong entity tag of a file: the backend's own when it has one, else modification time and size. */
export function entityTag(info: { etag?: string; size: number; mtime: Date }): string {
  if (info.etag) {
    const bare = info.etag.replace(/^W\//, '').replace(/^"|"$/g, '');
    if (/^[\x21\x23-\x7e]+$/.test(bare)) return `"${bare}"`;
  }
  return `"${Math.floor(info.mtime.getTime()).toString(16)}-${info.size.toString(16)}"`;
}

/** If-None-Match: true when one of the listed tags (weak comparison) or '*' matches. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

/** If-Modified-Since: true when the file has not changed since the date (second precision). */
export function notModifiedSince(header: string | undefined, mtime: Date): boolean {
  if (!header) return false;
  const since = Date.parse(header);
  if (Number.isNaN(since)) return false;
  return Math.floor(mtime.getTime() / 1000) <= Math.floor(since / 1000);
}

/** If-Range: the range applies only when the validator still matches (strong ETag or exact Last-Modified date). */
export function ifRangeMatches(header: string | undefined, etag: string, mtime: Date): boolean {
  if (!header) return true;
  const v = header.trim();
  if (v.startsWith('"') || v.startsWith('W/')) return !v.startsWith('W/') && v === etag;
  const d = Date.parse(v);
  return !Number.isNaN(d) && Math.floor(d / 1000) === Math.floor(mtime.getTime() / 1000);
}
