import { LoginRefusedError, type LoginCredential, type LoginGate, type LoginResult, type LoginStep, type Logger } from '@ferry/core';
import type { AuthContext, KeyboardAuthContext } from 'ssh2';

/** SFTP logins are checked (and their events named) as SSH logins. */
const LOGIN_PROTOCOL = 'SSH';
const ALL_METHODS = ['publickey', 'password', 'keyboard-interactive'] as const;
type AuthMethod = (typeof ALL_METHODS)[number];

export interface AuthOptions {
  login: LoginGate;
  ip: string;
  logger: Logger;
  maxTries: number;
  /** Called once the attempts are exhausted: close the connection. */
  onTooManyTries(): void;
}

/**
 * The authentication of one SSH connection, through the login service only:
 * password, public key (query, then signed), keyboard-interactive, the
 * multi-step logins of `partial` and the second factor as a
 * keyboard-interactive step after `second-factor`.
 */
export class ConnectionAuth {
  private username: string | null = null;
  private passed: LoginStep[] = [];
  /** The methods the client may use next (after a partial success). */
  private next: AuthMethod[] = [...ALL_METHODS];
  /** A credential passed and the second factor is due (an otp step as keyboard-interactive). */
  private otpDue = false;
  private failures = 0;
  /** The username the connection logged in with, once accepted. */
  account: string | null = null;
  /** The client tried a credential (a method other than `none`). */
  tried = false;

  constructor(private readonly o: AuthOptions) {}

  handle(ctx: AuthContext): void {
    this.attempt(ctx).catch((err: unknown) => {
      this.o.logger.warn({ err, ip: this.o.ip }, 'ssh authentication failed unexpectedly');
      this.refuse(ctx, true);
    });
  }

  private async attempt(ctx: AuthContext): Promise<void> {
    if (this.username !== ctx.username) {
      // another account: the steps passed do not carry over
      this.username = ctx.username;
      this.passed = [];
      this.next = [...ALL_METHODS];
      this.otpDue = false;
    }
    if (ctx.method === 'none') return void ctx.reject(this.methodsLeft());
    this.tried = true;
    if (ctx.method === 'keyboard-interactive' && this.otpDue) return this.otpStep(ctx);
    if (!this.methodsLeft().includes(ctx.method as AuthMethod)) return void ctx.reject(this.methodsLeft());
    switch (ctx.method) {
      case 'password':
        return this.settle(ctx, 'password', await this.authenticate(ctx.username, { method: 'password', password: ctx.password }));
      case 'publickey': {
        const signed = ctx.signature && ctx.blob ? { data: ctx.blob, signature: ctx.signature, hashAlgo: ctx.hashAlgo } : undefined;
        const credential: LoginCredential = { method: 'publickey', algo: ctx.key.algo, key: ctx.key.data, ...(signed ? { signed } : {}) };
        return this.settle(ctx, 'publickey', await this.authenticate(ctx.username, credential), !signed);
      }
      case 'keyboard-interactive': {
        const prompts = await this.o.login.keyboardInteractivePrompts(ctx.username, LOGIN_PROTOCOL);
        const answers = await ask(ctx, prompts);
        return this.settle(ctx, 'keyboard-interactive', await this.authenticate(ctx.username, { method: 'keyboard-interactive', answers }));
      }
      default:
        return void ctx.reject(this.methodsLeft());
    }
  }

  private async otpStep(ctx: KeyboardAuthContext): Promise<void> {
    const [code = ''] = await ask(ctx, [{ prompt: 'Verification code: ', echo: false }]);
    this.settle(ctx, null, await this.authenticate(ctx.username, { method: 'otp', code }));
  }

  /** The login service's answer, or null for a refusal (logged and published by the service). */
  private async authenticate(username: string, credential: LoginCredential): Promise<LoginResult | null> {
    try {
      return await this.o.login.authenticate({
        username,
        credential,
        ip: this.o.ip,
        protocol: LOGIN_PROTOCOL,
        passed: this.passed,
        secondFactorLater: true,
      });
    } catch (err) {
      if (!(err instanceof LoginRefusedError)) throw err;
      this.o.logger.info({ ip: this.o.ip, username, method: credential.method, reason: err.reason }, 'ssh login refused');
      return null;
    }
  }

  private settle(ctx: AuthContext, step: LoginStep | null, result: LoginResult | null, query = false): void {
    if (result === null) return this.refuse(ctx, !query);
    switch (result.status) {
      case 'key-accepted':
        // the client asked whether the key would do: it signs next
        return void ctx.accept();
      case 'ok':
        this.account = ctx.username;
        return void ctx.accept();
      case 'partial':
        if (step) this.passed.push(step);
        this.next = [...result.next];
        return void ctx.reject(this.methodsLeft(), true);
      case 'second-factor':
        if (step) this.passed.push(step);
        this.otpDue = true;
        this.next = ['keyboard-interactive'];
        return void ctx.reject(['keyboard-interactive'], true);
    }
  }

  private refuse(ctx: AuthContext, counts: boolean): void {
    if (counts && ++this.failures >= this.o.maxTries) {
      ctx.reject();
      this.o.onTooManyTries();
      return;
    }
    ctx.reject(this.methodsLeft());
  }

  private methodsLeft(): AuthMethod[] {
    return this.next.filter((m) => !this.passed.includes(m));
  }
}

function ask(ctx: KeyboardAuthContext, prompts: { prompt: string; echo: boolean }[]): Promise<string[]> {
  return new Promise((resolve) => ctx.prompt(prompts, (answers) => resolve(answers ?? [])));
}
