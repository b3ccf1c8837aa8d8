import type { RouteFactory } from '../server.js';
import { healthRoutes } from './health.js';
import { tokenRoutes } from './tokens.js';
import { adminRoutes } from './admins.js';
import { roleRoutes } from './roles.js';
import { apiKeyRoutes } from './api-keys.js';
import { eventActionRoutes } from './event-actions.js';
import { eventRuleRoutes } from './event-rules.js';
import { retentionRoutes } from './retention.js';
import { userFileRoutes } from './user-files.js';
import { userDirRoutes } from './user-dirs.js';
import { userActionRoutes } from './user-actions.js';
import { userCapabilityRoutes } from './user-capabilities.js';
import { userProfileRoutes } from './user-profile.js';
import { connectionRoutes } from './connections.js';
import { userRoutes } from './users.js';
import { groupRoutes } from './groups.js';
import { folderRoutes } from './folders.js';
import { quotaRoutes } from './quotas.js';
import { backupRoutes } from './backup.js';
import { publicShareRoutes } from './public-shares.js';
import { userShareRoutes } from './user-shares.js';
import { tusRoutes } from '../tus/routes.js';
import { ipListRoutes } from './ip-lists.js';
import { defenderRoutes } from './defender.js';
import { oidcRoutes } from './oidc.js';
import { operationRoutes } from './operations.js';
import { metricsRoutes } from './metrics.js';
import { openApiRoutes } from '../openapi/routes.js';
import { eventRoutes } from './events.js';
import { twoFactorRoutes } from './two-factor.js';
import { passwordResetRoutes } from './password-reset.js';
import { webSessionRoutes } from './web-session.js';
import { declareAnswers } from '../openapi/answers.js';

/** Every route file of the core, one per resource (answers the routes do not declare are added from openapi/answers.ts). */
export const coreRoutes: RouteFactory[] = [
  healthRoutes,
  tokenRoutes,
  webSessionRoutes,
  adminRoutes,
  roleRoutes,
  apiKeyRoutes,
  eventActionRoutes,
  eventRuleRoutes,
  retentionRoutes,
  userFileRoutes,
  userDirRoutes,
  userActionRoutes,
  userCapabilityRoutes,
  userProfileRoutes,
  connectionRoutes,
  userRoutes,
  groupRoutes,
  folderRoutes,
  quotaRoutes,
  backupRoutes,
  userShareRoutes,
  publicShareRoutes,
  tusRoutes,
  ipListRoutes,
  oidcRoutes,
  defenderRoutes,
  eventRoutes,
  twoFactorRoutes,
  passwordResetRoutes,
  operationRoutes,
  metricsRoutes,
  openApiRoutes,
].map(declareAnswers);
