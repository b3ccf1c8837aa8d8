import type { AccountUser, ActionContext, EventAccounts } from '@ferry/core';

/** Triggers of actions that work on users: filesystem, provider, schedule, on demand, IDP login. */
export const USER_TRIGGERS = [1, 2, 3, 6, 7];

/** On provider events, actions that work on users run only for events on users (never deletes). */
export const USER_OBJECTS = ['user'];

/**
 * Users an action applies to: the user the event concerns (filesystem,
 * provider events on users, IDP user logins), or for scheduled and
 * on-demand rules every user matching the rule's names/group_names/role_names.
 */
export async function targetUsers(ctx: ActionContext, accounts: EventAccounts): Promise<AccountUser[]> {
  if (ctx.trigger === 3 || ctx.trigger === 6) return accounts.users({ conditions: ctx.conditions });
  if (ctx.username) return accounts.users({ username: ctx.username });
  return [];
}

/**
 * Runs `fn` for each item; throws one error listing every failure after
 * trying them all. `outputs` (what was done so far) is attached to that error,
 * so later and failure actions still see the items that were processed.
 */
export async function forEachCollect<T>(
  items: T[],
  label: (t: T) => string,
  fn: (t: T) => Promise<void>,
  outputs?: () => Record<string, unknown>,
): Promise<void> {
  const failures: string[] = [];
  for (const it of items) {
    try {
      await fn(it);
    } catch (err) {
      failures.push(`${label(it)}: ${(err as Error).message}`);
    }
  }
  if (failures.length) throw Object.assign(new Error(failures.join('; ')), outputs ? { outputs: outputs() } : {});
}
