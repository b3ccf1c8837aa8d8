import Boom from '@hapi/boom';
import type { Request, ResponseToolkit, Lifecycle } from '@hapi/hapi';
import { FsError, FsErrorCode } from '../fs/fs-error.js';
import { DB_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../data/db-errors.js';
import { DomainError, ErrorKind, TooManyRequestsError, UnauthorizedError, UnavailableError } from '../errors.js';

/** FsError code → HTTP status, the single place this mapping lives. */
const FS_STATUS: Record<FsErrorCode, number> = {
  [FsErrorCode.NotFound]: 404,
  [FsErrorCode.Exists]: 409,
  [FsErrorCode.Permission]: 403,
  [FsErrorCode.NotSupported]: 400,
  [FsErrorCode.CrossDevice]: 400,
  [FsErrorCode.Quota]: 413,
  [FsErrorCode.Invalid]: 400,
  [FsErrorCode.IsDirectory]: 400,
  [FsErrorCode.NotDirectory]: 400,
  [FsErrorCode.NotEmpty]: 409,
  [FsErrorCode.Aborted]: 400,
  // a backend that cannot be reached or stopped answering: try again later,
  // as for the database (503 with Retry-After)
  [FsErrorCode.Unavailable]: 503,
  [FsErrorCode.Escape]: 403,
};

/** Domain error kind → HTTP status, the single place this mapping lives. */
const DOMAIN_STATUS: Record<ErrorKind, number> = {
  [ErrorKind.Invalid]: 400,
  [ErrorKind.Unauthorized]: 401,
  [ErrorKind.Forbidden]: 403,
  [ErrorKind.NotFound]: 404,
  [ErrorKind.Conflict]: 409,
  [ErrorKind.TooLarge]: 413,
  [ErrorKind.TooManyRequests]: 429,
  [ErrorKind.Unavailable]: 503,
};

function domainToBoom(err: DomainError): Boom.Boom {
  if (err instanceof UnauthorizedError && err.challenge) {
    return Boom.unauthorized(err.message, err.challenge.scheme, err.challenge.attributes ?? {});
  }
  const b = new Boom.Boom(err.message, { statusCode: DOMAIN_STATUS[err.kind] ?? 500, data: err.data });
  if ((err instanceof UnavailableError || err instanceof TooManyRequestsError) && err.retryAfterSeconds !== undefined) {
    b.output.headers['Retry-After'] = String(err.retryAfterSeconds);
  }
  return b;
}

/**
 * Headers a route extension set on the error while hapi held it as a Boom
 * (hapi boomifies what a handler throws): kept on the mapped error.
 */
function keepHeaders(from: unknown, to: Boom.Boom): Boom.Boom {
  const headers = (from as { isBoom?: boolean; output?: { headers?: Record<string, unknown> } }).output?.headers;
  if ((from as { isBoom?: boolean }).isBoom && headers) {
    for (const [k, v] of Object.entries(headers)) if (!(k in to.output.headers)) to.output.headers[k] = v as string;
  }
  return to;
}

/** Converts any thrown value into a Boom error fit for a client. */
export function toBoom(err: unknown): Boom.Boom {
  // before isBoom: hapi boomifies (as 500) whatever a handler throws
  if (err instanceof FsError) {
    const status = FS_STATUS[err.code] ?? 500;
    const b = new Boom.Boom(err.message, { statusCode: status });
    (b as Boom.Boom & { fsCode?: string }).fsCode = err.code;
    if (status === 503) b.output.headers['Retry-After'] = String(DB_RETRY_AFTER_SECONDS);
    return keepHeaders(err, b);
  }
  // before isBoom, for the same reason
  if (err instanceof DomainError) return keepHeaders(err, domainToBoom(err));
  // before isBoom too: hapi boomifies a thrown database error as a 500
  if (isDatabaseUnavailable(err)) return databaseUnavailable(err);
  if (Boom.isBoom(err)) return err;
  return Boom.badImplementation(err instanceof Error ? err.message : String(err), err);
}

/** The message of every answer given while the database cannot be reached. */
export const DATABASE_UNAVAILABLE_MESSAGE = 'the database is unavailable; try again later';

/** 503 with Retry-After for an unreachable or failing database (see data/db-errors.ts). */
export function databaseUnavailable(cause?: unknown): Boom.Boom {
  const b = Boom.serverUnavailable(DATABASE_UNAVAILABLE_MESSAGE, cause);
  b.output.headers['Retry-After'] = String(DB_RETRY_AFTER_SECONDS);
  (b as Boom.Boom & { dbUnavailable?: boolean }).dbUnavailable = true;
  return b;
}

/** A joi validation failure becomes a 400 whose message names the field. */
export const validationFailAction: Lifecycle.Method = (_req: Request, _h: ResponseToolkit, err?: Error) => {
  const message = err?.message ?? 'invalid request';
  throw Boom.badRequest(message.replace(/^child /, ''));
};

/** Error body sent for every failure: `{message, error}`. */
export function errorBody(b: Boom.Boom): { message: string; error: string } {
  const status = b.output.statusCode;
  if (status >= 500) return { message: clientMessage500(b), error: b.output.payload.error };
  return { message: b.message || b.output.payload.error, error: b.output.payload.error };
}

function clientMessage500(b: Boom.Boom): string {
  if ((b as Boom.Boom & { dbUnavailable?: boolean }).dbUnavailable) return DATABASE_UNAVAILABLE_MESSAGE;
  const fsCode = (b as Boom.Boom & { fsCode?: string }).fsCode;
  if (fsCode === FsErrorCode.Unavailable) return `storage backend unavailable: ${b.message}`;
  return 'internal server error';
}

export const Errors = {
  badRequest: (m: string) => Boom.badRequest(m),
  unauthorized: (m = 'invalid credentials') => Boom.unauthorized(m),
  forbidden: (m: string) => Boom.forbidden(m),
  notFound: (m: string) => Boom.notFound(m),
  conflict: (m: string) => Boom.conflict(m),
  tooLarge: (m: string) => Boom.entityTooLarge(m),
};
