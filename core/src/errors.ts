/**
 * Domain errors: what went wrong, in words any front end can use. Services,
 * restores, event actions and the CLI throw these (or `FsError` for storage);
 * they carry no HTTP. `core/src/http/errors.ts` maps each kind to a status and
 * the `{message, error}` body, the single place that mapping lives; another
 * protocol front end maps them to its own replies.
 *
 * The message is meant for the client: it names the object or field at fault
 * and never holds a secret.
 */
export const ErrorKind = {
  /** The input is malformed or breaks a rule (HTTP 400). */
  Invalid: 'invalid',
  /** No or wrong credentials (HTTP 401). */
  Unauthorized: 'unauthorized',
  /** Known caller, not allowed (HTTP 403). */
  Forbidden: 'forbidden',
  /** The object does not exist (HTTP 404). */
  NotFound: 'not_found',
  /** The object exists already, or is in a state that refuses the change (HTTP 409). */
  Conflict: 'conflict',
  /** A size limit is exceeded (HTTP 413). */
  TooLarge: 'too_large',
  /** A count or rate limit is reached; trying later may work (HTTP 429). */
  TooManyRequests: 'too_many_requests',
  /** A service the operation needs is down or full; trying later may work (HTTP 503). */
  Unavailable: 'unavailable',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

/** A domain error; `data` is structured detail a front end may show (e.g. the missing placeholders). */
export class DomainError<D = unknown> extends Error {
  readonly kind: ErrorKind;
  readonly data?: D;
  constructor(kind: ErrorKind, message: string, data?: D, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DomainError';
    this.kind = kind;
    if (data !== undefined) this.data = data;
  }
}

export class InvalidError<D = unknown> extends DomainError<D> {
  constructor(message: string, data?: D, options?: { cause?: unknown }) {
    super(ErrorKind.Invalid, message, data, options);
  }
}

/** Authentication challenge a front end offers with an UnauthorizedError (HTTP: WWW-Authenticate). */
export interface AuthChallenge {
  scheme: string;
  attributes?: Record<string, string>;
}

export class UnauthorizedError extends DomainError<undefined> {
  readonly challenge?: AuthChallenge;
  constructor(message: string, challenge?: AuthChallenge) {
    super(ErrorKind.Unauthorized, message);
    if (challenge) this.challenge = challenge;
  }
}

export class ForbiddenError<D = unknown> extends DomainError<D> {
  constructor(message: string, data?: D, options?: { cause?: unknown }) {
    super(ErrorKind.Forbidden, message, data, options);
  }
}

export class NotFoundError<D = unknown> extends DomainError<D> {
  constructor(message: string, data?: D, options?: { cause?: unknown }) {
    super(ErrorKind.NotFound, message, data, options);
  }
}

export class ConflictError<D = unknown> extends DomainError<D> {
  constructor(message: string, data?: D, options?: { cause?: unknown }) {
    super(ErrorKind.Conflict, message, data, options);
  }
}

export class TooLargeError<D = unknown> extends DomainError<D> {
  constructor(message: string, data?: D, options?: { cause?: unknown }) {
    super(ErrorKind.TooLarge, message, data, options);
  }
}

export class TooManyRequestsError<D = unknown> extends DomainError<D> {
  /** Seconds after which trying again makes sense, when known. */
  readonly retryAfterSeconds?: number;
  constructor(message: string, data?: D, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(ErrorKind.TooManyRequests, message, data, options);
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export class UnavailableError<D = unknown> extends DomainError<D> {
  /** Seconds after which trying again makes sense, when known. */
  readonly retryAfterSeconds?: number;
  constructor(message: string, data?: D, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(ErrorKind.Unavailable, message, data, options);
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** True for an error of the given kind (or of any domain kind when none is given). */
export function isDomainError(err: unknown, kind?: ErrorKind): err is DomainError {
  return err instanceof DomainError && (kind === undefined || err.kind === kind);
}

/**
 * Why a login was refused, for the log and for front-ends that answer each
 * case their own way (core/src/auth/login.service.ts).
 */
export type LoginRefusalReason =
  /** Unknown account, wrong password, key or API key. */
  | 'bad-credentials'
  /** A TLS client certificate that does not log in the account (not scored: the client logs in otherwise). */
  | 'certificate-not-accepted'
  /** Credentials no account can have (not UTF-8, control characters). */
  | 'malformed'
  | 'disabled'
  | 'expired'
  /** The address is not allowed (allow list, the account's allowed/denied addresses). */
  | 'ip-not-allowed'
  /** The defender bans the address. */
  | 'banned'
  /** A rate limit refused the attempt (see `retryAfterSeconds`). */
  | 'rate-limited'
  /** The account's denied_protocols name the protocol's login protocol. */
  | 'protocol-denied'
  /** The account's denied_login_methods (or an admin's disable_password_auth, a disabled API key login) refuse the method. */
  | 'method-denied'
  /** A second factor is needed and was not sent. */
  | 'second-factor-required'
  /** The second factor is wrong, or two-factor authentication is misconfigured for the account. */
  | 'second-factor-invalid'
  /** The TOTP code was already used. */
  | 'second-factor-replayed'
  /** The account must set up two-factor authentication for this protocol before it may log in over it. */
  | 'second-factor-setup-required'
  /** An API key of the other audience (admin or user). */
  | 'api-key-audience'
  /** An API key bound to an account and naming another one. */
  | 'api-key-bound'
  /** A share refused a login it let in by its credential: scope, expiration, uses, address or its owner's rights. */
  | 'share-denied';

/**
 * A refused login: `kind` is unauthorized (credentials), forbidden (known
 * caller, not allowed) or too_many_requests (rate limited); `reason` says
 * why in a word a front-end can switch on; `logMessage` is what the log
 * event said (the message is the client's).
 */
export class LoginRefusedError extends DomainError<{ reason: LoginRefusalReason }> {
  readonly reason: LoginRefusalReason;
  readonly logMessage: string;
  /** Rate-limited: seconds after which trying again makes sense. */
  readonly retryAfterSeconds?: number;
  constructor(
    kind: typeof ErrorKind.Unauthorized | typeof ErrorKind.Forbidden | typeof ErrorKind.TooManyRequests,
    reason: LoginRefusalReason,
    message: string,
    o: { logMessage?: string; retryAfterSeconds?: number } = {},
  ) {
    super(kind, message, { reason });
    this.name = 'LoginRefusedError';
    this.reason = reason;
    this.logMessage = o.logMessage ?? message;
    if (o.retryAfterSeconds !== undefined) this.retryAfterSeconds = o.retryAfterSeconds;
  }
}
