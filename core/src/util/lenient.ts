/**
 * How Ferry reads what clients send (api-spec v2.7 clients, older and newer
 * revisions): as the reference implementation decodes JSON, members a schema
 * does not know are dropped rather than refused, and a `null` member means the
 * member is absent (a Go client sends `"password": null` for "unchanged").
 * Known members keep their strict validation, and nothing unknown is stored.
 */

/** joi options for client input: unknown object members are stripped (array items are never dropped). */
export const LENIENT_INPUT = { stripUnknown: { objects: true, arrays: false } } as const;

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * Removes, in place, every object member whose value is `null`, at any depth
 * (inside arrays too); array items themselves are kept, so `[null]` still
 * fails a schema that wants strings. Returns the value.
 */
export function dropNullMembers<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (const item of v) if (item !== null && typeof item === 'object') stack.push(item);
    } else if (isPlainObject(v)) {
      for (const k of Object.keys(v)) {
        const m = v[k];
        if (m === null) delete v[k];
        else if (typeof m === 'object') stack.push(m);
      }
    }
  }
  return value;
}

/**
 * Dotted paths of the members of `raw` that `validated` no longer has (what
 * stripping dropped), for the debug log; at most `max` of them.
 */
export function droppedMembers(raw: unknown, validated: unknown, max = 20): string[] {
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, prefix: string) => {
    if (out.length >= max) return;
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < a.length && i < b.length; i++) walk(a[i], b[i], `${prefix}[${i}]`);
      return;
    }
    if (!isPlainObject(a) || b === null || typeof b !== 'object' || Array.isArray(b)) return;
    for (const k of Object.keys(a)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (!(k in (b as Record<string, unknown>))) {
        if (out.length < max) out.push(path);
      } else walk(a[k], (b as Record<string, unknown>)[k], path);
    }
  };
  walk(raw, validated, '');
  return out;
}
