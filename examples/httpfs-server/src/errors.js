/**
 * Error model of the httpfs reference server: every failure is an HttpError
 * with a status and an errno-style `error` code, sent as the protocol's
 * ApiResponse `{ message, error }`. Messages never contain host paths.
 */

export class HttpError extends Error {
  /**
   * @param {number} status HTTP status to answer with
   * @param {string} code errno-style code placed in the `error` field (ENOENT, EEXIST, ...)
   * @param {string} message human readable, safe to show to the client
   */
  constructor(status, code, message) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
  }
}

/**
 * Node errno → HTTP status. 409 carries the precise reason in `error` so a
 * client can tell EEXIST from ENOTEMPTY, ENOTDIR or EISDIR.
 * @type {Record<string, number>}
 */
const ERRNO_STATUS = {
  ENOENT: 404,
  EACCES: 403,
  EPERM: 403,
  ELOOP: 403, // O_NOFOLLOW met a symlink
  EEXIST: 409,
  ENOTEMPTY: 409,
  ENOTDIR: 409,
  EISDIR: 409,
  EXDEV: 409,
  EBUSY: 409,
  EINVAL: 400,
  ENAMETOOLONG: 400,
  EFBIG: 413,
  ENOSPC: 507,
  EDQUOT: 507,
  ENOSYS: 501,
  ENOTSUP: 501,
  EOPNOTSUPP: 501,
};

/**
 * Turns any thrown value into an HttpError without leaking host paths (Node's
 * fs messages contain absolute paths; only the client-visible name is used).
 * @param {unknown} err
 * @param {string} [name] the client-visible path the operation was about
 * @returns {HttpError}
 */
export function toHttpError(err, name) {
  if (err instanceof HttpError) return err;
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  const status = ERRNO_STATUS[code];
  if (status === undefined) return new HttpError(500, 'EIO', 'internal server error');
  const what = name === undefined ? '' : `${name}: `;
  return new HttpError(status, code, `${what}${describeErrno(code)}`);
}

/** @param {string} code */
function describeErrno(code) {
  switch (code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EEXIST':
      return 'already exists';
    case 'ENOTEMPTY':
      return 'directory not empty';
    case 'ENOTDIR':
      return 'not a directory';
    case 'EISDIR':
      return 'is a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ELOOP':
      return 'refusing to follow a symbolic link';
    case 'ENOSPC':
    case 'EDQUOT':
      return 'no space left';
    case 'EFBIG':
      return 'file too large';
    default:
      return code;
  }
}

/**
 * Sends a JSON body with an exact Content-Length.
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 * @param {Record<string, string>} [headers]
 */
export function sendJson(res, status, body, headers = {}) {
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(payload.length),
    ...headers,
  });
  res.end(payload);
}

/**
 * Sends an ApiResponse error, unless headers already left (then the socket is
 * destroyed so the client sees a truncated response rather than a bad one).
 * @param {import('node:http').ServerResponse} res
 * @param {HttpError} err
 * @param {Record<string, string>} [headers]
 */
export function sendError(res, err, headers = {}) {
  if (res.headersSent) {
    res.destroy(err);
    return;
  }
  sendJson(res, err.status, { message: err.message, error: err.code }, headers);
}
