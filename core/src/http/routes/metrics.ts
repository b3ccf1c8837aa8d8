import crypto from 'node:crypto';
import type { Request, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import type { HttpBinding } from '../../config/schema.js';
import { MetricsService } from '../../ops/metrics.service.js';

function digest(s: string): Buffer {
  return crypto.createHash('sha256').update(s).digest();
}

/** Basic credentials of the request equal to the binding's metrics_username / metrics_password (compared in constant time). */
function authorized(request: Request, b: HttpBinding): boolean {
  const header = request.headers.authorization;
  const m = typeof header === 'string' ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!m) return false;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return false;
  const userOk = crypto.timingSafeEqual(digest(decoded.slice(0, i)), digest(b.metrics_username));
  const passOk = crypto.timingSafeEqual(digest(decoded.slice(i + 1)), digest(b.metrics_password));
  return userOk && passOk;
}

/**
 * GET /metrics: Prometheus text format, on bindings with enable_metrics
 * (404 elsewhere); HTTP basic auth when the binding sets metrics_username
 * and metrics_password (docs/operations.md).
 */
export function metricsRoutes(c: DependencyContainer): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/metrics',
      options: {
        auth: false,
        description: 'Prometheus metrics of this node (bindings with enable_metrics)',
        plugins: {
          ferry: { responses: { 200: { description: 'Prometheus text exposition format', type: 'text/plain', schema: Joi.string() } }, errors: [401, 404] },
        },
      },
      handler: async (request, h) => {
        const b = (request.server.settings.app as { binding?: HttpBinding } | undefined)?.binding;
        if (!b?.enable_metrics) throw Boom.notFound('metrics are not enabled on this binding (httpd.bindings[].enable_metrics)');
        if ((b.metrics_username || b.metrics_password) && !authorized(request, b)) {
          throw Boom.unauthorized('metrics need the credentials of httpd.bindings[].metrics_username / metrics_password', 'Basic');
        }
        const { body, contentType } = await c.resolve(MetricsService).text();
        return h.response(body).type(contentType);
      },
    },
  ];
}
