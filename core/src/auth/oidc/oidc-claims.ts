import type { OidcBindingConfig } from '../../config/oidc.schema.js';

export type OidcLoginKind = 'admin' | 'user';

/**
 * A claim by name: the top-level claim when it exists (names may contain
 * dots), otherwise a dotted path into nested objects (`realm_access.roles`).
 */
export function claimAt(claims: Record<string, unknown>, field: string): unknown {
  if (Object.hasOwn(claims, field)) return claims[field];
  let cur: unknown = claims;
  for (const part of field.split('.')) {
    if (!cur || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** The role claim as a list of strings (a string claim is one value; other types are ignored). */
export function roleValues(claims: Record<string, unknown>, roleField: string): string[] {
  if (!roleField) return [];
  const v = claimAt(claims, roleField);
  if (typeof v === 'string') return v ? [v] : [];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string' && x !== '');
  return [];
}

/** Whether one of the role values is an admin role (case-insensitive). */
export function isAdminRole(roles: string[], adminRoles: string[]): boolean {
  const admins = new Set(adminRoles.map((r) => r.toLowerCase()));
  return roles.some((r) => admins.has(r.toLowerCase()));
}

/**
 * Admin or user login: with implicit_roles the requested target decides,
 * otherwise the role claim (admin when it holds an admin role value).
 */
export function loginKind(
  o: Pick<OidcBindingConfig, 'implicit_roles' | 'role_field' | 'admin_roles'>,
  claims: Record<string, unknown>,
  target: OidcLoginKind,
): OidcLoginKind {
  if (o.implicit_roles) return target;
  return isAdminRole(roleValues(claims, o.role_field), o.admin_roles) ? 'admin' : 'user';
}

/** The claims listed in custom_fields that the ID token carries (nothing else: `.IDPFields`). */
export function customFields(claims: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = claimAt(claims, f);
    if (v !== undefined) out[f] = v;
  }
  return out;
}
