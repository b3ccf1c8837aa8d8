import type { Request, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import type { DependencyContainer } from 'tsyringe';
import { BackupService, type ScanQuotaMode } from '../../backup/backup.service.js';
import type { RestoreMode } from '../../backup/registry.js';
import { ADMIN_AUTH, adminOf } from '../auth-strategies.js';
import { isSuperAdmin } from '../../accounts/permissions.js';
import { actorOf } from '../server.js';
import { dumpQuery, loadBodyQuery, loadFileQuery } from '../../backup/backup.input.js';

/** A backup spans every role: only admins with `*` and no role dump or restore. */
function superOnly(request: Request): void {
  if (!isSuperAdmin(adminOf(request).admin)) throw Boom.forbidden('only admins with the "*" permission and no role can dump or load data');
}

/** /dumpdata and /loaddata (permission `*`). */
export function backupRoutes(c: DependencyContainer): ServerRoute[] {
  const backups = c.resolve(BackupService);
  const load = async (request: Request, data: unknown) => {
    const q = request.query as { mode: RestoreMode; 'scan-quota': ScanQuotaMode };
    await backups.restore(data, q.mode, q['scan-quota'], actorOf(request));
    return { message: 'data restored' };
  };
  return [
    {
      method: 'GET',
      path: '/api/v2/dumpdata',
      options: { auth: ADMIN_AUTH, validate: { query: dumpQuery } },
      handler: async (request, h) => {
        superOnly(request);
        const q = request.query as { 'output-file'?: string; 'output-data': number; indent: number; scopes?: string[] };
        if (!q['output-file'] && q['output-data'] !== 1) throw Boom.badRequest('"output-file" is required unless output-data=1');
        if (q['output-file']) backups.resolveFile(q['output-file'], 'output-file');
        const data = await backups.dump(q.scopes);
        const saved = q['output-file'] ? await backups.dumpToFile(q['output-file'], data, q.indent === 1) : undefined;
        if (q['output-data'] === 1) return h.response(JSON.stringify(data, null, q.indent === 1 ? 2 : undefined)).type('application/json');
        return { message: `data saved to ${saved}` };
      },
    },
    {
      method: 'GET',
      path: '/api/v2/loaddata',
      options: { auth: ADMIN_AUTH, validate: { query: loadFileQuery } },
      handler: async (request) => {
        superOnly(request);
        return load(request, await backups.readFile((request.query as { 'input-file': string })['input-file']));
      },
    },
    {
      method: 'POST',
      path: '/api/v2/loaddata',
      options: { auth: ADMIN_AUTH, validate: { query: loadBodyQuery } },
      handler: async (request) => {
        superOnly(request);
        return load(request, request.payload);
      },
    },
  ];
}
