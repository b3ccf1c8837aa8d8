import Joi from 'joi';

const CONTROL_OR_SEPARATOR = /^[^\u0000-\u001f\u007f/\\]+$/;

/** Object names and usernames: no control characters, '/' or '\'. */
export const objectName = Joi.string()
  .trim()
  .min(1)
  .max(255)
  .pattern(CONTROL_OR_SEPARATOR, { name: 'a name without control characters, "/" or "\\"' });

/** offset/limit/order of admin collections. */
export const listQuery = Joi.object({
  offset: Joi.number().integer().min(0).default(0),
  limit: Joi.number().integer().min(1).max(500).default(100),
  order: Joi.string().valid('ASC', 'DESC').default('ASC'),
});

export interface ListQuery {
  offset: number;
  limit: number;
  order: 'ASC' | 'DESC';
}

export const confidentialQuery = Joi.object({ confidential_data: Joi.number().integer().valid(0, 1).default(0) });

/** Unix milliseconds. */
export const timestampMs = Joi.number().integer().min(0);

export const apiResponse = (message: string) => ({ message });

/** Validated list query of a request (the route validates it with listQuery). */
export function listParams(request: { query: unknown }): ListQuery {
  return request.query as ListQuery;
}

/** A validated path parameter as a string. */
export function pathParam(request: { params: Record<string, unknown> }, name: string): string {
  return String(request.params[name]);
}
