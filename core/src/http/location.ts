import { toWellFormed } from '../util/well-formed.js';

/**
 * The Location header of a created object: `base` followed by the segments,
 * each percent-encoded. Never throws, so an answer cannot fail after the object
 * was stored: encodeURIComponent throws on a lone surrogate, which the input
 * check (http/input-check.ts) refuses before any handler, and which would be
 * U+FFFD here if it ever came from elsewhere.
 */
export function locationOf(base: string, ...segments: (string | number)[]): string {
  return [base, ...segments.map((s) => encodeURIComponent(toWellFormed(String(s))))].join('/');
}

/**
 * The body of a 201 answer, rendered after the object was stored. When the
 * rendering fails, the object is removed again (`undo`) before the error is
 * answered, so a failed create leaves nothing behind; if the removal fails
 * too, both errors are reported (as a 500, logged by the server).
 */
export async function renderCreated<T>(render: () => Promise<T> | T, undo: () => Promise<unknown>): Promise<T> {
  try {
    return await render();
  } catch (err) {
    try {
      await undo();
    } catch (undoErr) {
      throw new AggregateError([err, undoErr], 'the answer to a create failed, and removing the created object failed too');
    }
    throw err;
  }
}
