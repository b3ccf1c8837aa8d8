import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { TOKENS } from '../../tokens.js';
import { LOG_LEVELS, logLevelOf, setLogLevel, type Logger, type LogLevel } from '../../logger.js';
import { StatusService } from '../../ops/status.service.js';
import { UsageService, type UsageQuery } from '../../ops/usage.service.js';
import { ADMIN_AUTH, USER_AUTH, adminOf } from '../auth-strategies.js';
import { FileSessions } from '../../vfs/file-sessions.service.js';
import { CHECKSUM_ALGOS, fileChecksum, type ChecksumAlgo } from '../../vfs/checksum.js';
import { pathQuery, withUserSession } from '../user-session.js';
import { objectName } from '../../util/common.input.js';

const logLevelBody = Joi.object({ level: Joi.string().valid(...LOG_LEVELS).required() });

const checksumQuery = Joi.object({
  path: pathQuery.required(),
  algo: Joi.string()
    .valid(...CHECKSUM_ALGOS)
    .default('sha256'),
});

const day = Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/).messages({ 'string.pattern.base': '{{#label}} must be a date as YYYY-MM-DD' });
const usageQuery = Joi.object({
  from: day,
  to: day,
  usernames: Joi.string().custom((v: string, h) => {
    const names = v.split(',').map((n) => n.trim()).filter(Boolean);
    for (const n of names) {
      const r = objectName.validate(n);
      if (r.error) return h.message({ custom: `"usernames" holds an invalid username: ${r.error.message}` });
    }
    return names;
  }),
  offset: Joi.number().integer().min(0).default(0),
  limit: Joi.number().integer().min(1).max(500).default(100),
});

/**
 * /status (view_status), the run-time log level (`*`), the storage and
 * bandwidth usage report (view_users) and file checksums for users
 * (docs/operations.md).
 */
export function operationRoutes(c: DependencyContainer): ServerRoute[] {
  const status = c.resolve(StatusService);
  const usage = c.resolve(UsageService);
  const sessions = c.resolve(FileSessions);
  const root = c.resolve<Logger>(TOKENS.Logger);
  return [
    {
      method: 'GET',
      path: '/api/v2/status',
      options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: 'view_status', whileDatabaseDown: true } } },
      handler: () => status.status(),
    },
    {
      method: 'GET',
      path: '/api/v2/logs/level',
      options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: '*' } } },
      handler: () => ({ level: logLevelOf(root) }),
    },
    {
      method: 'PUT',
      path: '/api/v2/logs/level',
      options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: '*' } }, validate: { payload: logLevelBody } },
      handler: (request) => {
        const { level } = request.payload as { level: LogLevel };
        const admin = adminOf(request).admin.username;
        // written at the old level and at the new one, so the change shows in the log whichever way it goes
        root.warn({ component: 'ops', admin, new_level: level, previous_level: logLevelOf(root) }, 'log level change');
        const previous = setLogLevel(root, level);
        root.warn({ component: 'ops', admin, new_level: level, previous_level: previous }, 'log level changed');
        return { level, previous };
      },
    },
    {
      method: 'GET',
      path: '/api/v2/saas/usage',
      options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: 'view_users' } }, validate: { query: usageQuery } },
      handler: (request) => usage.report(request.query as unknown as UsageQuery, adminOf(request).admin.role),
    },
    {
      method: 'GET',
      path: '/api/v2/user/files/checksum',
      options: { auth: USER_AUTH, validate: { query: checksumQuery } },
      handler: (request) => {
        const q = request.query as { path: string; algo: ChecksumAlgo };
        return withUserSession(sessions, request, `checksum ${q.path}`, (s) => fileChecksum(s, s.path(q.path), q.algo));
      },
    },
  ];
}
