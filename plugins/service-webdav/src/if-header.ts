/** One condition of an If header list (RFC 4918 section 10.4). */
export type IfCondition = { not: boolean; token: string } | { not: boolean; etag: string };

/** A list of conditions, for the request's resource (`resource` null) or a tagged one (its URL). */
export interface IfList {
  resource: string | null;
  conditions: IfCondition[];
}

export class IfHeaderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IfHeaderError';
  }
}

/** Parses an If header into its lists; throws IfHeaderError on bad syntax. */
export function parseIfHeader(header: string): IfList[] {
  const lists: IfList[] = [];
  let i = 0;
  let resource: string | null = null;
  let tagged: boolean | null = null;
  const s = header;
  const skip = () => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++;
  };
  const until = (close: string): string => {
    const end = s.indexOf(close, i + 1);
    if (end < 0) throw new IfHeaderError(`unterminated ${s[i]} in the If header`);
    const v = s.slice(i + 1, end);
    i = end + 1;
    return v;
  };
  for (skip(); i < s.length; skip()) {
    if (s[i] === '<') {
      if (tagged === false) throw new IfHeaderError('the If header mixes tagged and untagged lists');
      tagged = true;
      resource = until('>');
      skip();
      if (s[i] !== '(') throw new IfHeaderError('a resource tag of the If header must be followed by a list');
      continue;
    }
    if (s[i] !== '(') throw new IfHeaderError(`unexpected ${JSON.stringify(s[i])} in the If header`);
    if (tagged === null) tagged = false;
    i++;
    const conditions: IfCondition[] = [];
    for (skip(); s[i] !== ')'; skip()) {
      if (i >= s.length) throw new IfHeaderError('unterminated list in the If header');
      let not = false;
      if (s.slice(i, i + 3).toLowerCase() === 'not') {
        not = true;
        i += 3;
        skip();
      }
      if (s[i] === '<') conditions.push({ not, token: until('>') });
      else if (s[i] === '[') conditions.push({ not, etag: until(']') });
      else throw new IfHeaderError(`unexpected ${JSON.stringify(s[i] ?? 'end')} in an If header list`);
    }
    i++;
    if (conditions.length === 0) throw new IfHeaderError('an empty list in the If header');
    lists.push({ resource: tagged ? resource : null, conditions });
  }
  if (lists.length === 0) throw new IfHeaderError('an If header without lists');
  return lists;
}

/** The state tokens an If header submits (RFC 4918 10.4.1: every token it names, negated or not). */
export const submittedTokens = (lists: IfList[]): Set<string> => new Set(lists.flatMap((l) => l.conditions.flatMap((c) => ('token' in c ? [c.token] : []))));
