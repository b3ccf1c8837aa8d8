/**
 * INTERIM: replaced by login.service.ts at merge (issue #33, item 1: the
 * login service for every credential kind). This adapter gives the service
 * plugins of this branch (examples/service-line, its tests) a LoginGate for
 * user password logins, over the checks the REST API's basic-user strategy
 * runs today: the defender ban, the password, the account state and allow
 * list, the second factor for the protocol, the login events and the
 * defender scoring. It is registered under TOKENS.LoginService only when
 * nothing else is (container.ts).
 */
import { inject, injectable } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import { ForbiddenError, InvalidError, UnauthorizedError } from '../errors.js';
import type { EventBus } from '../events/event-bus.js';
import { nowNanos, type LogEventType } from '../events/event-types.js';
import { DefenderService } from '../security/defender.service.js';
import type { LoginGate, LoginRequest, LoginResult } from '../sdk/login.js';
import { loginProtocolOf, type Protocol } from '../sdk/protocols.js';
import { TwoFactorService } from './two-factor.service.js';
import { UserAuthService, loginRefusal } from './user-auth.service.js';

@injectable()
export class InterimLoginGate implements LoginGate {
  constructor(
    @inject(UserAuthService) private readonly users: UserAuthService,
    @inject(TwoFactorService) private readonly twoFactor: TwoFactorService,
    @inject(DefenderService) private readonly defender: DefenderService,
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.InstanceId) private readonly instanceId: string,
  ) {}

  /** A login event of `protocol`; failed logins also score the host (1: existing account, 2: no such account). */
  private async logEvent(event: LogEventType, r: LoginRequest, message: string, role = ''): Promise<void> {
    this.bus.publish('log', {
      timestamp: nowNanos(),
      event,
      protocol: r.protocol,
      username: r.username,
      ip: r.ip,
      message,
      role,
      instance_id: this.instanceId,
    });
    if (event === 1 || event === 2) await this.defender.addEvent(r.ip, event === 1 ? 'valid' : 'invalid', r.protocol);
  }

  async authenticate(r: LoginRequest): Promise<LoginResult> {
    if (r.credential.method !== 'password' || (r.audience ?? 'user') !== 'user') {
      throw new InvalidError(`login method ${r.credential.method} is not supported here yet`);
    }
    const banned = await this.defender.banRefusal(r.ip, r.protocol);
    if (banned) throw new ForbiddenError(banned);
    const login = await this.users.checkLogin(r.username, r.credential.password);
    if (!login) {
      await this.logEvent((await this.users.findByUsername(r.username)) ? 1 : 2, r, 'invalid user credentials');
      throw new UnauthorizedError('invalid credentials');
    }
    const restriction = loginProtocolOf(r.protocol) ?? r.protocol;
    const refusal = loginRefusal(login.view, r.ip, restriction);
    if (refusal) {
      await this.logEvent(1, r, refusal);
      throw new ForbiddenError(refusal);
    }
    let secondFactor: 'none' | 'totp' | 'recovery';
    try {
      secondFactor = await this.twoFactor.checkLogin('user', login.user, r.credential.otp, restriction);
    } catch (err) {
      await this.defender.addEvent(r.ip, 'valid', r.protocol);
      throw err;
    }
    const identity = this.users.identity(login.user);
    await this.logEvent(5, r, 'user login', identity.role);
    return { status: 'ok', account: { kind: 'user', ...identity }, method: 'password', secondFactor };
  }

  async keyboardInteractivePrompts(_username: string, _protocol: Protocol): Promise<{ prompt: string; echo: boolean }[]> {
    return [{ prompt: 'Password: ', echo: false }];
  }
}
