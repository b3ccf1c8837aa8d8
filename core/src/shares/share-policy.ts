import { InvalidError } from '../errors.js';
import type { EffectiveUser } from '../accounts/effective-user.js';
import { isSubPath } from '../fs/path.js';
import { ShareScope } from './share.input.js';

/**
 * Share policies (filters.default_shares_policies, merged over the groups in
 * effective-merge.ts): `{path, permissions}` rules saying what a share of the
 * paths under `path` may let visitors do.
 *
 * - The rule of a share path is the one whose `path` is its longest prefix,
 *   compared segment by segment (`/pub` applies to `/pub/a`, not to `/public`).
 *   A path without a rule is not restricted.
 * - Its permissions give the allowed scope: `read` allows reading (scope 1),
 *   `write` or `upload` writing (scope 2), both (or `*`) reading and writing
 *   (scope 3, and so 1 and 2). Other permission strings allow nothing.
 * - Scopes are bit sets (1 read, 2 write): the allowed scope of a share is
 *   the intersection of its paths' rules.
 * - A share created without `scope` takes that allowed scope (400 when no rule
 *   applies to its paths, or when their rules have nothing in common).
 * - With the web client option `share_policy_change_disabled` a share whose
 *   scope goes beyond the rule of one of its paths is refused (400, naming the
 *   path and the rule), on create and on update. Without it the rules are
 *   only the default scope of a new share.
 */
export interface SharePolicyRule {
  path: string;
  permissions: string[];
}

export const POLICY_CHANGE_DISABLED = 'share_policy_change_disabled';

const READ = ['read', '*'];
const WRITE = ['write', 'upload', '*'];

/** The scope a rule's permissions allow, as a bit set: 0 nothing, 1 read, 2 write, 3 both. */
export function policyScope(permissions: readonly string[]): number {
  const read = permissions.some((p) => READ.includes(p)) ? ShareScope.Read : 0;
  const write = permissions.some((p) => WRITE.includes(p)) ? ShareScope.Write : 0;
  return read | write;
}

/** The effective share policy rules of a user. */
export function sharePolicies(u: EffectiveUser): SharePolicyRule[] {
  return (u.filters.default_shares_policies as SharePolicyRule[] | undefined) ?? [];
}

/** The user may not go beyond its share policies (web client option share_policy_change_disabled). */
export function policyChangeDisabled(u: EffectiveUser): boolean {
  return ((u.filters.web_client as string[] | undefined) ?? []).includes(POLICY_CHANGE_DISABLED);
}

/** The rule of a path: the one whose path is its longest prefix, segment by segment (null: none). */
export function policyOf(rules: readonly SharePolicyRule[], path: string): SharePolicyRule | null {
  let best: SharePolicyRule | null = null;
  for (const r of rules) if (isSubPath(r.path, path) && (!best || r.path.length > best.path.length)) best = r;
  return best;
}

const SCOPE_NAMES: Record<number, string> = { 0: 'no share', 1: 'read', 2: 'write', 3: 'read-write' };

/**
 * The scope of a share of `paths` (already normalised): `scope` as sent, or
 * when it is undefined the one the rules of the paths allow; refused (400)
 * when it goes beyond a path's rule and `locked` (share_policy_change_disabled).
 */
export function applySharePolicy(rules: readonly SharePolicyRule[], locked: boolean, paths: readonly string[], scope: ShareScope | undefined): ShareScope {
  const applied = paths.flatMap((p) => {
    const rule = policyOf(rules, p);
    return rule ? [{ path: p, rule, allowed: policyScope(rule.permissions) }] : [];
  });
  let out = scope;
  if (out === undefined) {
    if (!applied.length) throw new InvalidError('"scope" is required: no share policy applies to these paths');
    const allowed = applied.reduce((a, x) => a & x.allowed, ShareScope.ReadWrite as number);
    if (!allowed) {
      const names = [...new Set(applied.map((x) => `"${x.rule.path}" (${x.rule.permissions.join(', ')})`))].join(', ');
      throw new InvalidError(`"scope" is required: the share policies of these paths, ${names}, allow no common scope`);
    }
    out = allowed as ShareScope;
  }
  if (locked) {
    for (const x of applied) {
      if (out & ~x.allowed) {
        throw new InvalidError(
          `"scope": a ${SCOPE_NAMES[out]} share of ${x.path} goes beyond the share policy of "${x.rule.path}" (permissions: ${x.rule.permissions.join(', ')}; allows ${SCOPE_NAMES[x.allowed]})`,
        );
      }
    }
  }
  return out;
}
