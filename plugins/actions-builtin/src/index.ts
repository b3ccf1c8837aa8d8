import path from 'node:path';
import { definePlugin, packageInfo } from '@ferry/core';
import { pluginConfigSchema, type BuiltinActionsConfig } from './config.schema.js';
import { backupAction } from './backup.action.js';
import { folderQuotaResetAction, transferQuotaResetAction, userQuotaResetAction } from './quota.action.js';
import { retentionAction } from './retention.action.js';
import { passwordExpirationAction, shareExpirationAction, userExpirationAction } from './expiration.action.js';
import { userInactivityAction } from './inactivity.action.js';
import { rotateLogsAction } from './rotate-logs.action.js';
import { eventReportAction } from './event-report.action.js';
import { idpAccountAction } from './idp.action.js';

export { backupFileName } from './backup.action.js';
export { RetentionRun, type RetentionCheckOutput, type RetentionResult } from './retention.action.js';
export { passwordExpiresAt, type ShareOutput } from './expiration.action.js';
export { csvCell, type EventReport } from './event-report.action.js';
export type { BuiltinActionsConfig } from './config.schema.js';

const pkg = packageInfo(import.meta.url);

/**
 * Built-in event actions that act on Ferry itself: 4 backup, 5 user quota
 * reset, 6 folder quota reset, 7 transfer quota reset, 8 data retention,
 * 11 password expiration, 12 user expiration, 13 IDP account check, 14 user inactivity, 15 rotate
 * logs, 18 share expiration, 19 event report.
 */
export default definePlugin<BuiltinActionsConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: pluginConfigSchema,
  register(ctx, config) {
    const s = ctx.host;
    const reportsDir = () => (config.reports_dir ? path.resolve(ctx.dataDir, config.reports_dir) : path.join(ctx.dataDir, 'reports'));
    for (const def of [
      backupAction(s),
      userQuotaResetAction(s),
      folderQuotaResetAction(s),
      transferQuotaResetAction(s),
      retentionAction(s),
      passwordExpirationAction(s),
      userExpirationAction(s),
      userInactivityAction(s),
      rotateLogsAction(s),
      shareExpirationAction(s),
      eventReportAction(s, reportsDir),
      idpAccountAction(s),
    ]) {
      ctx.registerActionType(def);
    }
  },
});
