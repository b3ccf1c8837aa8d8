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

const logLevelBody = Joi.object({
  level: Joi.string()
    .valid(...LOG_LEVELS)
    .required(),
});
const level = Joi.string()
  .valid(...LOG_LEVELS)
  .required();

/** Answers of these routes, declared for the OpenAPI document (http/openapi/). */
const enabled = (extra: Record<string, Joi.Schema> = {}) => Joi.object({ is_active: Joi.boolean().required(), ...extra });
/** A service plugin's section: its bindings (null while it listens nowhere) and why it is inactive. */
const serviceSection = (extra: Record<string, Joi.Schema> = {}) =>
  enabled({
    bindings: Joi.array()
      .items(Joi.object({ address: Joi.string().allow('').required(), port: Joi.number().integer().required() }).unknown(true))
      .allow(null)
      .required(),
    error: Joi.string().description('why the service is not active'),
    ...extra,
  }).unknown(true);
const statusAnswer = Joi.object({
  ssh: serviceSection({ host_keys: Joi.array().allow(null).required() }).required(),
  ftp: serviceSection().required(),
  webdav: serviceSection().required(),
  data_provider: enabled({
    driver: Joi.string().valid('sqlite', 'postgresql').required(),
    error: Joi.string().description('why the database did not answer'),
  }).required(),
  defender: enabled().required(),
  mfa: enabled({
    totp_configs: Joi.array()
      .items(Joi.object({ name: Joi.string().required(), issuer: Joi.string().required(), algo: Joi.string().valid('sha1', 'sha256', 'sha512').required() }))
      .required(),
  }).required(),
  allow_list: enabled().required(),
  rate_limiters: enabled({ protocols: Joi.array().items(Joi.string()).required() }).required(),
}).pattern(Joi.string(), serviceSection().description("a service plugin's own section (its statusKey)"));
const dayCounters = {
  upload_bytes: Joi.number().integer().min(0).required(),
  download_bytes: Joi.number().integer().min(0).required(),
  uploads: Joi.number().integer().min(0).required(),
  downloads: Joi.number().integer().min(0).required(),
};
const usageAnswer = Joi.object({
  from: Joi.string().required(),
  to: Joi.string().required(),
  users: Joi.array()
    .items(
      Joi.object({
        username: Joi.string().required(),
        storage: Joi.object({
          used_size: Joi.number().integer().required(),
          used_files: Joi.number().integer().required(),
          quota_size: Joi.number().integer().required(),
          quota_files: Joi.number().integer().required(),
          last_quota_update: Joi.number().integer().required(),
        }).required(),
        bandwidth: Joi.object({
          ...dayCounters,
          total_bytes: Joi.number().integer().min(0).required(),
          days: Joi.array()
            .items(Joi.object({ day: Joi.string().required(), ...dayCounters }))
            .required(),
        }).required(),
        transfer_quota: Joi.object({
          used_upload: Joi.number().integer().required(),
          used_download: Joi.number().integer().required(),
          upload_limit: Joi.number().integer().required(),
          download_limit: Joi.number().integer().required(),
          total_limit: Joi.number().integer().required(),
        }).required(),
      }),
    )
    .required(),
});
const checksumAnswer = Joi.object({
  path: Joi.string().required(),
  size: Joi.number().integer().min(0).required(),
  algo: Joi.string()
    .valid(...CHECKSUM_ALGOS)
    .required(),
  checksum: Joi.string().hex().required(),
});

const checksumQuery = Joi.object({
  path: pathQuery.required(),
  algo: Joi.string()
    .valid(...CHECKSUM_ALGOS)
    .default('sha256'),
});

const day = Joi.string()
  .pattern(/^\d{4}-\d{2}-\d{2}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be a date as YYYY-MM-DD' });
const usageQuery = Joi.object({
  from: day,
  to: day,
  usernames: Joi.string().custom((v: string, h) => {
    const names = v
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean);
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
      options: {
        auth: ADMIN_AUTH,
        description: 'State of the services of this node (ServicesStatus)',
        plugins: { ferry: { permission: 'view_status', whileDatabaseDown: true, responses: { 200: { description: 'ServicesStatus', schema: statusAnswer } } } },
      },
      handler: () => status.status(),
    },
    {
      method: 'GET',
      path: '/api/v2/logs/level',
      options: {
        auth: ADMIN_AUTH,
        description: 'The log level of this node',
        plugins: { ferry: { permission: '*', responses: { 200: { description: 'the current level', schema: Joi.object({ level }) } } } },
      },
      handler: () => ({ level: logLevelOf(root) }),
    },
    {
      method: 'PUT',
      path: '/api/v2/logs/level',
      options: {
        auth: ADMIN_AUTH,
        description: 'Changes the log level of this node until it restarts',
        plugins: {
          ferry: { permission: '*', responses: { 200: { description: 'the new and the previous level', schema: Joi.object({ level, previous: level }) } } },
        },
        validate: { payload: logLevelBody },
      },
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
      options: {
        auth: ADMIN_AUTH,
        description: 'Storage and bandwidth used per user over a period',
        plugins: { ferry: { permission: 'view_users', responses: { 200: { description: 'the usage report', schema: usageAnswer } } } },
        validate: { query: usageQuery },
      },
      handler: (request) => usage.report(request.query as unknown as UsageQuery, adminOf(request).admin.role),
    },
    {
      method: 'GET',
      path: '/api/v2/user/files/checksum',
      options: {
        auth: USER_AUTH,
        description: 'Checksum of a file of the user',
        plugins: { ferry: { responses: { 200: { description: 'the checksum', schema: checksumAnswer } }, errors: [404] } },
        validate: { query: checksumQuery },
      },
      handler: (request) => {
        const q = request.query as { path: string; algo: ChecksumAlgo };
        return withUserSession(sessions, request, `checksum ${q.path}`, (s) => fileChecksum(s, s.path(q.path), q.algo));
      },
    },
  ];
}
