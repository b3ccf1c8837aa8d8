/**
 * joi → JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1), from joi's
 * own `describe()` output, so the OpenAPI document says what the route
 * validation accepts. What JSON Schema cannot say (custom rules, references
 * to sibling values) is left out: the schema is then looser than joi, never
 * stricter, on request schemas. `when` conditions become the union of their
 * branches.
 */
import type Joi from 'joi';

export type JsonSchema = Record<string, unknown>;

/** The shape of joi's describe() output that the conversion reads. */
export interface JoiDescription {
  type: string;
  flags?: Record<string, unknown>;
  rules?: { name: string; args?: Record<string, unknown> }[];
  allow?: unknown[];
  invalid?: unknown[];
  keys?: Record<string, JoiDescription>;
  items?: JoiDescription[];
  ordered?: JoiDescription[];
  matches?: { schema?: JoiDescription; ref?: unknown; is?: JoiDescription; then?: JoiDescription; otherwise?: JoiDescription; switch?: unknown[] }[];
  patterns?: { regex?: string; schema?: JoiDescription; rule: JoiDescription }[];
  whens?: { then?: JoiDescription; otherwise?: JoiDescription; switch?: { then?: JoiDescription; otherwise?: JoiDescription }[] }[];
  examples?: unknown[];
  metas?: Record<string, unknown>[];
}

export function joiToJsonSchema(schema: Joi.Schema): JsonSchema {
  return convert(schema.describe() as JoiDescription);
}

/** Whether a key of an object description must be present. */
export function isRequired(d: JoiDescription): boolean {
  return d.flags?.presence === 'required';
}

function isForbidden(d: JoiDescription): boolean {
  return d.flags?.presence === 'forbidden';
}

/** A plain JSON value (joi special values such as a reference or `{ special: 'deep' }` are not). */
function jsonValue(v: unknown): boolean {
  if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) return typeof v !== 'number' || Number.isFinite(v);
  if (Array.isArray(v)) return v.every(jsonValue);
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if ('special' in o || 'ref' in o || 'override' in o || 'value' in o) return false;
    return Object.values(o).every(jsonValue);
  }
  return false;
}

function numberArg(args: Record<string, unknown> | undefined, name: string): number | undefined {
  const v = args?.[name];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** `/^a+$/i` as joi describes it → the pattern source (flags other than i, u are dropped; i keeps the pattern as is). */
function regexSource(r: unknown): string | undefined {
  if (typeof r !== 'string') return undefined;
  const m = /^\/(.*)\/([a-z]*)$/s.exec(r);
  return m ? m[1] : r;
}

const STRING_FORMATS: Record<string, string> = {
  email: 'email',
  uri: 'uri',
  guid: 'uuid',
  uuid: 'uuid',
  isoDate: 'date-time',
  hostname: 'hostname',
  ip: 'ip',
  isoDuration: 'duration',
};

function base(d: JoiDescription): JsonSchema {
  const rules = d.rules ?? [];
  switch (d.type) {
    case 'string': {
      const s: JsonSchema = { type: 'string' };
      for (const r of rules) {
        const limit = numberArg(r.args, 'limit');
        if (r.name === 'min' && limit !== undefined) s.minLength = limit;
        else if (r.name === 'max' && limit !== undefined) s.maxLength = limit;
        else if (r.name === 'length' && limit !== undefined) s.minLength = s.maxLength = limit;
        else if (r.name === 'pattern') {
          const src = regexSource(r.args?.regex);
          // an inverted pattern cannot be said in JSON Schema without `not`
          if (src !== undefined && !(r.args?.options as { invert?: boolean } | undefined)?.invert) s.pattern = src;
        } else if (STRING_FORMATS[r.name]) s.format = STRING_FORMATS[r.name];
        else if (r.name === 'hex') s.pattern = '^[0-9a-fA-F]*$';
        else if (r.name === 'alphanum') s.pattern = '^[a-zA-Z0-9]*$';
        else if (r.name === 'base64') s.contentEncoding = 'base64';
      }
      return s;
    }
    case 'number': {
      const s: JsonSchema = { type: rules.some((r) => r.name === 'integer' || r.name === 'port') ? 'integer' : 'number' };
      for (const r of rules) {
        const limit = numberArg(r.args, 'limit');
        if (r.name === 'min' && limit !== undefined) s.minimum = limit;
        else if (r.name === 'max' && limit !== undefined) s.maximum = limit;
        else if (r.name === 'greater' && limit !== undefined) s.exclusiveMinimum = limit;
        else if (r.name === 'less' && limit !== undefined) s.exclusiveMaximum = limit;
        else if (r.name === 'multiple' && numberArg(r.args, 'base') !== undefined) s.multipleOf = numberArg(r.args, 'base');
        else if (r.name === 'port') Object.assign(s, { minimum: 0, maximum: 65535 });
        else if (r.name === 'sign') s[r.args?.sign === 'positive' ? 'exclusiveMinimum' : 'exclusiveMaximum'] = 0;
      }
      return s;
    }
    case 'boolean':
      return { type: 'boolean' };
    case 'date':
      return { type: 'string', format: 'date-time' };
    case 'binary':
      return { type: 'string', format: 'binary' };
    case 'array': {
      const s: JsonSchema = { type: 'array' };
      const items = (d.items ?? []).filter((i) => !isForbidden(i)).map(convert);
      if (items.length === 1) s.items = items[0];
      else if (items.length > 1) s.items = { anyOf: items };
      if (d.ordered?.length) s.prefixItems = d.ordered.map(convert);
      for (const r of rules) {
        const limit = numberArg(r.args, 'limit');
        if (r.name === 'min' && limit !== undefined) s.minItems = limit;
        else if (r.name === 'max' && limit !== undefined) s.maxItems = limit;
        else if (r.name === 'length' && limit !== undefined) s.minItems = s.maxItems = limit;
        else if (r.name === 'unique' && !r.args?.comparator) s.uniqueItems = true;
      }
      return s;
    }
    case 'object': {
      const s: JsonSchema = { type: 'object' };
      if (d.keys) {
        const properties: Record<string, JsonSchema> = {};
        const required: string[] = [];
        for (const [k, v] of Object.entries(d.keys)) {
          if (isForbidden(v)) continue;
          properties[k] = convert(v);
          if (isRequired(v)) required.push(k);
        }
        s.properties = properties;
        if (required.length) s.required = required;
      }
      if (d.patterns?.length) {
        const pp: Record<string, JsonSchema> = {};
        for (const p of d.patterns) {
          const src = regexSource(p.regex);
          if (src !== undefined) pp[src] = convert(p.rule);
          else s.additionalProperties = convert(p.rule);
        }
        if (Object.keys(pp).length) s.patternProperties = pp;
      }
      for (const r of rules) {
        const limit = numberArg(r.args, 'limit');
        if (r.name === 'min' && limit !== undefined) s.minProperties = limit;
        else if (r.name === 'max' && limit !== undefined) s.maxProperties = limit;
      }
      return s;
    }
    case 'alternatives': {
      const branches: JsonSchema[] = [];
      for (const m of d.matches ?? []) {
        if (m.schema) branches.push(convert(m.schema));
        for (const b of [m.then, m.otherwise]) if (b) branches.push(convert(b));
        for (const sw of (m.switch ?? []) as { then?: JoiDescription; otherwise?: JoiDescription }[]) {
          for (const b of [sw.then, sw.otherwise]) if (b) branches.push(convert(b));
        }
      }
      if (!branches.length) return {};
      return d.flags?.match === 'one' ? { oneOf: branches } : { anyOf: branches };
    }
    default:
      // any, link, function, symbol: JSON Schema's "anything"
      return {};
  }
}

/** One joi description → JSON Schema. */
export function convert(d: JoiDescription): JsonSchema {
  let s = base(d);
  const flags = d.flags ?? {};
  const allow = (d.allow ?? []).filter(jsonValue);
  if (flags.only === true && allow.length) {
    s = { enum: allow };
  } else if (allow.length) {
    const extra = allow.filter((v) => {
      if (v === null) return true;
      const t = s.type;
      if (t === 'string') return typeof v !== 'string';
      if (t === 'number' || t === 'integer') return typeof v !== 'number';
      if (t === 'boolean') return typeof v !== 'boolean';
      return t !== undefined;
    });
    const nonNull = extra.filter((v) => v !== null);
    if (extra.includes(null) && typeof s.type === 'string' && !nonNull.length) s.type = [s.type, 'null'];
    else if (extra.length && Object.keys(s).length) s = { anyOf: [s, { enum: extra }] };
    // '' allowed on a string with a minimum length or a pattern: the empty string stays valid
    if (allow.includes('') && (typeof s.minLength === 'number' || typeof s.pattern === 'string')) s = { anyOf: [s, { const: '' }] };
  }
  // booleans converted from strings ('1', 'true'...) by `truthy` / `falsy`
  if (d.type === 'boolean' && ((d as { truthy?: unknown[] }).truthy?.length || (d as { falsy?: unknown[] }).falsy?.length)) {
    const words = [...((d as { truthy?: unknown[] }).truthy ?? []), ...((d as { falsy?: unknown[] }).falsy ?? [])].filter(jsonValue);
    s = { anyOf: [s, { enum: words }] };
  }
  if (d.whens?.length) {
    const branches: JsonSchema[] = [];
    for (const w of d.whens) {
      for (const b of [w.then, w.otherwise]) if (b) branches.push(convert(b));
      for (const sw of w.switch ?? []) for (const b of [sw.then, sw.otherwise]) if (b) branches.push(convert(b));
    }
    // the base alone is one more possibility (a condition that matches no branch keeps it)
    if (branches.length) s = Object.keys(s).length ? { anyOf: [s, ...branches] } : { anyOf: branches };
  }
  if (typeof flags.description === 'string') s.description = flags.description;
  if ('default' in flags && jsonValue(flags.default)) s.default = flags.default;
  const examples = (d.examples ?? []).filter(jsonValue);
  if (examples.length) s.examples = examples;
  return s;
}
