import type { ActionTypeDef } from '@ferry/core';
import type { PluginHost } from '@ferry/core';
import { USER_OBJECTS, USER_TRIGGERS, forEachCollect, targetUsers } from './targets.js';

/** Type 5: recomputes the used quota of the users from their storage. */
export function userQuotaResetAction(s: PluginHost): ActionTypeDef {
  return {
    type: 5,
    key: 'user-quota-reset',
    triggers: USER_TRIGGERS,
    providerObjects: USER_OBJECTS,
    create: () => ({
      async execute(ctx) {
        const users = await targetUsers(ctx, s.accounts);
        await forEachCollect(
          users,
          (u) => `user "${u.username}"`,
          async (u) => {
            const used = await s.accounts.rescanUserQuota(u.username);
            ctx.logger.info({ username: u.username, ...used }, 'user quota updated');
          },
        );
      },
    }),
  };
}

/** Type 6: recomputes the used quota of virtual folders (the folder of a provider event, or folders matching names). */
export function folderQuotaResetAction(s: PluginHost): ActionTypeDef {
  return {
    type: 6,
    key: 'folder-quota-reset',
    triggers: [2, 3, 6],
    providerObjects: ['folder'],
    create: () => ({
      async execute(ctx) {
        const accounts = s.accounts;
        let names: string[];
        if (ctx.trigger === 2) names = ctx.object?.type === 'folder' ? await accounts.folders({ name: ctx.object.name }) : [];
        else names = await accounts.folders({ names: ctx.conditions?.names });
        await forEachCollect(
          names,
          (n) => `folder "${n}"`,
          async (n) => {
            const used = await accounts.rescanFolderQuota(n);
            ctx.logger.info({ folder: n, ...used }, 'folder quota updated');
          },
        );
      },
    }),
  };
}

/** Type 7: resets the used upload/download transfer quota of the users. */
export function transferQuotaResetAction(s: PluginHost): ActionTypeDef {
  return {
    type: 7,
    key: 'transfer-quota-reset',
    triggers: USER_TRIGGERS,
    providerObjects: USER_OBJECTS,
    create: () => ({
      async execute(ctx) {
        const users = await targetUsers(ctx, s.accounts);
        await forEachCollect(
          users,
          (u) => `user "${u.username}"`,
          (u) => s.accounts.resetTransferQuota(u.username),
        );
      },
    }),
  };
}
