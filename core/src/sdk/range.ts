import { FsError, FsErrorCode } from '../fs/fs-error.js';
import type { ReadOptions } from '../fs/fs.contract.js';

/** An inclusive byte range inside a file of known size. */
export interface ByteRange {
  start: number;
  /** Last byte, inclusive (always < size). */
  end: number;
}

/**
 * Resolves ReadOptions.start/end against a file size using the range rules
 * the conformance suite checks (`@ferry/testkit`):
 *
 * - `start` defaults to 0, `end` to the last byte; an `end` past the last
 *   byte is clamped to it (like an HTTP Range).
 * - A `start` at or past the end of the file (including any read of an empty
 *   file) is not an error: the result is `null`, meaning "an empty stream".
 * - A negative or non-integer bound, or `start > end`, fails with INVALID.
 */
export function resolveReadRange(o: Pick<ReadOptions, 'start' | 'end'>, size: number, path = ''): ByteRange | null {
  const start = o.start ?? 0;
  for (const [name, v] of [
    ['start', start],
    ['end', o.end ?? 0],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0) {
      throw new FsError(FsErrorCode.Invalid, `${path}: range ${name} must be a non-negative integer`, { path });
    }
  }
  if (o.end !== undefined && start > o.end) {
    throw new FsError(FsErrorCode.Invalid, `${path}: range start ${start} is after range end ${o.end}`, { path });
  }
  if (start >= size) return null;
  return { start, end: Math.min(o.end ?? size - 1, size - 1) };
}
