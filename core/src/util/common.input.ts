import Joi from 'joi';

/** Control characters (C0, DEL, C1), '/' and backslash are refused anywhere in a name. */
const CONTROL_OR_SEPARATOR = /^[^\u0000-\u001f\u007f-\u009f/\\]+$/;

/**
 * Object names and usernames: no control characters, '/' or backslash anywhere
 * (checked on the raw value: nothing is trimmed first, so "bob" followed by a
 * newline is refused, not turned into "bob"), and no leading or trailing
 * spaces ("bob" and " bob " would otherwise be two accounts that look alike).
 * Also used for path parameters, so "/users/bob%0A" cannot reach "bob".
 */
export const objectName = Joi.string()
  .min(1)
  .max(255)
  .pattern(CONTROL_OR_SEPARATOR, { name: 'a name without control characters, "/" or "\\"' })
  .custom((v: string, h) => (v.trim() === v ? v : h.message({ custom: '{{#label}} must not begin or end with spaces' })), 'no surrounding spaces');

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

/**
 * GET /api/v2/users: listQuery and `order_by` (an addition of Ferry): the
 * username (the default), or the used quota size (`order` then applies to
 * the size; equal sizes by username A to Z), so that the users using the
 * most storage are one request (order_by=used_quota_size&order=DESC).
 */
export const userListQuery = listQuery.keys({
  order_by: Joi.string()
    .valid('username', 'used_quota_size')
    .default('username')
    .description('Ferry addition: order by username (default) or by used_quota_size (equal sizes by username)'),
});

export interface UserListQuery extends ListQuery {
  order_by: 'username' | 'used_quota_size';
}

/** Validated query of GET /api/v2/users (the route validates it with userListQuery). */
export function userListParams(request: { query: unknown }): UserListQuery {
  return request.query as UserListQuery;
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
