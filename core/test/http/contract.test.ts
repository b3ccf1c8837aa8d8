import t, { type Test } from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import YAML from 'yaml';
import { addUser, fileApp, multipart, PASSWORD } from '../helpers/user-files.js';

// The API contract, checked on real answers: a full admin and user scenario
// runs against the server and every JSON answer is validated against the
// response schema core/test/fixtures/spec/reference.yaml (the v2.7 API's
// facts-only description) gives for its route, method and status. A field of
// the wrong type, a missing required field or a wrong enum value fails here.

const here = path.dirname(fileURLToPath(import.meta.url));
type Obj = Record<string, any>;
const spec = YAML.parse(readFileSync(path.join(here, '../fixtures/spec/reference.yaml'), 'utf8')) as Obj;

// every local $ref resolves inside the document registered as "spec"; oneOf is read as anyOf: the
// reference's alternatives overlap (dumpdata answers ApiResponse or BackupData, and a BackupData
// is also a valid ApiResponse, which has no required member), so "exactly one" can never hold
const rebased = JSON.parse(JSON.stringify(spec).replaceAll('"#/components/', '"spec#/components/').replaceAll('"oneOf":', '"anyOf":')) as Obj;
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: 'spec', components: rebased.components }, 'spec');

interface Operation {
  template: string;
  re: RegExp;
  method: string;
  responses: Obj;
}
const operations: Operation[] = [];
for (const [template, item] of Object.entries(rebased.paths as Obj)) {
  const re = new RegExp('^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+') + '$');
  for (const [method, op] of Object.entries(item as Obj)) {
    if (['get', 'post', 'put', 'patch', 'delete', 'head'].includes(method)) operations.push({ template, re, method, responses: (op as Obj).responses ?? {} });
  }
}
// the most specific template first (/users/{username}/2fa/disable before /users/{username})
operations.sort((a, b) => b.template.split('/').length - a.template.split('/').length || a.template.localeCompare(b.template));

function deref(o: Obj | undefined): Obj | undefined {
  let cur = o;
  for (let i = 0; cur && typeof cur.$ref === 'string' && i < 10; i++) {
    const parts = (cur.$ref as string).replace(/^spec#\//, '').split('/');
    cur = parts.reduce<Obj | undefined>((v, k) => v?.[k], rebased);
  }
  return cur;
}

const compiled = new Map<string, ValidateFunction>();
/** The validator of a route's JSON answer for a status, or a reason there is none. */
function validatorFor(method: string, apiPath: string, status: number): ValidateFunction | string {
  const op = operations.find((o) => o.method === method && o.re.test(apiPath));
  if (!op) return `no operation in the reference for ${method.toUpperCase()} ${apiPath}`;
  const resp = deref(op.responses[String(status)] ?? op.responses.default);
  // the reference names the shape of its shared error answers (`status_shape: ApiResponse`)
  const schema = (resp?.content?.['application/json']?.schema ??
    (resp?.status_shape ? { $ref: `spec#/components/schemas/${resp.status_shape}` } : undefined)) as Obj | undefined;
  if (!schema) return `no JSON schema for ${status}`;
  const key = `${op.method} ${op.template} ${status}`;
  let v = compiled.get(key);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(key, v);
  }
  return v;
}

const ta = await fileApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/actions-builtin' }], config: { defender: { enabled: true } } });
t.teardown(() => ta.close());
const admin = await ta.adminToken();
const checked: string[] = [];
const skipped = new Set<string>();

/** Sends a request and validates the JSON answer against the reference (the answer is returned for chaining). */
async function call(t: Test, method: string, url: string, o: { token?: string; payload?: unknown; headers?: Record<string, string>; expect?: number } = {}) {
  const r = await ta.inject(method, url, { token: o.token ?? admin, payload: o.payload as object, headers: o.headers });
  if (o.expect !== undefined) t.equal(r.statusCode, o.expect, `${method} ${url}: ${r.payload.slice(0, 300)}`);
  const type = String(r.headers['content-type'] ?? '');
  if (!type.startsWith('application/json')) return r;
  const apiPath = url.split('?')[0]!.replace(/^\/api\/v2/, '');
  const v = validatorFor(method.toLowerCase(), apiPath, r.statusCode);
  if (typeof v === 'string') {
    skipped.add(`${method} ${apiPath} ${r.statusCode}: ${v}`);
    return r;
  }
  const body = JSON.parse(r.payload);
  const ok = v(body);
  t.ok(
    ok,
    `${method} ${apiPath} ${r.statusCode} matches the reference`,
    ok ? {} : { diagnostic: true, errors: v.errors?.slice(0, 5), body: r.payload.slice(0, 500) },
  );
  checked.push(`${method} ${apiPath} ${r.statusCode}`);
  return r;
}
const json = (r: { payload: string }) => JSON.parse(r.payload) as Obj;

t.test('admin scenario', async (t) => {
  await call(t, 'GET', '/api/v2/version', { expect: 200 });
  await call(t, 'GET', '/api/v2/admin/profile', { expect: 200 });
  await call(t, 'PUT', '/api/v2/admin/profile', { payload: { email: 'root@example.com', description: 'the first admin' }, expect: 200 });
  await call(t, 'POST', '/api/v2/roles', { payload: { name: 'ops', description: 'operators' }, expect: 201 });
  await call(t, 'GET', '/api/v2/roles', { expect: 200 });
  await call(t, 'GET', '/api/v2/roles/ops', { expect: 200 });
  await call(t, 'PUT', '/api/v2/roles/ops', { payload: { name: 'ops', description: 'operations' }, expect: 200 });
  await call(t, 'POST', '/api/v2/folders', { payload: { name: 'shared', mapped_path: path.join(ta.root, 'shared'), description: 'team files' }, expect: 201 });
  await call(t, 'GET', '/api/v2/folders', { expect: 200 });
  await call(t, 'GET', '/api/v2/folders/shared', { expect: 200 });
  await call(t, 'POST', '/api/v2/groups', {
    payload: {
      name: 'staff',
      description: 'all staff',
      user_settings: { max_sessions: 5, permissions: { '/': ['*'] } },
      virtual_folders: [{ name: 'shared', virtual_path: '/shared' }],
    },
    expect: 201,
  });
  await call(t, 'GET', '/api/v2/groups', { expect: 200 });
  await call(t, 'GET', '/api/v2/groups/staff', { expect: 200 });
  await call(t, 'POST', '/api/v2/users', {
    payload: {
      username: 'carol',
      password: 'carol-password-1',
      home_dir: path.join(ta.root, 'carol'),
      permissions: { '/': ['*'] },
      email: 'carol@example.com',
      groups: [{ name: 'staff', type: 2 }],
      role: 'ops',
    },
    expect: 201,
  });
  await call(t, 'GET', '/api/v2/users', { expect: 200 });
  const carol = json(await call(t, 'GET', '/api/v2/users/carol', { expect: 200 }));
  await call(t, 'PUT', '/api/v2/users/carol', { payload: { ...carol, description: 'from the contract test' }, expect: 200 });
  await call(t, 'POST', '/api/v2/admins', {
    payload: { username: 'second', password: 'second-password-1', permissions: ['view_users', 'add_users'], status: 1 },
    expect: 201,
  });
  await call(t, 'GET', '/api/v2/admins', { expect: 200 });
  await call(t, 'GET', '/api/v2/admins/second', { expect: 200 });
  const key = await call(t, 'POST', '/api/v2/apikeys', { payload: { name: 'ci', scope: 1, description: 'CI key' }, expect: 201 });
  const keyId = String(key.headers['x-object-id'] ?? json(key).id ?? '');
  await call(t, 'GET', '/api/v2/apikeys', { expect: 200 });
  if (keyId) await call(t, 'GET', `/api/v2/apikeys/${keyId}`, { expect: 200 });
  await call(t, 'POST', '/api/v2/eventactions', { payload: { name: 'backup-now', type: 4, description: 'a backup' }, expect: 201 });
  await call(t, 'GET', '/api/v2/eventactions', { expect: 200 });
  await call(t, 'GET', '/api/v2/eventactions/backup-now', { expect: 200 });
  await call(t, 'POST', '/api/v2/eventrules', { payload: { name: 'nightly', trigger: 6, actions: [{ name: 'backup-now', order: 1 }] }, expect: 201 });
  await call(t, 'GET', '/api/v2/eventrules', { expect: 200 });
  await call(t, 'GET', '/api/v2/eventrules/nightly', { expect: 200 });
  await call(t, 'POST', '/api/v2/iplists/2', { payload: { ipornet: '203.0.113.0/24', description: 'a denied net', mode: 1 }, expect: 201 });
  await call(t, 'GET', '/api/v2/iplists/2', { expect: 200 });
  await call(t, 'GET', '/api/v2/iplists/2/203.0.113.0%2F24', { expect: 200 });
  await call(t, 'GET', '/api/v2/defender/hosts', { expect: 200 });
  await call(t, 'GET', '/api/v2/connections', { expect: 200 });
  await call(t, 'GET', '/api/v2/quotas/users/scans', { expect: 200 });
  await call(t, 'GET', '/api/v2/quotas/folders/scans', { expect: 200 });
  await call(t, 'GET', '/api/v2/retention/users/checks', { expect: 200 });
  await call(t, 'GET', '/api/v2/dumpdata?output-data=1', { expect: 200 });
  // error answers follow the reference too
  await call(t, 'GET', '/api/v2/users/nobody-here', { expect: 404 });
  await call(t, 'POST', '/api/v2/users', { payload: { username: 'x' }, expect: 400 });
  await call(t, 'GET', '/api/v2/users', { token: 'not-a-token', expect: 401 });
});

t.test('user scenario', async (t) => {
  const home = await addUser(ta, { username: 'dave' });
  mkdirSync(path.join(home, 'docs'), { recursive: true });
  writeFileSync(path.join(home, 'docs', 'a.txt'), 'A');
  const user = await ta.userToken('dave', PASSWORD);
  await call(t, 'GET', '/api/v2/user/profile', { token: user, expect: 200 });
  await call(t, 'PUT', '/api/v2/user/profile', { token: user, payload: { email: 'dave@example.com' }, expect: 200 });
  await call(t, 'GET', '/api/v2/user/dirs?path=%2F', { token: user, expect: 200 });
  await call(t, 'POST', '/api/v2/user/dirs?path=%2Fnew', { token: user, expect: 201 });
  const mp = multipart([{ name: 'b.txt', data: 'B' }]);
  await call(t, 'POST', '/api/v2/user/files?path=%2Fnew', { token: user, payload: mp.payload, headers: mp.headers, expect: 201 });
  await call(t, 'POST', '/api/v2/user/file-actions/copy?path=%2Fnew%2Fb.txt&target=%2Fnew%2Fc.txt', { token: user, expect: 200 });
  await call(t, 'POST', '/api/v2/user/file-actions/move?path=%2Fnew%2Fc.txt&target=%2Fnew%2Fd.txt', { token: user, expect: 200 });
  await call(t, 'PATCH', '/api/v2/user/files/metadata?path=%2Fnew%2Fd.txt', { token: user, payload: { modification_time: 1_700_000_000_000 }, expect: 200 });
  await call(t, 'DELETE', '/api/v2/user/files?path=%2Fnew%2Fd.txt', { token: user, expect: 200 });
  const share = await call(t, 'POST', '/api/v2/user/shares', {
    token: user,
    payload: { name: 'docs', description: 'shared docs', scope: 1, paths: ['/docs'] },
    expect: 201,
  });
  const id = String(share.headers['x-object-id']);
  await call(t, 'GET', '/api/v2/user/shares', { token: user, expect: 200 });
  await call(t, 'GET', `/api/v2/user/shares/${id}`, { token: user, expect: 200 });
  await call(t, 'GET', `/api/v2/shares/${id}/dirs?path=%2F`, { token: '', expect: 200 });
  await call(t, 'GET', '/api/v2/user/files?path=%2Fmissing.txt', { token: user, expect: 404 });
});

t.test('what was checked', async (t) => {
  t.ok(checked.length >= 55, `${checked.length} answers validated against the reference`);
  if (skipped.size) t.comment(`answers without a reference schema (not validated):\n  ${[...skipped].sort().join('\n  ')}`);
});
