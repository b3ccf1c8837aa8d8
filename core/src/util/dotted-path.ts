type Obj = Record<string, unknown>;

/** Reads a dotted path ('a.b') of an object. */
export function getPath(o: Obj, dotted: string): unknown {
  return dotted.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Obj)[k] : undefined), o);
}

/** Writes a dotted path ('a.b') of an object, creating parents. */
export function setPath(o: Obj, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let cur = o;
  for (const k of keys.slice(0, -1)) {
    if (!cur[k] || typeof cur[k] !== 'object') cur[k] = {};
    cur = cur[k] as Obj;
  }
  cur[keys[keys.length - 1]!] = value;
}
