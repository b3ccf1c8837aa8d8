import Boom from '@hapi/boom';
import type { Request, Server } from '@hapi/hapi';
import { addRequestCheck } from './request-checks.js';
import { stringProblem } from '../util/well-formed.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** How a key or name is shown in a message: plain when simple, else JSON-quoted (escapes NUL and lone surrogates). */
function label(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

/**
 * The first string of a parsed value (object keys included) that is not fit
 * for a name, a path, a header or the database (see util/well-formed.ts), as a
 * message naming where it is; null when every string is fine. Walks plain
 * objects and arrays only: buffers and streams (uploads) are content, not strings.
 */
export function findStringProblem(value: unknown, where: string): string | null {
  const stack: { v: unknown; path: string }[] = [{ v: value, path: '' }];
  // a deep payload must not make a huge message: long paths keep their last 200 characters
  const shown = (path: string) => (path.length > 200 ? `...${path.slice(-200)}` : path);
  const at = (path: string) => (path ? `${where} "${shown(path)}"` : where);
  while (stack.length) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = stringProblem(v);
      if (problem) return `${at(path)} ${problem}`;
      continue;
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: `${path}[${i}]` });
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) continue;
    const entries = Object.entries(v as Record<string, unknown>);
    for (const [k] of entries) {
      const problem = stringProblem(k);
      if (problem) return `${where} key ${JSON.stringify(shown(path ? `${path}.${k}` : k))} ${problem}`;
    }
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, child] = entries[i]!;
      stack.push({ v: child, path: path ? `${path}.${label(k)}` : label(k) });
    }
  }
  return null;
}

/**
 * What is wrong with the encoding of a raw query string, or null: a `%` that
 * starts no escape (not followed by two hex digits: not a URL, RFC 3986
 * section 2.1; the parser would keep it as it is, and a member the route does
 * not know would be dropped without a word), or percent-encoded bytes that are
 * not UTF-8 (the parser would turn them into U+FFFD silently).
 */
export function queryEncodingProblem(rawQuery: string): string | null {
  const stray = /%(?![0-9A-Fa-f]{2})/.exec(rawQuery);
  if (stray) return `the query string has a "%" that starts no percent-escape: ${JSON.stringify(rawQuery.slice(stray.index, stray.index + 3))}`;
  for (const run of rawQuery.match(/(?:%[0-9A-Fa-f]{2})+/g) ?? []) {
    const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
    try {
      strictUtf8.decode(bytes);
    } catch {
      return 'the query string is not valid UTF-8 once percent-decoded';
    }
  }
  return null;
}

interface InputCheckState {
  payloadNotUtf8?: boolean;
}

/**
 * What is wrong with the percent-encoding of a raw path, or null: the router
 * cannot decode such a path and answers a bare "Bad Request"; this names why.
 */
export function pathEncodingProblem(rawPath: string): string | null {
  const stray = /%(?![0-9A-Fa-f]{2})/.exec(rawPath);
  if (stray) return `the path has a "%" that starts no percent-escape: ${JSON.stringify(rawPath.slice(stray.index, stray.index + 3))}`;
  for (const run of rawPath.match(/(?:%[0-9A-Fa-f]{2})+/g) ?? []) {
    try {
      strictUtf8.decode(Buffer.from(run.replace(/%/g, ''), 'hex'));
    } catch {
      return 'the path is not valid UTF-8 once percent-decoded';
    }
  }
  return null;
}

/** The query string of the request line as sent (before any decoding). */
function rawQueryOf(request: Request): string {
  const url = request.raw.req.url ?? '';
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
}

/**
 * Checks every string a request hands to the routes, once, before any handler
 * runs: path parameters, query (raw and parsed, keys included) and a parsed
 * payload (JSON or form, object keys included; a JSON body can spell a lone
 * surrogate as an escape, so the parsed values are what count). A NUL character
 * or a lone UTF-16 surrogate anywhere is a 400 naming where it is (a JSON body
 * whose bytes are not UTF-8 too), so such a
 * value never reaches a name, a path, a header or the database. Runs at
 * onPostAuth, the first point where the payload is parsed: before validation
 * and handlers, after authentication (basic credentials are checked by the
 * auth strategies, see auth/basic-header.ts).
 */
export function registerInputCheck(server: Server): void {
  // a JSON body is decoded leniently by the payload parser (bytes that are not UTF-8 become
  // U+FFFD): its bytes are checked as they are read, so such a body is refused instead
  addRequestCheck(server, 'onRequest', (request: Request) => {
    const url = request.raw.req.url ?? '';
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    if (rawPath.includes('%')) {
      const problem = pathEncodingProblem(rawPath);
      if (problem) throw Boom.badRequest(problem);
    }
    const type = String(request.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    const encoding = String(request.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    if ((type === 'application/json' || type.endsWith('+json')) && encoding === 'identity') {
      const decoder = new TextDecoder('utf-8', { fatal: true });
      const state = request.app as InputCheckState;
      const feed = (chunk?: Buffer) => {
        if (state.payloadNotUtf8) return;
        try {
          if (chunk) decoder.decode(chunk, { stream: true });
          else decoder.decode();
        } catch {
          state.payloadNotUtf8 = true;
        }
      };
      request.events.on('peek', (chunk) => feed(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk))));
      request.events.once('finish', () => feed());
    }
  });
  addRequestCheck(server, 'onPostAuth', (request: Request) => {
    if ((request.app as InputCheckState).payloadNotUtf8) throw Boom.badRequest('the payload is not valid UTF-8');
    const problem =
      findStringProblem(request.params, 'path parameter') ??
      queryEncodingProblem(rawQueryOf(request)) ??
      findStringProblem(request.query, 'query parameter') ??
      findStringProblem(request.payload, 'payload');
    if (problem) throw Boom.badRequest(problem);
  });
}
