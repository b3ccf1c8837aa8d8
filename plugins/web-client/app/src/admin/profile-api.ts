/** The signed-in admin's profile (GET/PUT /api/v2/admin/profile), typed by the generated OpenAPI types. */
import type { operations } from '../../generated/api';
import { api, errorMessage } from '../api';
import { t } from '../strings';

export type AdminProfile = operations['get_api_v2_admin_profile']['responses'][200]['content']['application/json'];
export type AdminProfileUpdate = NonNullable<operations['put_api_v2_admin_profile']['requestBody']>['content']['application/json'];

export async function loadAdminProfile(): Promise<AdminProfile | string> {
  try {
    const { data, error, response } = await api.GET('/api/v2/admin/profile');
    return data ?? errorMessage(error, t.unexpected(response.status));
  } catch {
    return t.networkError;
  }
}

/** Saves the profile: null when done, else the reason (the API's message, naming the field). */
export async function saveAdminProfile(body: AdminProfileUpdate): Promise<string | null> {
  try {
    const { response, error } = await api.PUT('/api/v2/admin/profile', { body });
    return response.ok ? null : errorMessage(error, t.unexpected(response.status));
  } catch {
    return t.networkError;
  }
}
