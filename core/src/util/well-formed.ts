/** A lone UTF-16 surrogate: a high one not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * What makes a string unfit for a name, a path, a header or the database, or
 * null: a NUL character, or a lone UTF-16 surrogate (not well-formed Unicode;
 * it cannot be encoded as UTF-8, so databases and encoders replace or refuse it).
 */
export function stringProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'contains a NUL character';
  if (LONE_SURROGATE.test(s)) return 'is not well-formed Unicode (lone UTF-16 surrogate)';
  return null;
}

/** The string with every lone surrogate replaced by U+FFFD (what String.prototype.toWellFormed does). */
export function toWellFormed(s: string): string {
  return s.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\ufffd');
}
