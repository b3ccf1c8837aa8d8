import type { ActionTypeDef, ShareInfo } from '@ferry/core';
import { pwdExpirationConfigSchema, shareExpirationConfigSchema } from './config.schema.js';
import type { PluginHost } from '@ferry/core';
import { USER_OBJECTS, USER_TRIGGERS, forEachCollect, targetUsers } from './targets.js';

const DAY = 86_400_000;

/** Password expiry of a user (filters.password_expiration days after the last change), or 0 when it never expires. */
export function passwordExpiresAt(u: { last_password_change: number; created_at: number; filters: Record<string, unknown> }): number {
  const days = Number(u.filters.password_expiration ?? 0);
  if (!(days > 0)) return 0;
  return (u.last_password_change || u.created_at) + days * DAY;
}

/** Type 11: mails users whose password expires within `threshold` days. */
export function passwordExpirationAction(s: PluginHost): ActionTypeDef<{ threshold: number }> {
  return {
    type: 11,
    key: 'password-expiration-check',
    optionsKey: 'pwd_expiration_config',
    optionsSchema: pwdExpirationConfigSchema,
    triggers: USER_TRIGGERS,
    providerObjects: USER_OBJECTS,
    create: (options) => ({
      async execute(ctx) {
        const now = Date.now();
        const users = (await targetUsers(ctx, s.accounts)).filter((u) => {
          const at = passwordExpiresAt(u);
          return at > 0 && u.email && u.status === 1 && at - options.threshold * DAY <= now;
        });
        const notified: string[] = [];
        await forEachCollect(
          users,
          (u) => `user "${u.username}"`,
          async (u) => {
            const at = passwordExpiresAt(u);
            const left = Math.max(0, Math.ceil((at - now) / DAY));
            await s.mail.send({
              to: [u.email],
              subject: at <= now ? 'Your password has expired' : `Your password expires in ${left} day${left === 1 ? '' : 's'}`,
              body:
                at <= now
                  ? `Hello ${u.username},\n\nthe password of your account expired on ${new Date(at).toISOString()}. Please change it.\n`
                  : `Hello ${u.username},\n\nthe password of your account expires on ${new Date(at).toISOString()}. Please change it before then.\n`,
            });
            notified.push(u.username);
          },
          () => ({ NotifiedUsers: notified }),
        );
        ctx.logger.info({ notified }, 'password expiration check done');
        return { outputs: { NotifiedUsers: notified } };
      },
    }),
  };
}

/** Type 12: fails (so failure actions run) listing the users whose account has expired. */
export function userExpirationAction(s: PluginHost): ActionTypeDef {
  return {
    type: 12,
    key: 'user-expiration-check',
    triggers: USER_TRIGGERS,
    providerObjects: USER_OBJECTS,
    create: () => ({
      async execute(ctx) {
        const now = Date.now();
        const expired = (await targetUsers(ctx, s.accounts)).filter((u) => u.expiration_date > 0 && u.expiration_date < now).map((u) => u.username);
        if (expired.length) throw Object.assign(new Error(`expired users: ${expired.join(', ')}`), { outputs: { ExpiredUsers: expired } });
        return { outputs: { ExpiredUsers: [] } };
      },
    }),
  };
}

/** `.Shares[]` of the share expiration check. */
export interface ShareOutput {
  ShareID: string;
  Name: string;
  Username: string;
  ExpiresAt: Date;
  Expired: boolean;
  Deleted: boolean;
}

/**
 * Type 18: notifies owners of shares expiring within `advance_notice` days
 * and deletes shares expired more than `delete_after` days ago, through the
 * shares store at TOKENS.Shares.
 */
export function shareExpirationAction(s: PluginHost): ActionTypeDef<{ advance_notice: number; delete_after: number }> {
  return {
    type: 18,
    key: 'share-expiration-check',
    optionsKey: 'share_expiration_config',
    optionsSchema: shareExpirationConfigSchema,
    triggers: [3, 6],
    create: (options) => ({
      async execute(ctx) {
        const store = s.shares;
        const users = await targetUsers(ctx, s.accounts);
        const byName = new Map(users.map((u) => [u.username, u]));
        const now = Date.now();
        const shares = (await store.list({ usernames: [...byName.keys()] })).filter((x) => x.expires_at > 0 && byName.has(x.username));
        const out: ShareOutput[] = [];
        const notices = new Map<string, ShareInfo[]>();
        const failures: string[] = [];
        for (const sh of shares) {
          const expired = sh.expires_at <= now;
          const o: ShareOutput = {
            ShareID: sh.share_id,
            Name: sh.name,
            Username: sh.username,
            ExpiresAt: new Date(sh.expires_at),
            Expired: expired,
            Deleted: false,
          };
          if (expired && options.delete_after >= 0 && sh.expires_at + options.delete_after * DAY <= now) {
            try {
              await store.delete(sh.share_id);
              o.Deleted = true;
            } catch (err) {
              failures.push(`share "${sh.share_id}": ${(err as Error).message}`);
            }
          } else if (!expired && options.advance_notice > 0 && sh.expires_at - options.advance_notice * DAY <= now) {
            notices.set(sh.username, [...(notices.get(sh.username) ?? []), sh]);
          } else if (!expired) continue;
          out.push(o);
        }
        for (const [username, list] of notices) {
          const email = byName.get(username)?.email;
          if (!email) continue;
          try {
            await s.mail.send({
              to: [email],
              subject: `${list.length} of your shares expire soon`,
              body: `Hello ${username},\n\n${list.map((x) => `- ${x.name || x.share_id}: expires ${new Date(x.expires_at).toISOString()}`).join('\n')}\n`,
            });
          } catch (err) {
            failures.push(`notice to "${username}": ${(err as Error).message}`);
          }
        }
        if (failures.length) throw Object.assign(new Error(failures.join('; ')), { outputs: { Shares: out } });
        return { outputs: { Shares: out } };
      },
    }),
  };
}
