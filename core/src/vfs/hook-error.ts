import { FsError, FsErrorCode } from '../fs/fs-error.js';
import { DomainError } from '../errors.js';

/**
 * Turns what a hook threw into an error for the client: a PERMISSION
 * refusal with the hook's message, or its `clientMessage` when it has one
 * (event rules: the action's own error stays in the log). FsErrors and
 * domain errors pass as they are.
 */
export function hookError(err: unknown): Error {
  if (err instanceof FsError || err instanceof DomainError) return err;
  const client = (err as { clientMessage?: unknown })?.clientMessage;
  const msg = typeof client === 'string' && client ? client : err instanceof Error && err.message ? err.message : 'rejected by an event hook';
  return new FsError(FsErrorCode.Permission, msg, { cause: err });
}
