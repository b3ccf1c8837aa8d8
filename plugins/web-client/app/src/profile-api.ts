/** The profile's REST calls (GET/PUT /api/v2/user/profile, the API keys; the two-factor ones are two-factor-api.ts), typed by the generated OpenAPI types. */
import type { operations } from '../generated/api';
import { api, errorMessage } from './api';
import { t } from './strings';

/** GET /api/v2/user/profile: the profile, the effective web client options and the two-factor state. */
export type Profile = operations['get_api_v2_user_profile']['responses'][200]['content']['application/json'];
type ProfileUpdate = NonNullable<operations['put_api_v2_user_profile']['requestBody']>['content']['application/json'];

/** The web client options the profile honours (reference.yaml WebClientOptions). */
export type WebClientOption =
  'password-change-disabled' | 'info-change-disabled' | 'api-key-auth-change-disabled' | 'publickey-change-disabled' | 'mfa-disabled';

export const forbids = (p: Profile, o: WebClientOption): boolean => (p.web_client ?? []).includes(o);

/** The outcome of a call: null when done, else the reason to show. */
type Outcome = Promise<string | null>;
async function outcome(call: Promise<{ response: Response; error?: unknown }>): Outcome {
  try {
    const { response, error } = await call;
    return response.ok ? null : errorMessage(error, t.unexpected(response.status));
  } catch {
    return t.networkError;
  }
}

export async function loadProfile(): Promise<Profile | string> {
  try {
    const { data, error, response } = await api.GET('/api/v2/user/profile');
    return data ?? errorMessage(error, t.unexpected(response.status));
  } catch {
    return t.networkError;
  }
}

export const saveProfile = (body: ProfileUpdate): Outcome => outcome(api.PUT('/api/v2/user/profile', { body }));

/** One of the user's own API keys (GET /api/v2/user/apikeys, an addition). */
export type OwnApiKey = { id: string; name: string; description: string; created_at: number; last_use_at: number; expires_at: number };

export async function listApiKeys(): Promise<OwnApiKey[] | string> {
  try {
    const { data, error, response } = await api.GET('/api/v2/user/apikeys');
    if (!data) return errorMessage(error, t.unexpected(response.status));
    return data.map((k) => ({
      id: k.id ?? '',
      name: k.name ?? '',
      description: k.description ?? '',
      created_at: k.created_at ?? 0,
      last_use_at: k.last_use_at ?? 0,
      expires_at: k.expires_at ?? 0,
    }));
  } catch {
    return t.networkError;
  }
}

/** Creates a key: the key itself (shown once), or the reason it was refused. */
export async function createApiKey(name: string, description: string, expiresAt: number): Promise<{ key: string } | string> {
  try {
    const { data, error, response } = await api.POST('/api/v2/user/apikeys', { body: { name, description, expires_at: expiresAt } });
    return data ? { key: data.key } : errorMessage(error, t.unexpected(response.status));
  } catch {
    return t.networkError;
  }
}

export const deleteApiKey = (id: string): Outcome => outcome(api.DELETE('/api/v2/user/apikeys/{id}', { params: { path: { id } } }));
