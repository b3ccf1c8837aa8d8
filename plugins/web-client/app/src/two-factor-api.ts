/**
 * The two-factor REST calls of the signed-in account, for the web client's
 * profile (/api/v2/user/...) and the web admin's (/api/v2/admin/...): the
 * TOTP configurations, a new secret, the code check, the save, and the
 * recovery codes. The two kinds' routes take and give the same bodies (the
 * admin's save has no `protocols`), so the calls are typed by the user's.
 */
import type { operations } from '../generated/api';
import { api, errorMessage } from './api';
import { t } from './strings';

type TotpSave = NonNullable<operations['post_api_v2_user_totp_save']['requestBody']>['content']['application/json'];
export type MfaProtocol = NonNullable<TotpSave['protocols']>[number];
/** The protocols a user's TOTP may apply to (the save route's enum). */
export const MFA_PROTOCOLS: readonly MfaProtocol[] = ['HTTP', 'SSH', 'FTP'];

export type TotpConfig = { name: string; issuer: string };
export type Enrolment = { config_name: string; secret: string; url: string };
/** The two-factor state the section shows. */
export type TwoFactorState = { enabled: boolean; config_name: string; protocols: string[]; required_protocols: string[] };

/** The calls of one kind of account; an outcome of null is done, a string the reason to show. */
export interface TwoFactorApi {
  /** Whether the account chooses the protocols its code is asked on (users; an admin's applies to its HTTP logins). */
  protocols: boolean;
  configs(): Promise<TotpConfig[] | string>;
  generate(configName: string): Promise<Enrolment | string>;
  validate(e: Enrolment, passcode: string): Promise<string | null>;
  enable(e: Enrolment, protocols: MfaProtocol[]): Promise<string | null>;
  disable(): Promise<string | null>;
  /** The unused recovery codes (GET), or new ones (POST, the old ones stop working). */
  recoveryCodes(fresh: boolean): Promise<string[] | string>;
}

async function outcome(call: Promise<{ response: Response; error?: unknown }>): Promise<string | null> {
  try {
    const { response, error } = await call;
    return response.ok ? null : errorMessage(error, t.unexpected(response.status));
  } catch {
    return t.networkError;
  }
}

/** The calls of the user's routes (kind 'user') or the admin's (kind 'admin'). */
export function twoFactorApi(kind: 'user' | 'admin'): TwoFactorApi {
  // the admin's routes are the user's twins (same bodies and answers): typed as the user's
  const path = <S extends string>(suffix: S) => `/api/v2/${kind}/${suffix}` as `/api/v2/user/${S}`;
  return {
    protocols: kind === 'user',
    async configs() {
      try {
        const { data, error, response } = await api.GET(path('totp/configs'));
        if (!data) return errorMessage(error, t.unexpected(response.status));
        return data.map((c) => ({ name: c.name ?? '', issuer: c.issuer ?? '' }));
      } catch {
        return t.networkError;
      }
    },
    async generate(configName) {
      try {
        const { data, error, response } = await api.POST(path('totp/generate'), { body: { config_name: configName } });
        if (!data) return errorMessage(error, t.unexpected(response.status));
        return { config_name: data.config_name ?? configName, secret: data.secret ?? '', url: data.url ?? '' };
      } catch {
        return t.networkError;
      }
    },
    validate: (e, passcode) => outcome(api.POST(path('totp/validate'), { body: { config_name: e.config_name, passcode, secret: e.secret } })),
    enable: (e, protocols) =>
      outcome(
        api.POST(path('totp/save'), {
          body: { enabled: true, config_name: e.config_name, ...(kind === 'user' ? { protocols } : {}), secret: { status: 'Plain', payload: e.secret } },
        }),
      ),
    disable: () => outcome(api.POST(path('totp/save'), { body: { enabled: false } })),
    async recoveryCodes(fresh) {
      try {
        if (fresh) {
          const { data, error, response } = await api.POST(path('2fa/recoverycodes'));
          return data ?? errorMessage(error, t.unexpected(response.status));
        }
        const { data, error, response } = await api.GET(path('2fa/recoverycodes'));
        if (!data) return errorMessage(error, t.unexpected(response.status));
        return data.filter((c) => !c.used).map((c) => c.secret?.payload ?? '');
      } catch {
        return t.networkError;
      }
    },
  };
}
