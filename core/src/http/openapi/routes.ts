import { createReadStream } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type Hapi from '@hapi/hapi';
import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { TOKENS } from '../../tokens.js';
import type { PluginRegistry } from '../../plugins/registry.js';
import { buildInfo } from '../../build-info.js';
import { openApiDocument } from './document.js';

/** Files of swagger-ui-dist the browsable document needs, with their types (nothing else of the package is served). */
const UI_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

function uiDirectory(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('swagger-ui-dist/package.json'));
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Ferry REST API</title>
<link rel="stylesheet" href="/openapi/ui/swagger-ui.css">
<link rel="stylesheet" href="/openapi/ui/index.css">
<link rel="icon" type="image/png" href="/openapi/ui/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/openapi/ui/swagger-ui-bundle.js"></script>
<script src="/openapi/ui/swagger-ui-standalone-preset.js"></script>
<script src="/openapi/ui/initializer.js"></script>
</body>
</html>
`;

const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

/**
 * GET /openapi.json: the OpenAPI 3.1 document generated from this server's
 * route table (built at the first request, when every route is registered);
 * GET /openapi: swagger-ui on it, served from the swagger-ui-dist package's
 * files (no network access). No credentials: the document describes the API,
 * it holds no data.
 */
export function openApiRoutes(c: DependencyContainer): ServerRoute[] {
  const registry = c.resolve<PluginRegistry>(TOKENS.Plugins);
  const documents = new WeakMap<Hapi.Server, Record<string, unknown>>();
  const dir = uiDirectory();
  return [
    {
      method: 'GET',
      path: '/openapi.json',
      options: {
        auth: false,
        description: 'The OpenAPI 3.1 document of this server',
        plugins: {
          ferry: {
            responses: {
              200: {
                description: 'the OpenAPI document',
                schema: Joi.object({ openapi: Joi.string().required(), paths: Joi.object().required() }).unknown(true),
              },
            },
          },
        },
      },
      handler: (request, h) => {
        let doc = documents.get(request.server);
        if (!doc) {
          doc = openApiDocument(request.server, { version: buildInfo().version, registry });
          documents.set(request.server, doc);
        }
        return h.response(doc).type('application/json');
      },
    },
    {
      method: 'GET',
      path: '/openapi',
      options: {
        auth: false,
        description: 'swagger-ui on /openapi.json',
        plugins: { ferry: { responses: { 200: { description: 'an HTML page', type: 'text/html', schema: Joi.string() } } } },
      },
      handler: (_request, h) => h.response(PAGE).type('text/html; charset=utf-8'),
    },
    {
      method: 'GET',
      path: '/openapi/ui/{file}',
      options: {
        auth: false,
        description: 'The files of swagger-ui',
        validate: {
          params: Joi.object({
            file: Joi.string()
              .valid('initializer.js', ...Object.keys(UI_FILES))
              .required(),
          }),
        },
        plugins: { ferry: { responses: { 200: { description: 'a static file of swagger-ui', type: 'application/octet-stream', schema: Joi.binary() } } } },
      },
      handler: (request, h) => {
        const file = (request.params as { file: string }).file;
        if (file === 'initializer.js') return h.response(INITIALIZER).type('text/javascript; charset=utf-8');
        return h
          .response(createReadStream(path.join(dir, file)))
          .type(UI_FILES[file]!)
          .header('Cache-Control', 'public, max-age=86400');
      },
    },
  ];
}
