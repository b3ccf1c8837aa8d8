import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig, RateLimitScope } from '../config/schema.js';
import { DefenderService } from '../security/defender.service.js';
import type { ServiceRunner } from '../plugins/services.js';
import type { ServiceStatus } from '../sdk/service.js';

/** How long the status query waits for the database before reporting it inactive. */
export const STATUS_DB_TIMEOUT_MS = 3000;

export interface TotpConfigStatus {
  name: string;
  issuer: string;
  algo: string;
}

/**
 * ServicesStatus of reference.yaml, and a section per service plugin that
 * fills none of the API's (ssh, ftp, webdav) under its own `statusKey`.
 */
export interface ServicesStatus {
  ssh: ServiceStatus;
  ftp: ServiceStatus;
  webdav: ServiceStatus;
  data_provider: { is_active: boolean; driver: string; error?: string };
  defender: { is_active: boolean };
  mfa: { is_active: boolean; totp_configs: TotpConfigStatus[] };
  allow_list: { is_active: boolean };
  rate_limiters: { is_active: boolean; protocols: string[] };
  [serviceSection: string]: unknown;
}

/** Credentials inside a connection string never reach an answer. */
function withoutCredentials(message: string): string {
  return message.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^@/\s]*@/gi, '$1');
}

const RATE_LIMIT_SCOPES: RateLimitScope[] = ['api', 'token', 'shares', 'tus'];

/**
 * The live state of the node's services for GET /api/v2/status: the data
 * provider is asked (a trivial query, bounded in time), the rest is read from
 * the configuration this node runs with. The ssh, ftp and webdav sections
 * (and any other a service names) come from the service plugins
 * (plugins/services.ts): inactive with no bindings when no service fills them.
 */
@injectable()
export class StatusService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(DefenderService) private readonly defender: DefenderService,
    @inject(TOKENS.Services) private readonly services: ServiceRunner,
  ) {}

  async status(): Promise<ServicesStatus> {
    const { ssh, ftp, webdav, ...others } = this.services.sections();
    return {
      ssh: ssh!,
      ftp: ftp!,
      webdav: webdav!,
      ...others,
      data_provider: await this.dataProvider(),
      defender: { is_active: this.defender.enabled },
      mfa: this.mfa(),
      allow_list: { is_active: this.config.common.allow_list_status },
      rate_limiters: this.rateLimiters(),
    };
  }

  /** A query on a pooled connection: inactive with the driver's error when it fails or does not answer in time. */
  async dataProvider(): Promise<ServicesStatus['data_provider']> {
    const driver = this.config.data_provider.driver;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`the database did not answer within ${STATUS_DB_TIMEOUT_MS} ms`), STATUS_DB_TIMEOUT_MS);
    });
    try {
      const query = this.orm.em
        .getConnection()
        .execute('select 1 as ok')
        .then(
          () => null,
          (err: unknown) => (err instanceof Error ? err.message : String(err)) || 'the database query failed',
        );
      const problem = await Promise.race([query, timeout]);
      return problem ? { is_active: false, driver, error: withoutCredentials(problem) } : { is_active: true, driver };
    } finally {
      clearTimeout(timer);
    }
  }

  /** TOTP configurations of the configuration (`mfa.totp`); none configured means MFA is inactive on this node. */
  mfa(): ServicesStatus['mfa'] {
    const totp_configs = this.config.mfa.totp.map((e) => ({ name: e.name, issuer: e.issuer, algo: e.algo }));
    return { is_active: totp_configs.length > 0, totp_configs };
  }

  /**
   * Rate limiters of the configuration (`rate_limit`: per scope - api, token,
   * shares, tus - a global and a per-host token bucket, off while its
   * `average` is 0): active when at least one bucket is on. Every scope is a
   * route of the HTTP server, so the protocol is HTTP.
   */
  rateLimiters(): ServicesStatus['rate_limiters'] {
    const rl = this.config.rate_limit;
    const active = RATE_LIMIT_SCOPES.some((scope) => rl[scope].global.average > 0 || rl[scope].per_host.average > 0);
    return { is_active: active, protocols: active ? ['HTTP'] : [] };
  }
}
