import type { ActionTypeDef } from '@ferry/core';
import { userInactivityConfigSchema } from './config.schema.js';
import type { PluginHost } from '@ferry/core';
import { forEachCollect, targetUsers } from './targets.js';

const DAY = 86_400_000;

/**
 * Type 14: users without a login for `disable_threshold` days are disabled,
 * for `delete_threshold` days deleted. A user that never logged in counts
 * from its creation.
 */
export function userInactivityAction(s: PluginHost): ActionTypeDef<{ disable_threshold: number; delete_threshold: number }> {
  return {
    type: 14,
    key: 'user-inactivity-check',
    optionsKey: 'user_inactivity_config',
    optionsSchema: userInactivityConfigSchema,
    triggers: [3, 6],
    create: (o) => ({
      async execute(ctx) {
        const accounts = s.accounts;
        const now = Date.now();
        const disabled: string[] = [];
        const deleted: string[] = [];
        const users = await targetUsers(ctx, accounts);
        await forEachCollect(
          users,
          (u) => `user "${u.username}"`,
          async (u) => {
            const idle = now - (u.last_login || u.created_at);
            if (o.delete_threshold > 0 && idle >= o.delete_threshold * DAY) {
              await accounts.deleteUser(u.username);
              deleted.push(u.username);
            } else if (o.disable_threshold > 0 && idle >= o.disable_threshold * DAY && u.status === 1) {
              await accounts.setUserStatus(u.username, 0);
              disabled.push(u.username);
            }
          },
          () => ({ DisabledUsers: disabled, DeletedUsers: deleted }),
        );
        ctx.logger.info({ disabled, deleted }, 'user inactivity check done');
        return { outputs: { DisabledUsers: disabled, DeletedUsers: deleted } };
      },
    }),
  };
}
