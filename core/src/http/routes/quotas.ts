import type { ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { QuotaService, type QuotaUsage, type TransferQuotaUsage, type UsageMode } from '../../vfs/quota.service.js';
import { QuotaScanService } from '../../vfs/quota-scan.service.js';
import { ADMIN_AUTH, adminOf } from '../auth-strategies.js';
import { objectName, pathParam } from '../../util/common.input.js';
import { quotaUsageInput, transferUsageInput, usageModeQuery } from '../../vfs/quota.input.js';

const usernameParam = Joi.object({ username: objectName.required() });
const nameParam = Joi.object({ name: objectName.required() });
const perm = { ferry: { permission: 'quota_scans' as const } };

const modeOf = (request: { query: unknown }) => (request.query as { mode: UsageMode }).mode;

/** With mode=reset the values are the new usage: they cannot be negative. */
function checkReset(mode: UsageMode, body: Record<string, number | undefined>): void {
  if (mode !== 'reset') return;
  for (const [k, v] of Object.entries(body)) if (v !== undefined && v < 0) throw Boom.badRequest(`"${k}" must be greater than or equal to 0 with mode=reset`);
}

/** /quotas: usage updates and quota scans (quota_scans). */
export function quotaRoutes(c: DependencyContainer): ServerRoute[] {
  const quotas = c.resolve(QuotaService);
  const scans = c.resolve(QuotaScanService);
  return [
    {
      method: 'GET',
      path: '/api/v2/quotas/users/scans',
      options: { auth: ADMIN_AUTH, plugins: perm },
      handler: (request) => scans.listUserScans(adminOf(request).admin.role),
    },
    {
      method: 'POST',
      path: '/api/v2/quotas/users/{username}/scan',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: usernameParam } },
      handler: async (request, h) => {
        await scans.startUserScan(pathParam(request, 'username'), { role: adminOf(request).admin.role });
        return h.response({ message: 'quota scan started' }).code(202);
      },
    },
    {
      method: 'PUT',
      path: '/api/v2/quotas/users/{username}/usage',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: usernameParam, query: usageModeQuery, payload: quotaUsageInput } },
      handler: async (request) => {
        const body = request.payload as QuotaUsage;
        checkReset(modeOf(request), body as Record<string, number>);
        await quotas.updateUserUsage(pathParam(request, 'username'), body, modeOf(request), adminOf(request).admin);
        return { message: 'quota updated' };
      },
    },
    {
      method: 'PUT',
      path: '/api/v2/quotas/users/{username}/transfer-usage',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: usernameParam, query: usageModeQuery, payload: transferUsageInput } },
      handler: async (request) => {
        const body = request.payload as TransferQuotaUsage;
        checkReset(modeOf(request), body as Record<string, number>);
        await quotas.updateUserTransfer(pathParam(request, 'username'), body, modeOf(request), adminOf(request).admin);
        return { message: 'transfer quota updated' };
      },
    },
    {
      method: 'GET',
      path: '/api/v2/quotas/folders/scans',
      options: { auth: ADMIN_AUTH, plugins: perm },
      handler: () => scans.listFolderScans(),
    },
    {
      method: 'POST',
      path: '/api/v2/quotas/folders/{name}/scan',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: nameParam } },
      handler: async (request, h) => {
        await scans.startFolderScan(pathParam(request, 'name'));
        return h.response({ message: 'quota scan started' }).code(202);
      },
    },
    {
      method: 'PUT',
      path: '/api/v2/quotas/folders/{name}/usage',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: nameParam, query: usageModeQuery, payload: quotaUsageInput } },
      handler: async (request) => {
        const body = request.payload as QuotaUsage;
        checkReset(modeOf(request), body as Record<string, number>);
        await quotas.updateFolderUsage(pathParam(request, 'name'), body, modeOf(request));
        return { message: 'quota updated' };
      },
    },
  ];
}
