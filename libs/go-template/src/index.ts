/**
 * Go text/template for event action fields (HTTP bodies, email subjects,
 * paths...): the same template and data render the same bytes as Go's
 * text/template with the upstream server's helper functions.
 *
 * Data model (see values.ts): plain objects are `map[string]interface {}`
 * (a missing key prints `<no value>`), `null` is a nil interface (evaluating
 * a field on it fails with `nil pointer evaluating interface {}.X`), integral
 * numbers are `int`, other numbers `float64`, `Date`s are `time.Time` in UTC.
 *
 * Helper notes: `urlEscape` is url.QueryEscape (space → "+", "/" → "%2F"), as
 * the upstream documents it for query parameters; `urlPathEscape` is
 * url.PathEscape. `pathJoin` takes strings and/or string slices.
 *
 * Go version: the language of current Go (range over an int from 1.22,
 * `else with` from 1.23, encoding/json's \b and \f escapes from 1.22).
 *
 * Go-exact areas worth naming: number literals are read as Go's parser reads
 * them (numlit.ts; a malformed one is a parse error with Go's message, so
 * validateTemplate refuses it), complex constants (`1i`, `1+2i`) behave as in
 * Go although data cannot hold complex numbers, printf has %x/%X/%b for
 * floats and explicit argument indexes (sprintf.ts), `index` of a string is
 * a uint8, and eq/lt word their errors as Go 1.18+ does.
 *
 * Known differences from Go, all outside what event templates use:
 * - times are always UTC (Go's fromMillis/fromNanos use the server's local
 *   zone, which is UTC on the usual deployments);
 * - a time with a non-string verb and a function value print differently
 *   (Go prints struct internals/addresses);
 * - strings are Unicode: slicing a string in the middle of a UTF-8 sequence
 *   yields U+FFFD where Go would keep the raw bytes;
 * - execution stops at the first error without returning the partial output;
 * - error texts are Go 1.23/1.24's: Go 1.25 adds the two types to eq/lt's
 *   "incompatible types for comparison" (": int and string"); not done here.
 *
 * Compile once with {@link compileTemplate} and execute many times; nothing
 * is cached globally.
 */
import { ExecError, hasFunction, State } from './exec.js';
import type { ListNode } from './nodes.js';
import { parse, ParseError } from './parser.js';
import { wellFormed } from './values.js';

export { GoFloat, GoTime } from './values.js';

/** A parse or execution error, with Go's message (`template: NAME:LINE:COL: executing "NAME" at <.Foo>: ...`). */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';

  constructor(
    message: string,
    /** Whether the template failed to parse or to execute. */
    readonly phase: 'parse' | 'exec',
  ) {
    super(message);
  }
}

export interface Template {
  readonly name: string;
  /** Renders the template; throws {@link TemplateError} when execution fails. */
  execute(data: unknown): string;
}

const DEFAULT_NAME = 'template';

class CompiledTemplate implements Template {
  constructor(
    readonly name: string,
    private readonly trees: Map<string, ListNode>,
  ) {}

  execute(data: unknown): string {
    const root = this.trees.get(this.name);
    const state = new State(this.name, this.trees, data === null ? undefined : data);
    if (!root) state.errorf(`${JSON.stringify(this.name)} is an incomplete or empty template`);
    try {
      state.walk(data === null ? undefined : data, false, root!);
    } catch (e) {
      if (e instanceof ExecError) throw new TemplateError(e.message, 'exec');
      // Cyclic data printed or walked without end (Go would crash outright).
      if (e instanceof RangeError) {
        throw new TemplateError(`template: ${this.name}: execution exceeded the maximum call stack size`, 'exec');
      }
      throw e;
    }
    // a byte of a string outside valid UTF-8 is written as U+FFFD (Go writes the byte; a JS string cannot hold it)
    return wellFormed(state.out.join(''));
  }
}

/** Parses a template; throws {@link TemplateError} on syntax errors. */
export function compileTemplate(source: string, name: string = DEFAULT_NAME): Template {
  try {
    return new CompiledTemplate(name, parse(source, name, hasFunction));
  } catch (e) {
    if (e instanceof ParseError) throw new TemplateError(e.message, 'parse');
    throw e;
  }
}

/** Parses and executes a template in one go. */
export function renderTemplate(source: string, data: unknown, name: string = DEFAULT_NAME): string {
  return compileTemplate(source, name).execute(data);
}

/** Returns null when the template parses, else the parse error message. */
export function validateTemplate(source: string): string | null {
  try {
    compileTemplate(source);
    return null;
  } catch (e) {
    if (e instanceof TemplateError) return e.message;
    throw e;
  }
}
