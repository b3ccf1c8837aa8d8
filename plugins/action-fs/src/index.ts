import { definePlugin, packageInfo, type ActionContext, type ActionTypeDef, type PluginHost } from '@ferry/core';
import { compress } from './compress.js';
import { decompress } from './decompress.js';
import { metadataCheck } from './metadata-check.js';
import { copyAll, deleteAll, existAll, mkdirAll, renameAll, type FsRun } from './ops.js';
import { pgpAll } from './pgp.js';
import { FsActionType, fsConfigSchema, SECRET_FIELDS, TEMPLATE_FIELDS, type FsConfig } from './schema.js';

export { fsConfigSchema, FsActionType, PgpMode, MetaCondition, Overwrite, DECOMPRESS_DEFAULTS } from './schema.js';
export type { FsConfig, PgpConfig, MetadataCheckConfig, DecompressConfig, CompressConfig, RenameConfig, KeyValue } from './schema.js';
export { encryptStream, decryptStream, readPublicKeys, unlockPrivateKey } from './pgp.js';
export { globMatch } from './metadata-check.js';

const pkg = packageInfo(import.meta.url);

/** Triggers with a user: filesystem, provider (user add/update), schedule and on demand (every matching user), IDP login. */
const TRIGGERS = [1, 2, 3, 6, 7];

/** The users the action works on: the event's user, or every user matching a scheduled / on-demand rule's conditions. */
async function usernames(ctx: ActionContext, host: PluginHost): Promise<string[]> {
  if (ctx.trigger === 3 || ctx.trigger === 6) return (await host.accounts.users({ conditions: ctx.conditions })).map((u) => u.username);
  return ctx.username ? [ctx.username] : [];
}

/** Settles with `p`, or rejects as soon as the signal fires (a backend call that ignores the signal cannot hold the action). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Runs the configured sub-type on one user's files. */
export async function runFsConfig(r: FsRun, o: FsConfig): Promise<void> {
  switch (o.type) {
    case FsActionType.Rename:
      return renameAll(r, o.renames ?? []);
    case FsActionType.Delete:
      return deleteAll(r, o.deletes ?? []);
    case FsActionType.Mkdirs:
      return mkdirAll(r, o.mkdirs ?? []);
    case FsActionType.Exist:
      return existAll(r, o.exist ?? []);
    case FsActionType.Compress:
      await compress(r, o.compress!);
      return;
    case FsActionType.Copy:
      return copyAll(r, o.copy ?? []);
    case FsActionType.Pgp:
      return pgpAll(r, o.pgp!);
    case FsActionType.MetadataCheck:
      return metadataCheck(r, o.metadata_check!);
    case FsActionType.Decompress:
      await decompress(r, o.decompress!);
      return;
    default:
      throw new Error(`unknown filesystem action type ${o.type}`);
  }
}

/** Event action 9: filesystem actions on the event user's storage (any backend). */
export function fsAction(host: PluginHost): ActionTypeDef<FsConfig> {
  return {
    type: 9,
    key: 'filesystem',
    optionsKey: 'fs_config',
    optionsSchema: fsConfigSchema,
    secretFields: SECRET_FIELDS,
    templateFields: TEMPLATE_FIELDS,
    triggers: TRIGGERS,
    providerObjects: ['user'],
    create: (options) => ({
      async execute(ctx) {
        const timer = options.timeout ? AbortSignal.timeout(options.timeout * 1000) : undefined;
        const signal = timer ? AbortSignal.any([ctx.signal, timer]) : ctx.signal;
        const stopped = () => (timer?.aborted ? new Error(`filesystem action timed out after ${options.timeout} s`) : new Error('filesystem action aborted'));
        const users = await usernames(ctx, host);
        const failures: string[] = [];
        for (const username of users) {
          if (signal.aborted) throw stopped();
          let files;
          try {
            files = await host.files.open(username);
            await untilAborted(runFsConfig({ files, signal, logger: ctx.logger }, options), signal);
          } catch (err) {
            if (signal.aborted) throw stopped();
            const msg = (err as Error).message;
            failures.push(users.length > 1 || ctx.trigger === 3 || ctx.trigger === 6 ? `user "${username}": ${msg}` : msg);
          } finally {
            await files?.close().catch(() => undefined);
          }
        }
        if (failures.length) throw new Error(failures.join('; '));
      },
    }),
  };
}

export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  register(ctx) {
    ctx.registerActionType(fsAction(ctx.host));
  },
});
