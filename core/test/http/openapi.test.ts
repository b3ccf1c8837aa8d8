/**
 * The served OpenAPI document: valid OpenAPI 3.1 (@seriousme/openapi-schema-validator),
 * exactly the routes of the live route table, the options schemas of the
 * loaded plugins, every schema compilable, and the declared response schemas
 * accept what the server really answers (validated with ajv, the JSON Schema
 * validator the OpenAPI validator itself uses). Plus the swagger-ui page and
 * its files, served from swagger-ui-dist without network access.
 */
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { addUser, fileApp, multipart, PASSWORD } from '../helpers/user-files.js';
import { openApiPath } from '../../src/http/openapi/document.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

const ta = await fileApp({
  plugins: [
    { name: '@ferry/fs-local' },
    { name: '@ferry/fs-s3' },
    { name: '@ferry/fs-sftp' },
    { name: '@ferry/action-http' },
    { name: '@ferry/actions-builtin' },
    { name: '@ferry/events-search', config: { flush_interval: 20 } },
  ],
  config: { defender: { enabled: true } },
});
t.teardown(() => ta.close());
const admin = await ta.adminToken();

const r = await ta.inject('GET', '/openapi.json');
const doc = JSON.parse(r.payload) as {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { responses: Record<string, { $ref?: string; content?: Record<string, { schema: object }> }>; security?: object[]; 'x-ferry-permission'?: unknown }
    >
  >;
  components: { schemas: Record<string, object>; responses: Record<string, { content: Record<string, { schema: object }> }> };
};

t.test('GET /openapi.json: a valid OpenAPI 3.1 document, no credentials needed', async (t) => {
  t.equal(r.statusCode, 200);
  t.match(r.headers['content-type'], /^application\/json/);
  t.equal(doc.openapi, '3.1.0');
  const result = await new Validator().validate(doc as never);
  t.ok(result.valid, `validates: ${JSON.stringify(result.errors)?.slice(0, 2000)}`);
});

t.test('every route of the route table is in the document, and nothing else', async (t) => {
  const fromTable = new Set<string>();
  for (const route of ta.server.table()) {
    const methods = route.method === '*' ? ['get', 'post', 'put', 'patch', 'delete'] : [route.method];
    for (const m of methods) fromTable.add(`${m} ${openApiPath(route.path)}`);
  }
  const fromDoc = new Set<string>();
  for (const [p, ops] of Object.entries(doc.paths)) for (const m of Object.keys(ops)) fromDoc.add(`${m} ${p}`);
  t.same([...fromDoc].sort(), [...fromTable].sort());
  t.ok(fromTable.size > 80, `${fromTable.size} operations`);
  for (const must of [
    'get /api/v2/status',
    'put /api/v2/logs/level',
    'get /api/v2/user/files/checksum',
    'get /api/v2/saas/usage',
    'get /openapi.json',
    'get /healthz',
    'post /api/v2/users',
  ]) {
    t.ok(fromDoc.has(must), must);
  }
});

t.test('parameters, bodies, security and permissions come from the route options', async (t) => {
  const users = doc.paths['/api/v2/users']!;
  const list = users.get as unknown as { parameters: { name: string; in: string; schema: Record<string, unknown> }[] };
  const limit = list.parameters.find((p) => p.name === 'limit');
  t.match(limit, { in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 } });
  t.same(users.get!.security, [{ BearerAuth: [] }, { APIKeyAuth: [] }, { AdminWebSessionCookie: [] }], 'the admin routes take the web admin session too');
  t.equal(users.get!['x-ferry-permission'], 'view_users');
  const create = users.post as unknown as {
    requestBody: { content: Record<string, { schema: { type: string; required: string[]; properties: Record<string, unknown> } }> };
  };
  const body = create.requestBody.content['application/json']!.schema;
  t.equal(body.type, 'object');
  t.ok(body.required.includes('username'), 'username is required');
  t.ok(body.properties.permissions, 'permissions documented');
  const one = doc.paths['/api/v2/users/{username}']!.get as unknown as {
    parameters: { name: string; in: string; required: boolean }[];
    responses: Record<string, unknown>;
  };
  t.match(
    one.parameters.find((p) => p.in === 'path'),
    { name: 'username', required: true },
  );
  for (const code of ['400', '401', '403', '404', '500']) t.ok(one.responses[code], `error ${code} documented`);
  t.same(doc.paths['/healthz']!.get!.security, [], 'no credentials');
  t.same(doc.paths['/api/v2/token']!.get!.security, [{ BasicAuth: [] }]);
  const checksum = doc.paths['/api/v2/user/files/checksum']!.get as unknown as {
    parameters: { name: string; required: boolean; schema: Record<string, unknown> }[];
  };
  t.match(
    checksum.parameters.find((p) => p.name === 'algo'),
    { required: false, schema: { enum: ['md5', 'sha1', 'sha256', 'sha512'], default: 'sha256' } },
  );
  const upload = doc.paths['/api/v2/user/files/upload']!.post as unknown as { requestBody: { content: Record<string, { schema: unknown }> } };
  t.ok(upload.requestBody.content['application/octet-stream'], 'streamed bodies are binary');
});

t.test("the plugins' options schemas are in the components", async (t) => {
  const names = Object.keys(doc.components.schemas);
  for (const n of ['FsProvider0_', 'FsProvider1_s3config', 'FsProvider5_sftpconfig', 'EventAction1_http_config']) {
    t.ok(
      names.some((x) => x.startsWith(n)),
      `${n}: ${names.join(', ')}`,
    );
  }
  const s3 = doc.components.schemas[names.find((x) => x.startsWith('FsProvider1_'))!] as { properties: Record<string, unknown> };
  t.ok(s3.properties.bucket, 'the S3 options list bucket');
  const http = doc.components.schemas[names.find((x) => x.startsWith('EventAction1_'))!] as { properties: Record<string, unknown> };
  t.ok(http.properties.endpoint, 'the HTTP action options list endpoint');
});

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

t.test('every schema of the document compiles', async (t) => {
  let n = 0;
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      const o = op as unknown as {
        parameters?: { schema: object }[];
        requestBody?: { content: Record<string, { schema: object }> };
        responses: Record<string, { content?: Record<string, { schema: object }> }>;
      };
      const schemas = [
        ...(o.parameters ?? []).map((x) => x.schema),
        ...Object.values(o.requestBody?.content ?? {}).map((c) => c.schema),
        ...Object.values(o.responses).flatMap((x) => Object.values(x.content ?? {}).map((c) => c.schema)),
      ];
      for (const s of schemas) {
        try {
          ajv.compile(s);
          n++;
        } catch (err) {
          t.fail(`${m} ${p}: ${(err as Error).message}`);
        }
      }
    }
  }
  for (const [name, s] of Object.entries(doc.components.schemas)) {
    try {
      ajv.compile(s);
    } catch (err) {
      t.fail(`${name}: ${(err as Error).message}`);
    }
  }
  t.ok(n > 100, `${n} schemas compiled`);
});

/** The schema the document declares for `status` of an operation (a $ref to a component response is followed). */
function declared(p: string, method: string, status: number): { schema: object; type: string } {
  const op = doc.paths[p]?.[method];
  if (!op) throw new Error(`${method} ${p} is not in the document`);
  let res = op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`];
  if (!res) throw new Error(`${method} ${p}: ${status} is not documented`);
  if (res.$ref) res = doc.components.responses[res.$ref.split('/').pop()!] as never;
  const [type, media] = Object.entries(res.content ?? {})[0]!;
  const ref = (media.schema as { $ref?: string }).$ref;
  return { schema: ref ? doc.components.schemas[ref.split('/').pop()!]! : media.schema, type };
}

t.test('the declared schemas accept what the server answers', async (t) => {
  const userHome = await addUser(ta, { username: 'oa' });
  t.ok(userHome);
  const user = await ta.userToken('oa', PASSWORD);
  const up = await ta.inject('POST', '/api/v2/user/files/upload?path=/a.txt', {
    token: user,
    payload: 'hello',
    headers: { 'content-type': 'application/octet-stream' },
  });
  t.equal(up.statusCode, 201);
  const cases: [string, string, Parameters<typeof ta.inject>[2], string?][] = [
    ['GET', '/healthz', {}],
    ['GET', '/api/v2/version', { token: admin }],
    ['GET', '/api/v2/status', { token: admin }],
    ['GET', '/api/v2/logs/level', { token: admin }],
    // the test app's logger is silent: it stays so
    ['PUT', '/api/v2/logs/level', { token: admin, payload: { level: 'silent' } }],
    ['GET', '/api/v2/user/files/checksum?path=/a.txt&algo=md5', { token: user }, '/api/v2/user/files/checksum'],
    ['GET', '/api/v2/saas/usage', { token: admin }],
    ['GET', '/openapi.json', {}],
    // error answers of routes of every kind
    ['GET', '/api/v2/users', {}],
    ['GET', '/api/v2/users/nobody', { token: admin }, '/api/v2/users/{username}'],
    ['POST', '/api/v2/users', { token: admin, payload: { username: 'x/y' } }],
    ['GET', '/api/v2/user/files/checksum?path=/missing', { token: user }, '/api/v2/user/files/checksum'],
    ['GET', '/api/v2/saas/usage?from=bad', { token: admin }, '/api/v2/saas/usage'],
    ['PUT', '/api/v2/logs/level', { token: user, payload: { level: 'info' } }],
    ['GET', '/api/v2/status', { token: user }],
    ['GET', '/openapi/ui/nothing.js', {}, '/openapi/ui/{file}'],
  ];
  for (const [method, url, o, template] of cases) {
    const res = await ta.inject(method, url, o);
    const p = template ?? url;
    const { schema, type } = declared(p, method.toLowerCase(), res.statusCode);
    t.match(res.headers['content-type'], new RegExp(`^${type.replace('/', '\\/')}`), `${method} ${url}: content type`);
    const body = type.startsWith('application/json') ? JSON.parse(res.payload) : res.payload;
    const validate = ajv.compile(schema);
    t.ok(validate(body), `${method} ${url} (${res.statusCode}) matches the declared schema: ${JSON.stringify(validate.errors)}`);
  }
});

t.test('GET /openapi: swagger-ui from swagger-ui-dist, no network access', async (t) => {
  const page = await ta.inject('GET', '/openapi');
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  const srcs = [...page.payload.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  t.ok(srcs.length >= 4);
  for (const s of srcs) t.match(s, /^\/openapi\/ui\//, `${s}: served by Ferry, nothing from the network`);
  const dir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  for (const s of srcs) {
    const res = await ta.inject('GET', s);
    t.equal(res.statusCode, 200, s);
    const file = path.basename(s);
    if (file === 'initializer.js') t.match(res.payload, /url: '\/openapi\.json'/);
    else
      t.equal(
        crypto.createHash('sha256').update(res.rawPayload).digest('hex'),
        crypto
          .createHash('sha256')
          .update(readFileSync(path.join(dir, file)))
          .digest('hex'),
        `${file} is the package's file`,
      );
  }
  const js = await ta.inject('GET', '/openapi/ui/swagger-ui-bundle.js');
  t.match(js.headers['content-type'], /^text\/javascript/);
  const bad = await ta.inject('GET', '/openapi/ui/..%2Fpackage.json');
  t.equal(bad.statusCode, 400, 'only the listed files');
  t.match(JSON.parse(bad.payload), { message: /"file" must be one of/, error: 'Bad Request' });
});

t.test('every operation declares its success answers (no "any JSON" answer left)', async (t) => {
  const undeclared: string[] = [];
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      const codes = Object.keys(op.responses).filter((c) => /^[23]/.test(c));
      if (!codes.length || codes.includes('2XX')) undeclared.push(`${m} ${p}`);
    }
  }
  t.same(undeclared, []);
});

t.test('real answers of every resource match the schema the document declares for their route and status', async (t) => {
  const home = await addUser(ta, { username: 'oa2' });
  t.ok(home);
  const user = await ta.userToken('oa2', PASSWORD);
  const seen = new Map<string, number>();
  /** Sends the request, validates the answer against the document; returns it. */
  const check = async (method: string, url: string, o: Parameters<typeof ta.inject>[2], template: string, want: number) => {
    const res = await ta.inject(method, url, o);
    t.equal(res.statusCode, want, `${method} ${url}: ${res.payload.slice(0, 300)}`);
    const { schema, type } = declared(template, method.toLowerCase(), res.statusCode);
    // */*: a file, with its own type
    if (type !== '*/*') t.match(res.headers['content-type'], new RegExp(`^${type.replace('/', '\\/')}`), `${method} ${url}: content type`);
    const body = type.startsWith('application/json') ? JSON.parse(res.payload) : res.payload;
    const validate = ajv.compile(schema);
    t.ok(validate(body), `${method} ${url} (${res.statusCode}) matches the declared schema: ${JSON.stringify(validate.errors)}`);
    if (Array.isArray(body)) seen.set(`${method} ${template}`, body.length);
    return res;
  };
  const A = { token: admin };
  const U = { token: user };
  // tokens and the admin's own account
  await check('GET', '/api/v2/token', { basic: { username: 'admin', password: 'admin-password-1' } }, '/api/v2/token', 200);
  await check('GET', '/api/v2/user/token', { basic: { username: 'oa2', password: PASSWORD } }, '/api/v2/user/token', 200);
  await check('GET', '/readyz', {}, '/readyz', 200);
  await check('GET', '/api/v2/admin/profile', A, '/api/v2/admin/profile', 200);
  // each resource: create, list, get
  const resources: [string, string, string, Record<string, unknown>][] = [
    ['/api/v2/roles', 'oa-role', '{name}', { name: 'oa-role', description: 'a role' }],
    ['/api/v2/admins', 'oa-admin', '{username}', { username: 'oa-admin', password: 'oa-admin-pw1', permissions: ['*'], filters: { allow_api_key_auth: true } }],
    ['/api/v2/folders', 'oa-folder', '{name}', { name: 'oa-folder', mapped_path: path.join(ta.root, 'oa-folder') }],
    ['/api/v2/groups', 'oa-group', '{name}', { name: 'oa-group', virtual_folders: [{ name: 'oa-folder', virtual_path: '/shared' }] }],
    ['/api/v2/eventactions', 'oa-action', '{name}', { name: 'oa-action', type: 4 }],
    ['/api/v2/eventrules', 'oa-rule', '{name}', { name: 'oa-rule', trigger: 6, actions: [{ name: 'oa-action', order: 1 }] }],
    [
      '/api/v2/users',
      'oa-user',
      '{username}',
      {
        username: 'oa-user',
        password: 'oa-user-pw1',
        status: 1,
        home_dir: path.join(ta.root, 'oa-user'),
        permissions: { '/': ['*'] },
        groups: [{ name: 'oa-group', type: 2 }],
        role: 'oa-role',
      },
    ],
  ];
  for (const [base, name, item, payload] of resources) {
    await check('POST', base, { ...A, payload }, base, 201);
    await check('GET', base, A, base, 200);
    await check('GET', `${base}/${name}`, A, `${base}/${item}`, 200);
  }
  await check('PUT', '/api/v2/roles/oa-role', { ...A, payload: { name: 'oa-role', description: 'changed' } }, '/api/v2/roles/{name}', 200);
  const key = await check('POST', '/api/v2/apikeys', { ...A, payload: { name: 'oa-key', scope: 1, admin: 'oa-admin' } }, '/api/v2/apikeys', 201);
  const keyId = String(key.headers['x-object-id']);
  await check('GET', '/api/v2/apikeys', A, '/api/v2/apikeys', 200);
  await check('GET', `/api/v2/apikeys/${keyId}`, A, '/api/v2/apikeys/{id}', 200);
  await check(
    'POST',
    '/api/v2/iplists/2',
    { ...A, payload: { ipornet: '203.0.113.0/24', description: 'a denied net', mode: 1 } },
    '/api/v2/iplists/{type}',
    201,
  );
  await check('GET', '/api/v2/iplists/2', A, '/api/v2/iplists/{type}', 200);
  await check('GET', '/api/v2/iplists/2/203.0.113.0%2F24', A, '/api/v2/iplists/{type}/{ipornet}', 200);
  for (const p of ['/api/v2/connections', '/api/v2/quotas/users/scans', '/api/v2/quotas/folders/scans', '/api/v2/retention/users/checks'])
    await check('GET', p, A, p, 200);
  await check('POST', '/api/v2/quotas/users/oa2/scan', A, '/api/v2/quotas/users/{username}/scan', 202);
  await check('GET', '/api/v2/defender/hosts', A, '/api/v2/defender/hosts', 200);
  await check('GET', '/api/v2/dumpdata?output-data=1', A, '/api/v2/dumpdata', 200);
  await check('POST', '/api/v2/eventrules/run/oa-rule', A, '/api/v2/eventrules/run/{name}', 202);

  // the user's side: profile, files, directories, shares, public share routes
  await check('GET', '/api/v2/user/profile', U, '/api/v2/user/profile', 200);
  await check('POST', '/api/v2/user/dirs?path=%2Fdocs', U, '/api/v2/user/dirs', 201);
  const mp = multipart([{ name: 'b.txt', data: 'B' }]);
  await check('POST', '/api/v2/user/files?path=%2Fdocs', { ...U, payload: mp.payload, headers: mp.headers }, '/api/v2/user/files', 201);
  await check('GET', '/api/v2/user/dirs?path=%2Fdocs', U, '/api/v2/user/dirs', 200);
  await check('GET', '/api/v2/user/files?path=%2Fdocs%2Fb.txt', U, '/api/v2/user/files', 200);
  await check('POST', '/api/v2/user/file-actions/copy?path=%2Fdocs%2Fb.txt&target=%2Fdocs%2Fc.txt', U, '/api/v2/user/file-actions/copy', 200);
  const share = await check(
    'POST',
    '/api/v2/user/shares',
    { ...U, payload: { name: 'docs', scope: 1, paths: ['/docs'], password: 'share-pw' } },
    '/api/v2/user/shares',
    201,
  );
  const id = String(share.headers['x-object-id']);
  await check('GET', '/api/v2/user/shares', U, '/api/v2/user/shares', 200);
  await check('GET', `/api/v2/user/shares/${id}`, U, '/api/v2/user/shares/{id}', 200);
  const pw = { basic: { username: 'x', password: 'share-pw' } };
  await check('GET', `/api/v2/shares/${id}/dirs`, pw, '/api/v2/shares/{id}/dirs', 200);
  await check('POST', `/api/v2/shares/${id}/token`, pw, '/api/v2/shares/{id}/token', 200);
  await check('GET', `/api/v2/shares/${id}/files?path=b.txt`, pw, '/api/v2/shares/{id}/files', 200);

  // the events of all this, once written
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const r = JSON.parse((await ta.inject('GET', '/api/v2/events/fs', A)).payload) as unknown[];
    if (r.length) break;
    await new Promise((res) => setTimeout(res, 20));
  }
  for (const k of ['fs', 'provider', 'logs']) await check('GET', `/api/v2/events/${k}`, A, `/api/v2/events/${k}`, 200);

  // the lists were not empty: their items were checked too
  for (const [op, n] of seen) {
    if (/scans|checks|connections|defender/.test(op)) continue;
    t.ok(n > 0, `${op}: ${n} items checked`);
  }
});
