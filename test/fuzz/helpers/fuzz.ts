/**
 * The request generators and the runner. Requests are generated up front
 * from the seed (request n is the same whatever ran before it), then sent
 * through hapi's inject a few at a time. Every generated request is invalid
 * by construction: a refused credential, a value its route's schema refuses,
 * a body that is not JSON, too big or of an unsupported type, an object or
 * file that does not exist. So every answer must be a 4xx with an ApiResponse
 * body, and nothing stored may change.
 */
import type Hapi from '@hapi/hapi';
import type { Rng } from './prng.js';
import { badBasic, badCredentials } from './auth.js';
import { closedObject, describeOf, descAt, invalidFor, keyPaths, requiredKeys, type Desc } from './schema.js';
import { brokenJson, deepJson, hostileJson, hostilePath, hostileString, jsonString } from './values.js';
import { SHARE_PASSWORD, type World } from './world.js';

export interface FuzzRequest {
  n: number;
  kind: string;
  route: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** The one status expected instead of "any 4xx" (routes that answer every request alike). */
  status?: number;
}

export interface RouteInfo {
  method: string;
  path: string;
  key: string;
  strategies: string[];
  permission: unknown;
  params?: Desc;
  query?: Desc;
  payload?: Desc;
  /** hapi parses the body (JSON, forms, ...) before the handler. */
  parsed: boolean;
}

export function routesOf(server: Hapi.Server): RouteInfo[] {
  return server.table().map((r) => {
    const s = r.settings;
    const v = (s.validate ?? {}) as Record<string, unknown>;
    const auth = s.auth as false | { strategies?: string[] } | undefined;
    const method = r.method.toUpperCase();
    return {
      method,
      path: r.path,
      key: `${method} ${r.path}`,
      strategies: auth && auth.strategies ? auth.strategies : [],
      permission: (s.plugins as { ferry?: { permission?: unknown } } | undefined)?.ferry?.permission,
      params: describeOf(v.params),
      query: describeOf(v.query),
      payload: describeOf(v.payload),
      parsed: method !== 'GET' && method !== 'HEAD' && (s.payload as { parse?: unknown } | undefined)?.parse === true,
    };
  });
}

// ---------------------------------------------------------------- helpers

const RAW = '\u0000raw:';

/** JSON text of a value in which strings `RAW<n>` stand for raw JSON texts. */
function toJson(value: unknown, raws: string[]): string {
  return JSON.stringify(value).replace(/"\\u0000raw:(\d+)"/g, (_, i: string) => raws[Number(i)]!);
}

function setPath(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let cur = obj;
  for (const k of path.slice(0, -1)) {
    const next = cur[k];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[path[path.length - 1]!] = value;
}

/** Percent-encodes a value for a URL; lone surrogates become their (invalid) CESU-8 bytes. */
export function encodeValue(r: Rng, v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < v.length && v.charCodeAt(i + 1) >= 0xdc00 && v.charCodeAt(i + 1) <= 0xdfff) {
      out += encodeURIComponent(v.slice(i, i + 2));
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out += r.pick(['%ED%A0%80', '%FF', '%C0%AF', '%ED%BF%BF']);
    } else out += encodeURIComponent(v[i]!);
  }
  // sometimes the separators and dots travel unencoded, as a careless client sends them
  if (r.chance(0.2)) out = out.replace(/%2F/g, '/').replace(/%5C/g, '\\');
  return out;
}

function queryString(r: Rng, q: [string, string][]): string {
  if (q.length === 0) return '';
  return '?' + q.map(([k, v]) => `${encodeValue(r, k)}=${encodeValue(r, v)}`).join('&');
}

// ------------------------------------------------------- the valid bases

export interface Base {
  params: Record<string, string>;
  query: [string, string][];
  /** A body the route accepts (JSON object), or undefined. */
  body?: Record<string, unknown> | unknown[];
  headers: Record<string, string>;
}

const SHARE_ROUTES = /^\/api\/v2\/shares(\/|$)/;

/** Existing objects addressed by item routes, so that validation and handlers are reached. */
function baseParams(w: World, rt: RouteInfo): Record<string, string> {
  const p = rt.path;
  const out: Record<string, string> = {};
  for (const m of p.matchAll(/\{(\w+)\*?\}/g)) {
    const name = m[1]!;
    let v = w.names[name] ?? 'fz-x';
    if (name === 'name') {
      if (p.includes('/folders/')) v = 'fz-folder';
      else if (p.includes('/groups/')) v = 'fz-group';
      else if (p.includes('/eventactions/')) v = 'fz-action';
      else if (p.includes('/eventrules/')) v = 'fz-rule';
      else v = 'fz-role';
    }
    if (name === 'username' && p.includes('/admins/')) v = 'fz-limited';
    if (name === 'id' && p.startsWith('/api/v2/user/shares')) v = w.shares.read;
    if (name === 'id' && SHARE_ROUTES.test(p)) v = w.shares.writePw;
    if (name === 'id' && p.startsWith('/api/v2/shares-chunked-uploads')) v = w.tusUpload.split('/').pop()!;
    if (name === 'id' && p.startsWith('/api/v2/defender')) v = 'fz-no-host';
    if (name === 'filePath') v = 'fz-new.txt';
    out[name] = v;
  }
  return out;
}

/** Valid bodies of the routes that take one (only mutated copies are ever sent). */
function baseBody(w: World, rt: RouteInfo): Record<string, unknown> | unknown[] | undefined {
  const p = rt.path;
  const bodies: Record<string, Record<string, unknown> | unknown[]> = {
    '/api/v2/users': { username: 'fz-new-user', password: 'pw-123456', home_dir: w.home + '-new', permissions: { '/': ['list', 'download'] }, quota_size: 0 },
    '/api/v2/users/{username}': { username: w.user, home_dir: w.home, permissions: { '/': ['*'] }, status: 1 },
    '/api/v2/admins': { username: 'fz-new-admin', password: 'pw-123456', permissions: ['view_users'] },
    '/api/v2/admins/{username}': { username: 'fz-limited', permissions: ['view_status'], status: 1 },
    '/api/v2/folders': { name: 'fz-new-folder', mapped_path: w.ta.dataDir + '/folders/fz-new' },
    '/api/v2/folders/{name}': { name: 'fz-folder', mapped_path: w.ta.dataDir + '/folders/fz-folder' },
    '/api/v2/groups': { name: 'fz-new-group', user_settings: { permissions: { '/': ['list'] } } },
    '/api/v2/groups/{name}': { name: 'fz-group', description: 'fuzz group' },
    '/api/v2/roles': { name: 'fz-new-role' },
    '/api/v2/roles/{name}': { name: 'fz-role', description: 'fuzz role' },
    '/api/v2/eventactions': { name: 'fz-new-action', type: 15 },
    '/api/v2/eventactions/{name}': { name: 'fz-action', type: 15 },
    '/api/v2/eventrules': { name: 'fz-new-rule', status: 0, trigger: 6, actions: [{ name: 'fz-action' }] },
    '/api/v2/eventrules/{name}': {
      name: 'fz-rule',
      status: 0,
      trigger: 3,
      conditions: { schedules: [{ minute: '30', hour: '2', day_of_week: '*', day_of_month: '*', month: '*' }] },
      actions: [{ name: 'fz-action' }],
    },
    '/api/v2/apikeys': { name: 'fz-new-key', scope: 2, user: w.user },
    '/api/v2/apikeys/{id}': { name: 'fz-admin-key', scope: 1, admin: 'admin' },
    '/api/v2/iplists/{type}': { ipornet: '198.51.100.7', description: 'new' },
    '/api/v2/iplists/{type}/{ipornet*}': { description: 'changed' },
    '/api/v2/user/shares': { name: 'fz-new-share', scope: 1, paths: ['/docs'] },
    '/api/v2/user/shares/{id}': { name: 'fz-read', scope: 1, paths: ['/docs'] },
    '/api/v2/user/streamzip': ['/top.txt', '/docs'],
    '/api/v2/user/files/metadata': { modification_time: 1_700_000_000_000 },
    '/api/v2/admin/changepwd': { current_password: 'admin-password-1', new_password: 'fz-new-password-1' },
    '/api/v2/user/changepwd': { current_password: 'fuzz-user-password-1', new_password: 'fz-new-password-1' },
    '/api/v2/admin/profile': { email: 'admin@example.com', allow_api_key_auth: true },
    '/api/v2/user/profile': { email: 'user@example.com', allow_api_key_auth: true },
    '/api/v2/quotas/users/{username}/usage': { used_quota_size: 10, used_quota_files: 1 },
    '/api/v2/quotas/folders/{name}/usage': { used_quota_size: 10, used_quota_files: 1 },
    '/api/v2/quotas/users/{username}/transfer-usage': { used_upload_data_transfer: 1, used_download_data_transfer: 1 },
  };
  const b = bodies[p];
  if (b) return structuredClone(b);
  if (rt.payload?.type === 'object') return {};
  if (rt.payload?.type === 'array') return [];
  return undefined;
}

/** A query the route accepts: required keys with valid values. */
function baseQuery(rt: RouteInfo): [string, string][] {
  const q: [string, string][] = [];
  const keys = rt.query?.keys ?? {};
  const userFiles = rt.path.startsWith('/api/v2/user/files') || rt.path.startsWith('/api/v2/user/file-actions');
  for (const [k, d] of Object.entries(keys)) {
    if (d.flags?.presence !== 'required') continue;
    if (k === 'path') q.push([k, rt.path.includes('/dirs') ? '/docs' : userFiles ? '/top.txt' : rt.path.startsWith('/api/v2/shares/') ? '/' : '/']);
    else if (k === 'target') q.push([k, '/fz-target']);
    else if (k === 'input-file') q.push([k, 'fz-missing-dump.json']);
    else if (k === 'state') q.push([k, 'fz-state']);
    else q.push([k, 'fz']);
  }
  return q;
}

function credentialsFor(r: Rng, w: World, rt: RouteInfo): Record<string, string> {
  const s = rt.strategies;
  if (s.includes('jwt-admin'))
    return s.includes('apikey-admin') && r.chance(0.2) ? { 'x-service-api-key': w.adminKey } : { authorization: `Bearer ${w.adminToken}` };
  if (s.includes('jwt-user'))
    return s.includes('apikey-user') && r.chance(0.2) ? { 'x-service-api-key': w.userKey } : { authorization: `Bearer ${w.userToken}` };
  if (s.includes('web-user')) {
    // the web session's own routes (cookie only); a DELETE ends its session, so it has one of its own
    const ws = rt.method === 'DELETE' ? w.webSessions.end : w.webSessions.read;
    return { cookie: `ferry_web=${ws.cookie}`, 'x-csrf-token': ws.csrf };
  }
  if (s.includes('web-admin')) {
    // the admin web session's own routes (cookie only), as the user's above
    const ws = rt.method === 'DELETE' ? w.adminWebSessions.end : w.adminWebSessions.read;
    return { cookie: `ferry_admin=${ws.cookie}`, 'x-csrf-token': ws.csrf };
  }
  if (s.includes('apikey-admin')) return { 'x-service-api-key': w.adminKey };
  if (s.includes('apikey-user')) return { 'x-service-api-key': w.userKey };
  if (SHARE_ROUTES.test(rt.path) || rt.path.startsWith('/api/v2/shares-chunked-uploads'))
    return { authorization: 'Basic ' + Buffer.from(`x:${SHARE_PASSWORD}`).toString('base64') };
  return {};
}

export function baseOf(r: Rng, w: World, rt: RouteInfo): Base {
  return { params: baseParams(w, rt), query: baseQuery(rt), body: baseBody(w, rt), headers: credentialsFor(r, w, rt) };
}

function build(
  r: Rng,
  rt: RouteInfo,
  b: Base,
  kind: string,
  o: { payload?: string | Buffer; contentType?: string; status?: number } = {},
): Omit<FuzzRequest, 'n'> {
  const path = rt.path.replace(/\{(\w+)\*?\}/g, (_, name: string) => {
    const v = b.params[name] ?? 'fz-x';
    return name === 'filePath' || name === 'ipornet'
      ? v
          .split('/')
          .map((s) => encodeValue(r, s))
          .join('/')
      : encodeValue(r, v);
  });
  const headers = { ...b.headers };
  let payload = o.payload;
  if (payload === undefined && b.body !== undefined && rt.parsed) payload = JSON.stringify(b.body);
  if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['content-type'] = o.contentType ?? 'application/json';
  return { kind, route: rt.key, method: rt.method, url: path + queryString(r, b.query), headers, payload, status: o.status };
}

// ------------------------------------------------------------- mutations

type Gen = (r: Rng, w: World, rt: RouteInfo) => Omit<FuzzRequest, 'n'> | undefined;

/** Credentials the route refuses; the rest of the request is valid. */
const genAuth: Gen = (r, w, rt) => {
  if (!rt.strategies.length) return undefined;
  const b = baseOf(r, w, rt);
  if (rt.strategies.some((s) => s.startsWith('basic-'))) {
    const who = rt.strategies.includes('basic-admin') ? { u: 'admin', p: 'admin-password-1' } : { u: w.user, p: 'fuzz-user-password-1' };
    const bad = badBasic(r, who.u, who.p);
    return build(r, rt, { ...b, headers: bad.headers }, `auth: basic ${bad.label}`);
  }
  const bad = badCredentials(r, w, rt.strategies, rt.permission);
  return build(r, rt, { ...b, headers: bad.headers }, `auth: ${bad.label}`);
};

/** One path parameter replaced by a name no object has (hostile, long, encoded dots and slashes). */
const genParams: Gen = (r, w, rt) => {
  const b = baseOf(r, w, rt);
  const names = Object.keys(b.params);
  if (!names.length) return undefined;
  const name = r.pick(names);
  const v = r.chance(0.5) ? hostilePath(r) : hostileString(r);
  const value =
    v === '' ? '%20' : name === 'filePath' ? `${v}/fz-missing-${r.int(1e6)}/f` : `fz-missing-${r.int(1e6)}${r.chance(0.5) ? v : ''}`.slice(0, 20_000);
  if (rt.path.startsWith('/api/v2/shares/') && name !== 'id') {
    // share routes: a hostile file path on a share the user may not write to
    b.params.id = w.shares.write;
  }
  const req = build(r, rt, { ...b, params: { ...b.params, [name]: r.chance(0.3) ? v || '..' : value } }, `params: ${name}`);
  // dot segments (raw or as %2e) are resolved before routing: the request would go to another route (a listing, say)
  const path = req.url.split('?')[0]!;
  if (new URL(path, 'http://x').pathname !== path) return undefined;
  return req;
};

/** A query the route's schema refuses: unknown key, bad value, a key sent twice, over-long values. */
const genQuery: Gen = (r, w, rt) => {
  const d = rt.query;
  if (!d || d.type !== 'object') return undefined;
  const b = baseOf(r, w, rt);
  const keys = Object.entries(d.keys ?? {});
  const choices: (() => string | undefined)[] = [];
  const dupable = keys.filter(([, k]) => k.type !== 'array' && k.type !== 'alternatives' && k.type !== 'any');
  if (dupable.length)
    choices.push(() => {
      const [k] = r.pick(dupable);
      b.query = b.query.filter(([x]) => x !== k);
      b.query.push([k, '1'], [k, '2']);
      return `${k} twice`;
    });
  const typed = keys.filter(
    ([, k]) => ['number', 'boolean'].includes(k.type) || (k.type === 'string' && (k.flags?.only || k.rules?.some((x) => x.name === 'max'))),
  );
  const badValue = () => {
    const [k, kd] = r.pick(typed);
    let v: string;
    if (kd.type === 'number')
      v = r.pick(['abc', '1e400', '99999999999999999999', '-99999999999999999999', '1.5x', '0x10', 'NaN', 'Infinity', '-1', '１', ' ', `${hostileString(r)}`]);
    else if (kd.type === 'boolean') v = r.pick(['maybe', '2', 'yes', 'TRUE1', '-1', 'on', hostileString(r) + 'x']);
    else if (kd.flags?.only) v = r.pick(['fz-not-valid', 'asc ', 'DESC\u0000', hostileString(r) + 'zz']);
    else {
      const max = kd.rules?.find((x) => x.name === 'max')?.args?.limit as number;
      v = 'q'.repeat(max + 1 + r.int(100));
    }
    // values a schema could still accept are replaced by one it never does
    if (kd.type === 'number' && v === '-1' && !kd.rules?.some((x) => x.name === 'min')) v = 'abc';
    if (kd.type === 'number' && v === ' ') v = 'x';
    // a hostile string that is a plain number ("-0", a large integer) may be a valid value of the key
    if (kd.type === 'number' && /^[+-]?\d+(\.\d+)?$/.test(v) && !['-1', '99999999999999999999', '-99999999999999999999'].includes(v)) v = 'abc';
    if (kd.type === 'boolean' && (kd.truthy ?? []).concat(kd.falsy ?? []).includes(v)) v = 'maybe';
    if (kd.flags?.only && (kd.allow ?? []).includes(v)) v = 'fz-not-valid';
    b.query = b.query.filter(([x]) => x !== k);
    b.query.push([k, v]);
    return `${k}=${kd.type} refused`;
  };
  if (typed.length) choices.push(badValue);
  // unknown parameters are ignored (core/src/util/lenient.ts): sent with a refused value, which the answer must name
  if (closedObject(d) && typed.length)
    choices.push(() => {
      b.query.push([r.pick(['fz_unknown', '__proto__', 'constructor', hostileString(r).slice(0, 100) || 'x']), hostileString(r)]);
      return `unknown key (ignored) and ${badValue()}`;
    });
  if (!choices.length) return undefined;
  const label = r.pick(choices)();
  return build(r, rt, b, `query: ${label}`);
};

/** A JSON body with one field the schema refuses (wrong type, null, out of bounds, unknown), or a required field missing. */
const genField: Gen = (r, w, rt) => {
  const d = rt.payload;
  if (!d || !rt.parsed) return undefined;
  const b = baseOf(r, w, rt);
  const raws: string[] = [];
  const raw = (text: string) => `${RAW}${raws.push(text) - 1}`;
  if (d.type === 'array') {
    const item = d.items?.[0];
    const bad = item ? invalidFor(r, item) : undefined;
    const list = (b.body as unknown[]) ?? [];
    if (bad !== undefined && r.chance(0.7)) list.splice(r.int(list.length + 1), 0, raw(bad));
    else return build(r, rt, b, 'body: array refused', { payload: r.pick(['{}', '"x"', '7', 'null', '{"paths":["/top.txt"]}']) });
    return build(r, rt, b, 'body: array item refused', { payload: toJson(list, raws) });
  }
  if (d.type !== 'object') return undefined;
  const body = (b.body as Record<string, unknown>) ?? {};
  const paths = keyPaths(d).filter((p) => invalidFor(r, descAt(d, p)!) !== undefined);
  const required = requiredKeys(d).filter((k) => k in body);
  const choice = r.weighted<string>([
    [paths.length ? 6 : 0, 'field'],
    [required.length ? 1 : 0, 'missing'],
    [closedObject(d) ? 2 : 0, 'unknown'],
  ]);
  if (choice === 'field') {
    const p = r.pick(paths);
    setPath(body, p, raw(invalidFor(r, descAt(d, p)!)!));
    return build(r, rt, b, `body: ${p.join('.')} refused`, { payload: toJson(body, raws) });
  }
  if (choice === 'missing') {
    const k = r.pick(required);
    delete body[k];
    return build(r, rt, b, `body: ${k} missing`, { payload: toJson(body, raws) });
  }
  if (choice === 'unknown') {
    const k = r.pick(['fz_extra', '__fz', 'password_hash', 'is_admin', hostileString(r).slice(0, 200) || 'x']);
    if (k in (d.keys ?? {})) return undefined;
    // the unknown key carries the nasty value: control characters, lone surrogates, huge or deep values;
    // it is dropped (core/src/util/lenient.ts), so a known field is refused with it and the answer is that refusal
    body[k] = raw(r.chance(0.2) ? deepJson(r) : hostileJson(r));
    let also: string;
    if (paths.length) {
      const p = r.pick(paths);
      setPath(body, p, raw(invalidFor(r, descAt(d, p)!)!));
      also = `${p.join('.')} refused`;
    } else if (required.length) {
      const req = r.pick(required);
      delete body[req];
      also = `${req} missing`;
    } else return undefined;
    return build(r, rt, b, `body: unknown key (dropped) and ${also}`, { payload: toJson(body, raws) });
  }
  return undefined;
};

/** A body that is not the expected JSON: other top-level type, deep nesting, broken syntax, prototype keys. */
const genShape: Gen = (r, w, rt) => {
  if (!rt.parsed) return undefined;
  const b = baseOf(r, w, rt);
  // broken JSON is refused by hapi's parser before any handler, schema or not
  if (!rt.payload || r.chance(0.4)) return build(r, rt, b, 'body: not JSON', { payload: brokenJson(r) });
  const top = rt.payload.type;
  const deep = deepJson(r);
  const any = hostileJson(r);
  const opts =
    top === 'array'
      ? ['{}', '"x"', '7', 'null', 'true', '{' + jsonString('a') + ':[]}', deep.startsWith('{') ? deep : '{"a":[]}']
      : ['[]', '"x"', '7', 'null', 'true', '[{}]', any.startsWith('{') || any === 'null' ? '[]' : any, deep.startsWith('[') ? deep : '[[]]'];
  const payload = r.pick(opts);
  if (top === 'object' && (payload.startsWith('{') || payload === 'null') && !closedObject(rt.payload)) return undefined;
  // an object of unknown members is an empty object once they are dropped: refused only for its missing required members
  if (top === 'object' && payload.startsWith('{')) {
    if (!requiredKeys(rt.payload).length) return undefined;
    return build(r, rt, b, 'body: only unknown members (required ones missing)', { payload });
  }
  if (payload === 'null' && rt.payload.flags?.presence !== 'required') {
    // hapi treats a null body as no body: only refused when the body is required
    return build(r, rt, b, 'body: not JSON', { payload: brokenJson(r) });
  }
  return build(r, rt, b, 'body: wrong top-level type', { payload });
};

/** A body of a type hapi does not parse, or encoded in a way it refuses. */
const genContentType: Gen = (r, w, rt) => {
  if (!rt.parsed) return undefined;
  const b = baseOf(r, w, rt);
  const body = b.body === undefined ? '{}' : JSON.stringify(b.body);
  const pick = r.pick(['xml', 'html', 'unknown', 'multipart', 'gzip', 'brotli', 'form']);
  if (pick === 'gzip') {
    b.headers['content-encoding'] = 'gzip';
    return build(r, rt, b, 'content: gzip that is not', { payload: body });
  }
  if (pick === 'brotli') {
    // hapi reads a body in an encoding it does not know as plain (a 415 would be right): the body is broken too
    b.headers['content-encoding'] = r.pick(['br', 'compress', 'x-fz', 'gzip, x-fz']);
    return build(r, rt, b, 'content: unsupported encoding', { payload: brokenJson(r) });
  }
  if (pick === 'multipart') {
    return build(r, rt, b, 'content: broken multipart', {
      payload: r.pick(['--x\r\nbroken', body, '--fz\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--fz']),
      contentType: r.pick(['multipart/form-data', 'multipart/form-data; boundary=fz', 'multipart/mixed; boundary="']),
    });
  }
  if (pick === 'form') {
    // a form body only reaches a schema, which drops its unknown keys: refused for the required ones missing
    if (!rt.payload || !closedObject(rt.payload) || !requiredKeys(rt.payload).length)
      return build(r, rt, b, 'content: unsupported type', { payload: body, contentType: 'application/xml' });
    return build(r, rt, b, 'content: form of unknown keys (required ones missing)', {
      payload: 'fz_unknown=1&' + encodeValue(r, hostileString(r)) + '=2',
      contentType: 'application/x-www-form-urlencoded',
    });
  }
  const type = {
    xml: 'application/xml',
    html: 'application/vnd.fz+xml; charset=utf-8',
    unknown: r.pick(['application/x-fz', 'image/png', 'application/javascript', 'fz', '*/*']),
  }[pick]!;
  return build(r, rt, b, 'content: unsupported type', { payload: body, contentType: type });
};

const BIG = Buffer.alloc(1024 * 1024 + 64 * 1024, 'a');

/** A body over the request size limit (413). */
const genOversize: Gen = (r, w, rt) => {
  if (!rt.parsed) return undefined;
  const b = baseOf(r, w, rt);
  const payload = Buffer.concat([Buffer.from('{"fz":"'), BIG, Buffer.from('"}')]);
  return build(r, rt, b, 'body: too big', { payload });
};

/**
 * Bodies the schema accepts and the handler must refuse: a name that is
 * taken, a reference to an object that does not exist. These reach the
 * services and the database (unique constraints, lookups).
 */
const SEMANTIC: Record<string, ((w: World, b: Record<string, unknown>) => Record<string, unknown>)[]> = {
  'POST /api/v2/users': [
    (w, b) => ({ ...b, username: w.user }),
    (_w, b) => ({ ...b, groups: [{ name: 'fz-no-group', type: 1 }] }),
    (_w, b) => ({ ...b, groups: [{ name: 'fz-no-group', type: 2 }] }),
    (_w, b) => ({ ...b, virtual_folders: [{ name: 'fz-no-folder', virtual_path: '/v', quota_size: -1, quota_files: -1 }] }),
    (_w, b) => ({ ...b, role: 'fz-no-role' }),
  ],
  'POST /api/v2/admins': [
    (_w, b) => ({ ...b, username: 'admin' }),
    (_w, b) => ({ ...b, role: 'fz-no-role' }),
    (_w, b) => ({ ...b, groups: [{ name: 'fz-no-group' }] }),
  ],
  'POST /api/v2/folders': [(_w, b) => ({ ...b, name: 'fz-folder' })],
  'POST /api/v2/groups': [(_w, b) => ({ ...b, name: 'fz-group' }), (_w, b) => ({ ...b, virtual_folders: [{ name: 'fz-no-folder', virtual_path: '/v' }] })],
  'POST /api/v2/roles': [(_w, b) => ({ ...b, name: 'fz-role' })],
  'POST /api/v2/eventactions': [(_w, b) => ({ ...b, name: 'fz-action' })],
  'POST /api/v2/eventrules': [(_w, b) => ({ ...b, name: 'fz-rule' }), (_w, b) => ({ ...b, actions: [{ name: 'fz-no-action' }] })],
  'PUT /api/v2/eventrules/{name}': [(_w, b) => ({ ...b, actions: [{ name: 'fz-no-action' }] })],
  'POST /api/v2/apikeys': [(_w, b) => ({ ...b, user: 'fz-no-user' }), (_w, b) => ({ ...b, scope: 1, user: undefined, admin: 'fz-no-admin' })],
  'POST /api/v2/iplists/{type}': [(_w, b) => ({ ...b, ipornet: '192.0.2.10' })],
  'POST /api/v2/user/shares': [(_w, b) => ({ ...b, paths: ['/fz-no-such-dir'] }), (_w, b) => ({ ...b, scope: 2, paths: ['/ro'] })],
  'PUT /api/v2/user/shares/{id}': [(_w, b) => ({ ...b, paths: ['/fz-no-such-dir'] })],
  'PUT /api/v2/users/{username}': [(_w, b) => ({ ...b, role: 'fz-no-role' }), (_w, b) => ({ ...b, groups: [{ name: 'fz-no-group', type: 1 }] })],
};

const genSemantic: Gen = (r, w, rt) => {
  const muts = SEMANTIC[rt.key];
  if (!muts) return undefined;
  const b = baseOf(r, w, rt);
  const body = r.pick(muts)(w, b.body as Record<string, unknown>);
  return build(r, rt, b, 'semantic: taken name or missing reference', { payload: JSON.stringify(body) });
};

/** Objects that do not exist, addressed with a valid body (404 after validation). */
const genMissingTarget: Gen = (r, w, rt) => {
  if (!rt.payload || !['PUT', 'DELETE'].includes(rt.method)) return undefined;
  const b = baseOf(r, w, rt);
  const names = Object.keys(b.params).filter((n) => n !== 'type');
  if (!names.length) return undefined;
  const name = r.pick(names);
  return build(
    r,
    rt,
    { ...b, params: { ...b.params, [name]: name === 'ipornet' ? '198.51.100.254' : `fz-missing-${r.int(1e6)}` } },
    'semantic: missing object',
  );
};

/** Every method and path of the table, to find methods a path does not have. */
let routeKeys = new Set<string>();
export function knowRoutes(routes: RouteInfo[]): void {
  routeKeys = new Set(routes.map((x) => x.key));
}

/** A method the path has no route for (the router's 404; hapi answers HEAD with GET routes, so no HEAD). */
const genMethod: Gen = (r, w, rt) => {
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter(
    (m) => !routeKeys.has(`${m} ${rt.path}`) && !(m === 'GET' && routeKeys.has(`HEAD ${rt.path}`)),
  );
  if (!methods.length) return undefined;
  const b = baseOf(r, w, rt);
  const req = build(r, { ...rt, method: r.pick(methods) }, b, 'method: not routed');
  return { ...req, route: rt.key };
};

export const GENERIC: Record<string, Gen> = {
  auth: genAuth,
  params: genParams,
  query: genQuery,
  field: genField,
  shape: genShape,
  content: genContentType,
  oversize: genOversize,
};

/** Which generators apply to a route, with their weights. */
export function applicable(rt: RouteInfo): [number, Gen][] {
  const basicRoute = rt.strategies.some((s) => s.startsWith('basic-'));
  const out: [number, Gen][] = [[0.3, genMethod]];
  if (rt.strategies.length) out.push([basicRoute ? 10 : 3, genAuth]);
  if (basicRoute) return out;
  if (rt.params) out.push([2, genParams]);
  if (rt.query) out.push([3, genQuery]);
  if (rt.payload && rt.parsed) out.push([6, genField], [SEMANTIC[rt.key] ? 2 : 0, genSemantic], [1, genMissingTarget]);
  if (rt.parsed) out.push([2, genShape], [1, genContentType], [0.15, genOversize]);
  return out;
}

// ---------------------------------------------------------------- runner

export interface Failure {
  req: FuzzRequest;
  status: number;
  body: string;
  why: string;
}

const STACK = /\n\s+at |node:internal|\.ts:\d+:\d+|\.js:\d+:\d+|node_modules/;

/** Checks one answer; returns why it is wrong, or undefined. */
export function verdict(req: FuzzRequest, status: number, headers: Record<string, unknown>, body: string): string | undefined {
  if (req.status !== undefined) {
    if (status !== req.status) return `status ${status}, expected ${req.status}`;
  } else if (status < 400 || status >= 500) return `status ${status}, expected a 4xx`;
  if (STACK.test(body)) return 'stack trace in the body';
  if (status < 400 || req.method === 'HEAD') return undefined;
  if (!String(headers['content-type'] ?? '').startsWith('application/json'))
    return `content-type ${String(headers['content-type'])}, expected application/json`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'body is not JSON';
  }
  const o = parsed as { message?: unknown; error?: unknown };
  if (typeof o !== 'object' || o === null || typeof o.message !== 'string' || typeof o.error !== 'string') return 'body is not an ApiResponse {message, error}';
  return undefined;
}

export function describeRequest(seed: number, req: FuzzRequest): string {
  const payload =
    req.payload === undefined
      ? ''
      : Buffer.isBuffer(req.payload)
        ? `\n  body: <${req.payload.length} bytes> ${JSON.stringify(req.payload.subarray(0, 200).toString('latin1'))}`
        : `\n  body (${req.payload.length} chars): ${JSON.stringify(req.payload.length > 600 ? req.payload.slice(0, 600) + '…' : req.payload)}`;
  const url = req.url.length > 600 ? req.url.slice(0, 600) + `… (${req.url.length} chars)` : req.url;
  return `FERRY_FUZZ_SEED=${seed} FERRY_FUZZ_ONLY=${req.n} [${req.kind}] ${req.route}\n  ${req.method} ${url}\n  headers: ${JSON.stringify(req.headers).slice(0, 800)}${payload}`;
}

/** Which of the generated requests to send: all, or FERRY_FUZZ_ONLY=<n>[,<n>...] to replay some. */
export function selected(reqs: FuzzRequest[]): FuzzRequest[] {
  const only = process.env.FERRY_FUZZ_ONLY;
  if (!only) return reqs;
  const set = new Set(only.split(',').map((s) => Number(s.trim())));
  return reqs.filter((r) => set.has(r.n));
}

export interface RunResult {
  failures: Failure[];
  /** route → status → count (requests the route itself answered) */
  statuses: Map<string, Map<number, number>>;
  /** route → requests */
  counts: Map<string, number>;
  kinds: Map<string, number>;
  sent: number;
  /** route → milliseconds spent (concurrent requests overlap) */
  time: Map<string, number>;
}

/** Sends the requests through inject, `concurrency` at a time. */
export async function runInject(server: Hapi.Server, reqs: FuzzRequest[], concurrency = 16): Promise<RunResult> {
  const res: RunResult = { failures: [], statuses: new Map(), counts: new Map(), kinds: new Map(), sent: 0, time: new Map() };
  let next = 0;
  const worker = async () => {
    while (next < reqs.length) {
      const req = reqs[next++]!;
      const t0 = performance.now();
      const r = await server.inject({ method: req.method, url: req.url, headers: req.headers, payload: req.payload, remoteAddress: '127.0.0.1' });
      res.sent++;
      const why = verdict(req, r.statusCode, r.headers, r.payload);
      if (why) res.failures.push({ req, status: r.statusCode, body: r.payload.slice(0, 500), why });
      record(res, req, r.statusCode);
      const spent = performance.now() - t0;
      res.time.set(req.route, (res.time.get(req.route) ?? 0) + spent);
      if (spent > 200 && process.env.FERRY_FUZZ_TIMES)
        console.error(`slow ${Math.round(spent)} ms #${req.n} ${req.kind} ${req.method} ${req.url.slice(0, 200)} ${r.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return res;
}

export function record(res: RunResult, req: FuzzRequest, status: number): void {
  res.counts.set(req.route, (res.counts.get(req.route) ?? 0) + 1);
  const family = req.kind.split(':')[0]!;
  res.kinds.set(family, (res.kinds.get(family) ?? 0) + 1);
  // answers of the route itself (a method it does not have is answered by the router)
  if (family === 'method') return;
  let m = res.statuses.get(req.route);
  if (!m) res.statuses.set(req.route, (m = new Map()));
  m.set(status, (m.get(status) ?? 0) + 1);
}
