import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import { LENIENT_INPUT } from '../util/lenient.js';
import { setBounded } from '../util/bounded-map.js';

/** How every route's input is validated: the first problem only, field names in quotes, unknown members dropped (util/lenient.ts). */
export const VALIDATION_OPTIONS = { abortEarly: true, errors: { wrap: { label: '"' } }, ...LENIENT_INPUT } as const;

const SOURCES = ['params', 'query', 'payload', 'headers', 'state'] as const;

/**
 * Gives each joi schema of the routes' `validate` its options once, as a
 * function Hapi calls with the input. Handed a schema, Hapi merges the
 * options with a context of the request (headers, params, query, payload,
 * auth...) and joi takes them in again on every request, in its async entry:
 * for a path parameter and a query, several times what validating them
 * costs. The schemas use no context (`$` references). What a route sees is
 * unchanged: the validated value replaces the input, and a failure reaches
 * the route's failAction as joi's error.
 */
export function bindRouteValidation(routes: ServerRoute[]): ServerRoute[] {
  for (const route of routes) {
    const validate = (route.options as { validate?: Record<string, unknown> } | undefined)?.validate;
    if (!validate) continue;
    for (const source of SOURCES) {
      const schema = validate[source];
      if (schema === undefined || schema === null || typeof schema === 'boolean' || typeof schema === 'function') continue;
      if (!Joi.isSchema(schema)) throw new Error(`${route.method} ${route.path}: validate.${source} is not a joi schema`);
      validate[source] = validatorOf((schema as Joi.Schema).prefs(VALIDATION_OPTIONS), source === 'params' || source === 'query');
    }
  }
  return routes;
}

/** A bound validator, which keeps its schema for what describes the route (the OpenAPI document). */
interface BoundValidator {
  (value: unknown): unknown;
  schema: Joi.Schema;
}

/** Inputs whose outcome a params or query validator keeps (the oldest forgotten first), and the longest input kept. */
export const REMEMBERED_INPUTS = 256;
const MAX_REMEMBERED_KEY = 1024;

type Flat = Record<string, string | number | boolean | null | undefined>;

/** The key of a params or query object of strings only (what Hapi parses), or undefined when it is anything else or too long. */
function inputKey(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const k in value) if (typeof (value as Record<string, unknown>)[k] !== 'string') return undefined;
  const key = JSON.stringify(value);
  return key.length <= MAX_REMEMBERED_KEY ? key : undefined;
}

/** A validated value of primitives only, which a copy of one level cannot share with its user. */
function isFlat(value: unknown): value is Flat {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== null && typeof v === 'object') return false;
    if (typeof v === 'function' || typeof v === 'symbol') return false;
  }
  return true;
}

/**
 * The validator of a schema. With `remember` (path parameters and queries),
 * the value of the last REMEMBERED_INPUTS valid inputs is kept and a copy
 * handed out when the same input comes again: clients repeat them (the
 * next file of a folder, a listing polled, the same user read), and in the
 * server joi took 28 us a query, a fifth of the bare Hapi route's whole
 * request (docs/performance-history.md). The schemas are pure functions of
 * their input (no context, no clock), so the kept value is what joi would
 * answer again. Failures are not kept: each gets joi's own error.
 */
function validatorOf(schema: Joi.Schema, remember: boolean): BoundValidator {
  const kept = new Map<string, Flat>();
  const validate = (value: unknown) => {
    const key = remember ? inputKey(value) : undefined;
    if (key !== undefined) {
      const hit = kept.get(key);
      if (hit) return { ...hit };
    }
    const { value: valid, error } = schema.validate(value);
    if (error) throw error;
    if (key !== undefined && isFlat(valid)) {
      setBounded(kept, key, { ...valid }, REMEMBERED_INPUTS);
    }
    return valid;
  };
  return Object.assign(validate, { schema });
}

/** The joi schema of a route's `validate.<source>`: the schema itself, or the one a bound validator keeps. */
export function routeSchema(v: unknown): Joi.Schema | undefined {
  if (Joi.isSchema(v)) return v as Joi.Schema;
  const kept = typeof v === 'function' ? (v as Partial<BoundValidator>).schema : undefined;
  return Joi.isSchema(kept) ? kept : undefined;
}
