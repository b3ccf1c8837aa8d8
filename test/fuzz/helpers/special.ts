/**
 * Generators for the routes whose requests carry more than a schema shows:
 * file paths of the user API, public shares (multipart, raw uploads, share
 * passwords), TUS headers, and the routes that answer every request alike.
 * Paths always end in a name that does not exist (or aim where the caller
 * may not write), so every request stays refused.
 */
import type { Rng } from './prng.js';
import { badBasic } from './auth.js';
import { baseOf, encodeValue, type FuzzRequest, type RouteInfo } from './fuzz.js';
import { hostilePath, hostileString } from './values.js';
import { SHARE_PASSWORD, type World } from './world.js';

type Req = Omit<FuzzRequest, 'n'>;

const missing = (r: Rng) => `fz-missing-${r.int(1e6)}`;
/** A hostile path whose last component does not exist (for reads), or its parent neither (`below`, for writes). */
const hostileMissing = (r: Rng, below = false) => {
  const h = hostilePath(r);
  const leaf = below ? `${missing(r)}/${r.pick(['new', 'x.txt', '..fz', hostileString(r).replace(/[/\\]/g, '_') || 'y'])}` : missing(r);
  return r.chance(0.5) ? `${h}/${leaf}` : `${missing(r)}/${h}/${leaf}`;
};

const q = (r: Rng, pairs: [string, string][]) => (pairs.length ? '?' + pairs.map(([k, v]) => `${k}=${encodeValue(r, v)}`).join('&') : '');
const basicPw = (pw: string) => ({ authorization: 'Basic ' + Buffer.from(`x:${pw}`).toString('base64') });

function multipart(r: Rng, files: { name: string; data: string }[], o: { field?: string } = {}): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `fzb${r.int(1e9)}`;
  const parts = files.map(
    (f) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${o.field ?? 'filenames'}"; filename="${f.name}"\r\nContent-Type: application/octet-stream\r\n\r\n${f.data}\r\n`,
  );
  return { payload: Buffer.from(parts.join('') + `--${boundary}--\r\n`, 'utf8'), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Broken multipart bodies (with the content type that announces them). */
function brokenMultipart(r: Rng): { payload: Buffer; headers: Record<string, string>; label: string } {
  const ok = multipart(r, [{ name: 'f.txt', data: 'x' }]);
  return r.pick<() => { payload: Buffer; headers: Record<string, string>; label: string }>([
    () => ({ ...ok, headers: { 'content-type': 'multipart/form-data' }, label: 'no boundary' }),
    () => ({ ...ok, payload: ok.payload.subarray(0, ok.payload.length - 8), label: 'truncated' }),
    () => ({ ...ok, headers: { 'content-type': 'multipart/form-data; boundary=other' }, label: 'wrong boundary' }),
    () => ({ ...multipart(r, []), label: 'no file' }),
    () => ({ ...multipart(r, [{ name: 'f.txt', data: 'x' }], { field: 'other' }), label: 'other field' }),
    () => ({
      ...multipart(r, [
        { name: 'dup.txt', data: 'x' },
        { name: 'dup.txt', data: 'y' },
      ]),
      label: 'duplicate name (missing dir)',
    }),
    () => ({ payload: Buffer.from('not multipart'), headers: { 'content-type': 'application/json' }, label: 'not multipart' }),
    () => ({
      payload: Buffer.from('--b\r\nContent-Disposition: form-data; name="filenames"; filename="a"\r\n\r\nx'),
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
      label: 'unterminated part',
    }),
  ])();
}

/** User file API: hostile `path` / `target` values that reach nothing existing. */
export function userPaths(r: Rng, w: World, rt: RouteInfo): Req | undefined {
  const b = baseOf(r, w, rt);
  const headers = b.headers;
  const keys = Object.keys(rt.query?.keys ?? {});
  const isDirs = rt.path === '/api/v2/user/dirs';
  const existing = isDirs ? '/docs/sub' : '/top.txt';
  const make = (query: [string, string][], o: { payload?: string | Buffer; headers?: Record<string, string> } = {}, kind = 'path'): Req => ({
    kind,
    route: rt.key,
    method: rt.method,
    url: rt.path + q(r, query),
    headers: { ...headers, ...(o.headers ?? {}) },
    payload: o.payload,
  });
  if (rt.path === '/api/v2/user/streamzip') {
    const list = ['/top.txt', hostileMissing(r)];
    return make([], { payload: JSON.stringify(r.chance(0.5) ? list.reverse() : list), headers: { 'content-type': 'application/json' } }, 'path: zip');
  }
  if (keys.includes('path') && keys.includes('target')) {
    // the source does not exist, or the target is below a directory that does not exist
    return r.chance(0.5)
      ? make(
          [
            ['path', hostileMissing(r)],
            ['target', `/fz-renamed-${r.int(1e6)}`],
          ],
          {},
          'path: source',
        )
      : make(
          [
            ['path', existing],
            ['target', hostileMissing(r, true)],
          ],
          {},
          'path: target',
        );
  }
  if (!keys.includes('path')) return undefined;
  const p = hostileMissing(r);
  if (rt.path === '/api/v2/user/files' && rt.method === 'POST')
    return make(
      [['path', p]],
      multipart(r, [{ name: r.chance(0.5) ? 'up.txt' : hostileString(r).replace(/["\r\n]/g, '_') || 'x', data: 'x' }]),
      'path: multipart dir',
    );
  if (rt.path === '/api/v2/user/files/upload') {
    const h: Record<string, string> = { 'content-type': 'application/octet-stream' };
    if (r.chance(0.2)) h['x-service-mtime'] = r.pick(['-1', 'abc', '1e20', '9'.repeat(20), '']);
    return make([['path', hostileMissing(r, true)]], { payload: 'raw upload body', headers: h }, 'path: raw upload');
  }
  if (rt.path === '/api/v2/user/files/metadata')
    return make(
      [['path', p]],
      { payload: JSON.stringify({ modification_time: 1_700_000_000_000 }), headers: { 'content-type': 'application/json' } },
      'path: metadata',
    );
  if (rt.path === '/api/v2/user/dirs' && rt.method === 'POST') return make([['path', hostileMissing(r, true)]], {}, 'path: mkdir');
  return make([['path', p]]);
}

/** Multipart faults of the upload routes (multipart to the user's home, public share uploads). */
export function multipartFaults(r: Rng, w: World, rt: RouteInfo): Req | undefined {
  const b = baseOf(r, w, rt);
  const m = brokenMultipart(r);
  let url = rt.path;
  if (rt.path === '/api/v2/user/files') url += q(r, [['path', m.label.startsWith('duplicate') ? `/${missing(r)}` : '/docs']]);
  else if (rt.path === '/api/v2/shares/{id}') url = `/api/v2/shares/${w.shares.writePw}`;
  else return undefined;
  return { kind: `multipart: ${m.label}`, route: rt.key, method: 'POST', url, headers: { ...b.headers, ...m.headers }, payload: m.payload };
}

/** Public share routes: wrong passwords, wrong scopes, hostile paths on a share of the wrong scope or below missing directories. */
export function sharePublic(r: Rng, w: World, rt: RouteInfo): Req | undefined {
  const p = rt.path;
  const s = w.shares;
  const make = (id: string, rest: string, headers: Record<string, string>, kind: string, payload?: string | Buffer): Req => ({
    kind,
    route: rt.key,
    method: rt.method,
    url: p.replace('{id}', id).replace(/\/\{filePath\*\}$/, '') + rest,
    headers,
    payload,
  });
  const pick = r.int(4);
  if (pick === 0) {
    // the password share without its password, or with a wrong one
    const bad = r.chance(0.3) ? { label: 'none', headers: {} } : badBasic(r, 'x', SHARE_PASSWORD, true);
    const rest = p.endsWith('{filePath*}')
      ? `/${encodeValue(r, hostilePath(r))}`
      : p.endsWith('/files') || p.endsWith('/mkdir')
        ? q(r, [['path', hostileMissing(r)]])
        : '';
    return make(s.writePw, rest, bad.headers, `share: password ${bad.label}`, rt.method === 'POST' ? 'body' : undefined);
  }
  if (pick === 1) {
    // an open share's page session needs no credential and serves either scope: nothing to refuse there
    if (p.endsWith('/web-session')) return undefined;
    // a route of the other scope (read share written to, write share read)
    const writeRoute = rt.method === 'POST';
    const id = writeRoute ? r.pick([s.read, s.file]) : s.write;
    const rest = p.endsWith('{filePath*}')
      ? `/${encodeValue(r, hostilePath(r))}/f`
      : p.endsWith('/files') || p.endsWith('/mkdir') || p.endsWith('/dirs')
        ? q(r, [['path', hostilePath(r)]])
        : '';
    const body = p === '/api/v2/shares/{id}' && writeRoute ? multipart(r, [{ name: hostilePath(r).replace(/["\r\n]/g, '_'), data: 'x' }]) : undefined;
    return make(id, rest, { ...(body?.headers ?? {}) }, 'share: wrong scope', body?.payload ?? (writeRoute ? 'x' : undefined));
  }
  if (pick === 2 && rt.method === 'POST') {
    // the share whose directory the owner may not write to (/ro): hostile names stay refused
    const name = hostilePath(r);
    if (p.endsWith('{filePath*}'))
      return make(
        s.write,
        `/${name
          .split('/')
          .map((x) => encodeValue(r, x))
          .join('/')}`,
        { 'content-type': 'application/octet-stream' },
        'share: read-only dir upload',
        'data',
      );
    if (p.endsWith('/mkdir')) return make(s.write, q(r, [['path', name === '' || name === '.' ? 'x' : name]]), {}, 'share: read-only dir mkdir');
    if (p === '/api/v2/shares/{id}') {
      const m = multipart(r, [{ name: name.replace(/["\r\n]/g, '_') || 'x', data: 'x' }]);
      return make(s.write, '', m.headers, 'share: read-only dir multipart', m.payload);
    }
  }
  // the right share and password, a path below a directory that does not exist
  const good = basicPw(SHARE_PASSWORD);
  if (p.endsWith('{filePath*}')) {
    const h: Record<string, string> = { ...good, 'content-type': 'application/octet-stream' };
    if (r.chance(0.3)) h['x-service-mtime'] = r.pick(['-1', 'abc', '1e20', '9'.repeat(20)]);
    return make(
      s.writePw,
      `/${missing(r)}/${hostilePath(r)
        .split('/')
        .map((x) => encodeValue(r, x))
        .join('/')}/f`,
      h,
      'share: upload below missing dir',
      'data',
    );
  }
  if (p.endsWith('/mkdir')) return make(s.writePw, q(r, [['path', hostileMissing(r, true)]]), good, 'share: mkdir below missing dir');
  if (p.endsWith('/files') || p.endsWith('/dirs')) return make(s.read, q(r, [['path', hostileMissing(r)]]), {}, 'share: missing path');
  if (p === '/api/v2/shares/{id}' && rt.method === 'GET')
    return make(r.pick([s.write, s.writePw]), r.chance(0.5) ? q(r, [['compress', 'maybe']]) : '', {}, 'share: download refused');
  if (p === '/api/v2/shares/{id}') {
    // a multipart file name is a name, not a path (the part after the last separator is used): broken bodies instead
    const m = brokenMultipart(r);
    return make(s.writePw, '', { ...good, ...m.headers }, `share: multipart ${m.label}`, m.payload);
  }
  return undefined;
}

const TUS = '/api/v2/shares-chunked-uploads';
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** TUS: malformed Upload-Length, Upload-Offset, Upload-Metadata, Tus-Resumable, content types, credentials. */
export function tus(r: Rng, w: World, rt: RouteInfo): Req | undefined {
  const s = w.shares;
  const pw = basicPw(SHARE_PASSWORD);
  if (rt.method === 'OPTIONS') {
    const headers: Record<string, string> = r.chance(0.5) ? { 'tus-resumable': hostileString(r).replace(/[^\x20-\x7e]/g, '?') } : {};
    return {
      kind: 'tus: discovery',
      route: rt.key,
      method: 'OPTIONS',
      url: TUS + (r.chance(0.3) ? `?${wellFormed(hostileString(r))}=1` : ''),
      headers,
      status: 200,
    };
  }
  if (rt.method === 'POST') {
    const meta: Record<string, string | undefined> = { share_id: b64(s.writePw), path: b64(`fz-tus-${r.int(1e6)}.bin`) };
    const headers: Record<string, string> = { ...pw, 'tus-resumable': '1.0.0', 'upload-length': String(r.range(1, 100)) };
    let label: string;
    switch (r.int(9)) {
      case 0:
        label = 'Tus-Resumable';
        if (r.chance(0.3)) delete headers['tus-resumable'];
        else headers['tus-resumable'] = r.pick(['0.2.2', '1.0', '1.0.0 ', '', '1.0.0,1.0.0', hostileString(r).replace(/[^\x20-\x7e]/g, '?') || 'x']);
        if (headers['tus-resumable'] === '1.0.0 ') headers['tus-resumable'] = '1.0.1';
        break;
      case 1:
        label = 'Upload-Length';
        if (r.chance(0.2)) delete headers['upload-length'];
        else headers['upload-length'] = r.pick(['-1', 'abc', '1e3', '0x10', '9'.repeat(16), '1.5', '', ' ', '1,2', '99999999999999', `${2 ** 53}`]);
        break;
      case 2:
        label = 'Upload-Length over the maximum';
        headers['upload-length'] = String(r.pick([1024 * 1024 + 1, 10 * 1024 * 1024, 999_999_999_999]));
        break;
      case 3: {
        label = 'Upload-Metadata syntax';
        const raw = r.pick([
          `share_id ${meta.share_id} path ${meta.path}`,
          `share_id ${meta.share_id},path not*base64!`,
          `share_id ${meta.share_id},path ${meta.path},path ${meta.path}`,
          `share_id ${meta.share_id},path ${meta.path} extra`,
          `share_id ${meta.share_id},,path`,
          `share_id ${meta.share_id},${hostileString(r).replace(/[^\x21-\x7e]/g, '?')} ${'%%%'}`,
        ]);
        headers['upload-metadata'] = raw;
        break;
      }
      case 4:
        label = 'Upload-Metadata values';
        r.pick([
          () => delete meta.share_id,
          () => delete meta.path,
          () => (meta.path = ''),
          () => (meta.share_id = b64(hostileString(r))),
          () => (meta.share_id = b64(`fz-missing-${r.int(1e6)}`)),
          () => (meta.mtime = b64(r.pick(['-1', 'abc', '1e20', '9'.repeat(20)]))),
          () => (meta.mkdir_parents = b64(r.pick(['maybe', '2', 'yes']))),
        ])();
        break;
      case 5:
        label = 'credentials';
        Object.assign(headers, r.chance(0.3) ? { authorization: '' } : badBasic(r, 'x', SHARE_PASSWORD, true).headers);
        if (headers.authorization === '') delete headers.authorization;
        break;
      case 6:
        label = 'share of the wrong scope';
        meta.share_id = b64(r.pick([s.read, s.file]));
        break;
      case 7:
        // the share whose directory the owner may not write to: hostile paths stay refused
        label = 'hostile path, read-only dir';
        meta.share_id = b64(s.write);
        meta.path = b64(hostilePath(r) || '..');
        delete headers.authorization;
        break;
      default:
        label = 'creation-with-upload content type';
        headers['content-type'] = r.pick(['application/octet-stream', 'text/plain', 'application/json', 'application/offset+octet-streamx']);
        return finish({ kind: `tus: create ${label}`, route: rt.key, method: 'POST', url: TUS, headers, payload: 'chunk' });
    }
    return finish({ kind: `tus: create ${label}`, route: rt.key, method: 'POST', url: TUS, headers });
    function finish(req: Req): Req {
      if (!('upload-metadata' in headers))
        headers['upload-metadata'] = Object.entries(meta)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${k} ${v}`)
          .join(',');
      return req;
    }
  }
  const upload = w.tusUpload;
  if (rt.method === 'GET') {
    // HEAD of an upload (GET answers it too): unknown ids, wrong credentials
    const method = r.chance(0.7) ? 'HEAD' : 'GET';
    if (r.chance(0.5))
      return {
        kind: 'tus: unknown upload',
        route: rt.key,
        method,
        url: `${TUS}/${encodeValue(r, r.chance(0.5) ? hostilePath(r) : `fz${r.int(1e9)}`)}`,
        headers: { ...pw, 'tus-resumable': '1.0.0' },
      };
    const bad = badBasic(r, 'x', SHARE_PASSWORD, true);
    return { kind: `tus: head ${bad.label}`, route: rt.key, method, url: upload, headers: { ...bad.headers, 'tus-resumable': '1.0.0' } };
  }
  if (rt.method === 'PATCH') {
    const headers: Record<string, string> = { ...pw, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' };
    let payload: string | Buffer = 'abcd';
    let url = upload;
    let label: string;
    switch (r.int(7)) {
      case 0:
        label = 'Upload-Offset mismatch';
        headers['upload-offset'] = String(r.range(1, 40));
        break;
      case 1:
        label = 'Upload-Offset malformed';
        if (r.chance(0.2)) delete headers['upload-offset'];
        else headers['upload-offset'] = r.pick(['-1', 'abc', '1e3', '0x0', '9'.repeat(16), '', ' ', '0,0', '0.0', '+0']);
        break;
      case 2:
        label = 'content type';
        headers['content-type'] = r.pick([
          'application/octet-stream',
          'text/plain',
          'application/json',
          'application/offset+octet-streamx',
          'multipart/form-data; boundary=x',
        ]);
        if (r.chance(0.2)) delete headers['content-type'];
        break;
      case 3:
        label = 'Tus-Resumable';
        if (r.chance(0.3)) delete headers['tus-resumable'];
        else headers['tus-resumable'] = r.pick(['0.2.2', '1.0', '', '2.0.0']);
        break;
      case 4: {
        const bad = badBasic(r, 'x', SHARE_PASSWORD, true);
        label = `credentials ${bad.label}`;
        Object.assign(headers, bad.headers);
        break;
      }
      case 5:
        label = 'chunk beyond Upload-Length';
        payload = Buffer.alloc(r.pick([17, 100, 70_000]), 1);
        break;
      default:
        label = 'unknown upload';
        url = `${TUS}/${encodeValue(r, r.chance(0.5) ? hostilePath(r) : `fz${r.int(1e9)}`)}`;
    }
    return { kind: `tus: patch ${label}`, route: rt.key, method: 'PATCH', url, headers, payload };
  }
  if (rt.method === 'DELETE') {
    // termination (an addition): the world's upload is never terminated: a wrong version, bad credentials or an unknown id
    const which = r.int(3);
    if (which === 0)
      return { kind: 'tus: delete Tus-Resumable', route: rt.key, method: 'DELETE', url: upload, headers: { ...pw, 'tus-resumable': r.pick(['0.2.2', '']) } };
    if (which === 1) {
      const bad = badBasic(r, 'x', SHARE_PASSWORD, true);
      return { kind: `tus: delete ${bad.label}`, route: rt.key, method: 'DELETE', url: upload, headers: { ...bad.headers, 'tus-resumable': '1.0.0' } };
    }
    return {
      kind: 'tus: delete unknown upload',
      route: rt.key,
      method: 'DELETE',
      url: `${TUS}/${encodeValue(r, r.chance(0.5) ? hostilePath(r) : `fz${r.int(1e9)}`)}`,
      headers: { ...pw, 'tus-resumable': '1.0.0' },
    };
  }
  return undefined;
}

const USER_TUS = '/api/v2/user/chunked-uploads';

/** The user-side TUS endpoint: malformed headers and metadata, paths the user may not write, unknown uploads, bad tokens. */
export function userTus(r: Rng, w: World, rt: RouteInfo): Req | undefined {
  const bearer = { authorization: `Bearer ${w.userToken}` };
  const badToken = (): Record<string, string> =>
    r.pick<Record<string, string>>([{ authorization: `Bearer ${w.revokedUserToken}` }, { authorization: 'Bearer x.y.z' }, {}]);
  const unknown = () => `${USER_TUS}/${encodeValue(r, r.chance(0.5) ? hostilePath(r) : `fz${r.int(1e9)}`)}`;
  if (rt.method === 'OPTIONS') return { kind: 'user tus: discovery', route: rt.key, method: 'OPTIONS', url: USER_TUS, headers: {}, status: 200 };
  if (rt.method === 'POST') {
    const headers: Record<string, string> = { ...bearer, 'tus-resumable': '1.0.0', 'upload-length': String(r.range(1, 100)) };
    let metadata = `path ${b64(`/fz-user-tus-${r.int(1e6)}.bin`)}`;
    let payload: string | undefined;
    let label: string;
    switch (r.int(7)) {
      case 0:
        label = 'Tus-Resumable';
        headers['tus-resumable'] = r.pick(['0.2.2', '1.0', '', '2.0.0']);
        break;
      case 1:
        label = 'Upload-Length';
        headers['upload-length'] = r.pick(['-1', 'abc', '1e3', '9'.repeat(16), '', '1.5']);
        break;
      case 2:
        label = 'Upload-Metadata';
        metadata = r.pick([
          'path not*base64!',
          `path ${b64('/a')},path ${b64('/b')}`,
          '',
          `mtime ${b64('noon')},${metadata}`,
          `mkdir_parents ${b64('maybe')},${metadata}`,
          `path ${b64('/')}`,
        ]);
        break;
      case 3:
        // /ro is read-only for fz-user (a hostile path could normalise to a writable one: the share generator covers those)
        label = 'read-only path';
        metadata = `path ${b64(r.pick([`/ro/${missing(r)}`, '/ro', `/ro/${missing(r)}/x.bin`]))}`;
        break;
      case 4:
        label = 'credentials';
        delete headers.authorization;
        Object.assign(headers, badToken());
        break;
      case 5:
        label = 'missing parent';
        metadata = `path ${b64(`/${missing(r)}/x.bin`)}`;
        break;
      default:
        label = 'content type';
        headers['content-type'] = r.pick(['application/octet-stream', 'text/plain', 'application/json']);
        payload = 'chunk';
    }
    headers['upload-metadata'] = metadata;
    return { kind: `user tus: create ${label}`, route: rt.key, method: 'POST', url: USER_TUS, headers, payload };
  }
  const upload = w.userTusUpload;
  if (rt.method === 'GET') {
    const method = r.chance(0.7) ? 'HEAD' : 'GET';
    if (r.chance(0.5)) return { kind: 'user tus: unknown upload', route: rt.key, method, url: unknown(), headers: { ...bearer, 'tus-resumable': '1.0.0' } };
    return { kind: 'user tus: head credentials', route: rt.key, method, url: upload, headers: { ...badToken(), 'tus-resumable': '1.0.0' } };
  }
  if (rt.method === 'PATCH') {
    const headers: Record<string, string> = { ...bearer, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' };
    let payload: string | Buffer = 'abcd';
    let url = upload;
    let label: string;
    switch (r.int(6)) {
      case 0:
        label = 'Upload-Offset mismatch';
        headers['upload-offset'] = String(r.range(1, 40));
        break;
      case 1:
        label = 'Upload-Offset malformed';
        headers['upload-offset'] = r.pick(['-1', 'abc', '1e3', '', '0,0', '+0']);
        break;
      case 2:
        label = 'content type';
        headers['content-type'] = r.pick(['application/octet-stream', 'text/plain', 'multipart/form-data; boundary=x']);
        break;
      case 3:
        label = 'credentials';
        delete headers.authorization;
        Object.assign(headers, badToken());
        break;
      case 4:
        label = 'chunk beyond Upload-Length';
        payload = Buffer.alloc(r.pick([17, 100, 70_000]), 1);
        break;
      default:
        label = 'unknown upload';
        url = unknown();
    }
    return { kind: `user tus: patch ${label}`, route: rt.key, method: 'PATCH', url, headers, payload };
  }
  if (rt.method === 'DELETE') {
    // the world's upload is never terminated: a wrong version, bad credentials or an unknown id
    const which = r.int(3);
    if (which === 0)
      return {
        kind: 'user tus: delete Tus-Resumable',
        route: rt.key,
        method: 'DELETE',
        url: upload,
        headers: { ...bearer, 'tus-resumable': r.pick(['0.2.2', '']) },
      };
    if (which === 1)
      return { kind: 'user tus: delete credentials', route: rt.key, method: 'DELETE', url: upload, headers: { ...badToken(), 'tus-resumable': '1.0.0' } };
    return { kind: 'user tus: delete unknown upload', route: rt.key, method: 'DELETE', url: unknown(), headers: { ...bearer, 'tus-resumable': '1.0.0' } };
  }
  return undefined;
}

/** A query value percent-encoded as valid UTF-8 without NUL (both are refused at the edge with a 400): routes that answer any other query alike. */
const wellFormed = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udfff\u0000]/g, '\ufffd'));

/** /healthz answers 200 "ok" whatever else the request holds. */
/**
 * DELETE /api/v2/shares/{id}/web-session only clears the share's cookie (a
 * sign-out is idempotent and needs no credential): 200 for any share id of
 * the right form, whatever the headers; nothing stored changes.
 */
export function shareSessionEnd(r: Rng, w: World, rt: RouteInfo): Req {
  const headers: Record<string, string> = {};
  if (r.chance(0.5)) headers.authorization = r.pick([basicPw('wrong').authorization, 'Basic', 'Bearer x']);
  if (r.chance(0.3))
    headers.cookie = `ferry_share_${w.shares.writePw}=${hostileString(r)
      .replace(/[^\x21-\x7e]|;/g, '_')
      .slice(0, 200)}`;
  const id = r.pick([w.shares.writePw, w.shares.read, missing(r)]);
  return { kind: 'share: session end', route: rt.key, method: 'DELETE', url: rt.path.replace('{id}', id), headers, status: 200 };
}

export function health(r: Rng, _w: World, rt: RouteInfo): Req {
  const headers: Record<string, string> = {};
  if (r.chance(0.5)) headers.authorization = r.pick(['Bearer x', 'Basic !!!', 'Bearer ' + 'a.'.repeat(100)]);
  if (r.chance(0.3)) headers['x-service-api-key'] = 'junk';
  return {
    kind: 'health',
    route: rt.key,
    method: 'GET',
    url: rt.path + (r.chance(0.5) ? `?${wellFormed(hostileString(r).slice(0, 2000))}=${wellFormed(hostilePath(r))}` : ''),
    headers,
    status: 200,
  };
}
