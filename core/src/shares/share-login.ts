import { DomainError, ErrorKind, LoginRefusedError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import { ShareScope } from './share.input.js';
import { ShareService, type ShareCredentials } from './share.service.js';
import type { ShareLoginRequest, ShareLoginResult, ShareLogins } from '../sdk/login.js';
import { stringProblem } from '../util/well-formed.js';

/** The share credentials of the REST API's routes (basic auth) for a share login's credential. */
function credentialsOf(c: ShareLoginRequest['credential']): ShareCredentials {
  if (c === undefined) return {};
  return c.method === 'share-password' ? { password: c.password } : { username: c.email, password: c.code };
}

/** The share's refusal as a login refusal: credentials (and a share that does not exist) are `bad-credentials`, the rest `share-denied`. */
function asLoginRefusal(err: unknown): unknown {
  if (!(err instanceof DomainError)) return err;
  if (err.kind === ErrorKind.Unauthorized || err.kind === ErrorKind.NotFound) {
    return new LoginRefusedError(ErrorKind.Unauthorized, 'bad-credentials', err.message);
  }
  if (err.kind === ErrorKind.Forbidden) return new LoginRefusedError(ErrorKind.Forbidden, 'share-denied', err.message);
  return err;
}

/**
 * A share login of a front-end: the checks of the REST API's share routes
 * (ShareService.authorize: the share exists, the address is allowed, the
 * password or an allowed address's one-time code, the scope the access
 * needs, expiration, uses left, the owner may still share), with the log
 * events and defender scores in the request's protocol. Refusals are
 * LoginRefusedErrors.
 */
@injectable()
export class ShareLoginService implements ShareLogins {
  constructor(@inject(ShareService) private readonly shares: ShareService) {}

  async login(req: ShareLoginRequest): Promise<ShareLoginResult> {
    const problem =
      stringProblem(req.shareId) ??
      (req.credential ? stringProblem(req.credential.method === 'share-password' ? req.credential.password : req.credential.code) : null);
    if (problem || !req.shareId) throw new LoginRefusedError(ErrorKind.Unauthorized, 'malformed', `invalid share credentials: ${problem ?? 'no share id'}`);
    const wanted = req.access === 'read' ? ShareScope.Read : ShareScope.Write;
    const scopeOk = (scope: number) => scope === wanted || scope === ShareScope.ReadWrite;
    try {
      const { share, owner, email } = await this.shares.authorize(req.shareId, req.ip, credentialsOf(req.credential), scopeOk, { protocol: req.protocol });
      return { shareId: share.share_id, owner: owner.username, scope: share.scope, paths: [...share.paths], email };
    } catch (err) {
      throw asLoginRefusal(err);
    }
  }
}
