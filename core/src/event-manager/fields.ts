/**
 * Field paths of action options as ActionTypeDef.secretFields and
 * templateFields spell them: dotted keys, `[]` for every element of an array
 * ('recipients[]', 'headers[].value', 'parts[].headers[].value').
 */
type Obj = Record<string, unknown>;

function segments(path: string): string[] {
  return path
    .split('.')
    .flatMap((s) => (s.endsWith('[]') ? [s.slice(0, -2), '[]'] : [s]))
    .filter((s) => s !== '');
}

/**
 * Visits every value the path reaches and replaces it with what `fn`
 * returns (return the value unchanged to only read). `where` is the concrete
 * location ('headers[1].value') for messages. Missing parents are skipped.
 */
export async function mapField(root: Obj, path: string, fn: (value: unknown, where: string) => unknown | Promise<unknown>): Promise<void> {
  const segs = segments(path);
  const walk = async (container: unknown, i: number, where: string): Promise<void> => {
    const seg = segs[i]!;
    const last = i === segs.length - 1;
    if (seg === '[]') {
      if (!Array.isArray(container)) return;
      for (let k = 0; k < container.length; k++) {
        const w = `${where}[${k}]`;
        if (last) container[k] = await fn(container[k], w);
        else await walk(container[k], i + 1, w);
      }
      return;
    }
    if (!container || typeof container !== 'object' || Array.isArray(container)) return;
    const o = container as Obj;
    const w = where ? `${where}.${seg}` : seg;
    if (last) {
      if (seg in o) o[seg] = await fn(o[seg], w);
      return;
    }
    if (segs[i + 1] === '[]') await walk(o[seg], i + 1, w);
    else await walk(o[seg], i + 1, w);
  };
  if (segs.length) await walk(root, 0, '');
}

/** Values the path reaches with their locations. */
export async function collectField(root: Obj, path: string): Promise<{ value: unknown; where: string }[]> {
  const out: { value: unknown; where: string }[] = [];
  await mapField(root, path, (value, where) => {
    out.push({ value, where });
    return value;
  });
  return out;
}
