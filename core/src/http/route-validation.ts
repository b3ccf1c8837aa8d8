import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import { LENIENT_INPUT } from '../util/lenient.js';

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
      validate[source] = validatorOf((schema as Joi.Schema).prefs(VALIDATION_OPTIONS));
    }
  }
  return routes;
}

/** A bound validator, which keeps its schema for what describes the route (the OpenAPI document). */
interface BoundValidator {
  (value: unknown): unknown;
  schema: Joi.Schema;
}

function validatorOf(schema: Joi.Schema): BoundValidator {
  const validate = (value: unknown) => {
    const { value: valid, error } = schema.validate(value);
    if (error) throw error;
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
