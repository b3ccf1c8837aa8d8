import t from 'tap';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { addUser, fileApp, PASSWORD } from '../helpers/user-files.js';
import { Share, ShareCode } from '../../src/data/entities/index.js';
import { hashCode } from '../../src/shares/share-codes.service.js';
import { TokenService } from '../../src/auth/token.service.js';

// Share web sessions (docs/api-compatibility.md "Share web sessions"): the cookie ferry_share_<id> of the public share page
const ta = await fileApp({ config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] } } });
t.teardown(() => ta.close());
const home = await addUser(ta, { username: 'owner' });
mkdirSync(path.join(home, 'pub', 'sub'), { recursive: true });
writeFileSync(path.join(home, 'pub', 'a.txt'), 'alpha');
mkdirSync(path.join(home, 'drop'));
const token = await ta.userToken('owner', PASSWORD);

const mkShare = async (payload: Record<string, unknown>) => {
  const r = await ta.inject('POST', '/api/v2/user/shares', { token, payload });
  if (r.statusCode !== 201) throw new Error(`add share: ${r.statusCode} ${r.payload}`);
  return String(r.headers['x-object-id']);
};
const readId = await mkShare({ name: 'read', description: 'for you', scope: 1, paths: ['/pub'], password: 'share-pw-1' });
const writeId = await mkShare({ name: 'write', scope: 2, paths: ['/drop'], password: 'share-pw-2' });
const openId = await mkShare({ name: 'open', scope: 1, paths: ['/pub'] });
const mailId = await mkShare({ name: 'mail', scope: 1, paths: ['/pub'], emails: ['ann@example.test'] });

const json = (r: { payload: string }) => JSON.parse(r.payload) as Record<string, unknown>;
const ws = (id: string) => `/api/v2/shares/${id}/web-session`;
const setCookie = (r: { headers: Record<string, unknown> }) => {
  const v = r.headers['set-cookie'];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).map(String);
};

/** Opens a share web session: the cookie header to send back and the CSRF token. */
async function open(id: string, payload: Record<string, unknown>): Promise<{ cookie: string; csrf: string }> {
  const r = await ta.inject('POST', ws(id), { payload });
  if (r.statusCode !== 200) throw new Error(`web-session: ${r.statusCode} ${r.payload}`);
  const cookie = setCookie(r)[0]!.split(';')[0]!;
  return { cookie, csrf: String(json(r).csrf_token) };
}
const withCookie = (cookie: string, extra: Record<string, string> = {}) => ({ headers: { cookie, ...extra } });

t.test('a protected share without a session: 401 telling what it asks for', async (t) => {
  let r = await ta.inject('GET', ws(readId));
  t.equal(r.statusCode, 401, r.payload);
  t.match(json(r), { error: 'Unauthorized', password_required: true, email_codes: false });
  r = await ta.inject('GET', ws(mailId));
  t.match(json(r), { password_required: false, email_codes: true });
  r = await ta.inject('GET', ws('no-such-share'));
  t.equal(r.statusCode, 404);
  r = await ta.inject('GET', `/api/v2/shares/${readId}/dirs`);
  t.equal(r.statusCode, 401, 'the share routes still ask for credentials');
});

t.test('wrong password: 401; right password: the cookie, HttpOnly, SameSite=Strict, for this share only', async (t) => {
  let r = await ta.inject('POST', ws(readId), { payload: { password: 'wrong' } });
  t.equal(r.statusCode, 401, r.payload);
  t.match(json(r), { password_required: true });
  t.same(setCookie(r), [], 'no cookie for a wrong password');
  r = await ta.inject('POST', ws(readId), { payload: 'password=share-pw-1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.equal(r.statusCode, 415, 'JSON only: a cross-site form cannot open a session');
  r = await ta.inject('POST', ws(readId), { payload: { password: 'share-pw-1' } });
  t.equal(r.statusCode, 200, r.payload);
  const body = json(r);
  t.match(body, {
    share: { id: readId, name: 'read', description: 'for you', scope: 1, expires_at: 0, max_tokens: 0, used_tokens: 0, protected: true },
    csrf_token: /^[A-Za-z0-9_-]{32}$/,
    expires_at: /^\d{4}-/,
  });
  t.notOk('paths' in (body.share as object), "the owner's paths are not told");
  const [c] = setCookie(r);
  t.match(c, new RegExp(`^ferry_share_${readId}=[A-Za-z0-9_.-]+; Max-Age=\\d+; Path=/api/v2/; HttpOnly; SameSite=Strict$`));
  const cookie = c!.split(';')[0]!;

  r = await ta.inject('GET', `/api/v2/shares/${readId}/dirs`, withCookie(cookie));
  t.equal(r.statusCode, 200, r.payload);
  t.same((JSON.parse(r.payload) as { name: string }[]).map((e) => e.name).sort(), ['a.txt', 'sub']);
  r = await ta.inject('GET', `/api/v2/shares/${readId}/files?path=a.txt`, withCookie(cookie));
  t.equal(r.payload, 'alpha');
  r = await ta.inject('GET', `/api/v2/shares/${readId}`, withCookie(cookie));
  t.equal(r.statusCode, 200);
  t.equal(r.headers['content-type'], 'application/zip');

  // scope: the cookie of one share opens no other, under its own name or another's
  r = await ta.inject('GET', `/api/v2/shares/${writeId}/dirs`, withCookie(cookie));
  t.equal(r.statusCode, 401, "another share's routes ignore this share's cookie");
  const value = cookie.split('=')[1]!;
  r = await ta.inject('GET', ws(writeId), withCookie(`ferry_share_${writeId}=${value}`));
  t.equal(r.statusCode, 401, 'a token of one share under the name of another is refused');
  t.match(setCookie(r)[0], new RegExp(`^ferry_share_${writeId}=; Max-Age=0`), 'and its cookie cleared');

  // GET renews the session: same CSRF token, a new cookie
  r = await ta.inject('GET', ws(readId), withCookie(cookie));
  t.equal(r.statusCode, 200);
  t.equal(json(r).csrf_token, body.csrf_token);
  t.match(setCookie(r)[0], new RegExp(`^ferry_share_${readId}=`));

  // an Authorization header wins over the cookie
  r = await ta.inject('GET', `/api/v2/shares/${readId}/dirs`, { headers: { cookie, authorization: 'Basic ' + Buffer.from('x:wrong').toString('base64') } });
  t.equal(r.statusCode, 401);

  r = await ta.inject('DELETE', ws(readId));
  t.equal(r.statusCode, 200);
  t.match(setCookie(r)[0], new RegExp(`^ferry_share_${readId}=; Max-Age=0; Path=/api/v2/; HttpOnly; SameSite=Strict`));
});

t.test('CSRF: a state-changing request the cookie authenticates needs the X-CSRF-Token', async (t) => {
  const { cookie, csrf } = await open(writeId, { password: 'share-pw-2' });
  const upload = (headers: Record<string, string>) =>
    ta.inject('POST', `/api/v2/shares/${writeId}/files/up.txt`, {
      payload: 'uploaded',
      headers: { cookie, 'content-type': 'application/octet-stream', ...headers },
    });
  let r = await upload({});
  t.equal(r.statusCode, 403, r.payload);
  t.match(json(r).message, /X-CSRF-Token/);
  r = await upload({ 'x-csrf-token': 'not-the-token' });
  t.equal(r.statusCode, 403);
  t.notOk(existsSync(path.join(home, 'drop', 'up.txt')));
  r = await upload({ 'x-csrf-token': csrf });
  t.equal(r.statusCode, 201, r.payload);
  t.equal(readFileSync(path.join(home, 'drop', 'up.txt'), 'utf8'), 'uploaded');
  r = await ta.inject('POST', `/api/v2/shares/${writeId}/actions/mkdir?path=made`, { headers: { cookie } });
  t.equal(r.statusCode, 403, 'mkdir without the header');
  r = await ta.inject('POST', `/api/v2/shares/${writeId}/actions/mkdir?path=made`, { headers: { cookie, 'x-csrf-token': csrf } });
  t.equal(r.statusCode, 201, r.payload);

  // TUS: the cookie works there too (Path=/api/v2/), with the same CSRF rule
  const TUS = { 'tus-resumable': '1.0.0' };
  const meta = `share_id ${Buffer.from(writeId).toString('base64')},path ${Buffer.from('tus.txt').toString('base64')}`;
  r = await ta.inject('POST', '/api/v2/shares-chunked-uploads', { headers: { ...TUS, cookie, 'upload-length': '5', 'upload-metadata': meta } });
  t.equal(r.statusCode, 403, 'TUS create without the header');
  r = await ta.inject('POST', '/api/v2/shares-chunked-uploads', {
    headers: { ...TUS, cookie, 'x-csrf-token': csrf, 'upload-length': '5', 'upload-metadata': meta },
  });
  t.equal(r.statusCode, 201, r.payload);
  const loc = String(r.headers.location);
  r = await ta.inject('HEAD', loc, { headers: { ...TUS, cookie } });
  t.equal(r.statusCode, 200, 'HEAD changes nothing: no header needed');
  const chunk = { ...TUS, cookie, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' };
  r = await ta.inject('PATCH', loc, { payload: 'hello', headers: chunk });
  t.equal(r.statusCode, 403, 'TUS PATCH without the header');
  r = await ta.inject('PATCH', loc, { payload: 'hello', headers: { ...chunk, 'x-csrf-token': csrf } });
  t.equal(r.statusCode, 204, r.payload);
  t.equal(readFileSync(path.join(home, 'drop', 'tus.txt'), 'utf8'), 'hello');

  r = await ta.inject('GET', `/api/v2/shares/${writeId}/dirs`, withCookie(cookie));
  t.equal(r.statusCode, 403, 'a write-only share lists nothing, cookie or not');
});

t.test('uses and expiry: the session shows them, the routes refuse', async (t) => {
  const id = await mkShare({ name: 'once', scope: 1, paths: ['/pub'], password: 'share-pw-3', max_tokens: 1 });
  const { cookie } = await open(id, { password: 'share-pw-3' });
  let r = await ta.inject('GET', `/api/v2/shares/${id}/files?path=a.txt`, withCookie(cookie));
  t.equal(r.statusCode, 200);
  r = await ta.inject('GET', `/api/v2/shares/${id}/files?path=a.txt`, withCookie(cookie));
  t.equal(r.statusCode, 403, 'no use left');
  r = await ta.inject('GET', ws(id), withCookie(cookie));
  t.equal(r.statusCode, 200, 'the page still opens');
  t.match(json(r), { share: { max_tokens: 1, used_tokens: 1 } });

  await ta.app.orm.em.fork().nativeUpdate(Share, { share_id: id }, { expires_at: Date.now() - 1000 });
  r = await ta.inject('GET', ws(id), withCookie(cookie));
  t.equal(r.statusCode, 403, r.payload);
  t.match(json(r), { error: 'Forbidden', reason: 'expired' });
  r = await ta.inject('POST', ws(id), { payload: { password: 'share-pw-3' } });
  t.match(json(r), { reason: 'expired' });

  const limited = await mkShare({ name: 'lan', scope: 1, paths: ['/pub'], password: 'share-pw-4', allow_from: ['10.9.8.0/24'] });
  r = await ta.inject('POST', ws(limited), { payload: { password: 'share-pw-4' } });
  t.equal(r.statusCode, 403);
  t.match(json(r), { reason: 'address' });
});

t.test('an ended session: an expired token, or a share changed since', async (t) => {
  const key = await ta.app.container.resolve(TokenService).signingKeyObject();
  const past = Math.floor(Date.now() / 1000) - 3600;
  const stale = jwt.sign({ aud: 'share', sub: readId, email: '', csrf: 'x'.repeat(32), iat: past, exp: past + 60 }, key, { algorithm: 'HS256' });
  let r = await ta.inject('GET', ws(readId), withCookie(`ferry_share_${readId}=${stale}`));
  t.equal(r.statusCode, 401, 'an expired session');
  t.match(setCookie(r)[0], /Max-Age=0/);
  // a bearer share token (no CSRF token) is not a web session
  const bearer = (await ta.inject('POST', `/api/v2/shares/${readId}/token`, { basic: { username: 'x', password: 'share-pw-1' } })).result as {
    access_token: string;
  };
  r = await ta.inject('GET', `/api/v2/shares/${readId}/dirs`, withCookie(`ferry_share_${readId}=${bearer.access_token}`));
  t.equal(r.statusCode, 401, 'a bearer token in the cookie is refused');

  const id = await mkShare({ name: 'changing', scope: 1, paths: ['/pub'], password: 'share-pw-5' });
  const { cookie } = await open(id, { password: 'share-pw-5' });
  await ta.app.orm.em.fork().nativeUpdate(Share, { share_id: id }, { updated_at: Date.now() + 2000 });
  r = await ta.inject('GET', `/api/v2/shares/${id}/dirs`, withCookie(cookie));
  t.equal(r.statusCode, 401, 'a share changed after the session opened ends it');
});

t.test('email-restricted shares: an address and its one-time code (spent)', async (t) => {
  const em = ta.app.orm.em.fork();
  em.create(ShareCode, {
    share_id: mailId,
    email: 'ann@example.test',
    code_hash: hashCode(mailId, 'ann@example.test', 'ABCD-EFGH'),
    attempts: 0,
    created_at: Date.now(),
    expires_at: Date.now() + 600_000,
    used_at: 0,
  });
  await em.flush();
  let r = await ta.inject('POST', ws(mailId), { payload: { email: 'ann@example.test', code: 'WRONG-CODE' } });
  t.equal(r.statusCode, 401);
  t.match(json(r), { email_codes: true });
  const { cookie } = await open(mailId, { email: 'Ann@Example.test', code: 'abcd-efgh' });
  r = await ta.inject('GET', `/api/v2/shares/${mailId}/files?path=a.txt`, withCookie(cookie));
  t.equal(r.payload, 'alpha');
  r = await ta.inject('POST', ws(mailId), { payload: { email: 'ann@example.test', code: 'ABCD-EFGH' } });
  t.equal(r.statusCode, 401, 'the code was spent');
  r = await ta.inject('POST', ws(mailId), { payload: { password: 'x', code: 'y' } });
  t.equal(r.statusCode, 400, 'a password or an address and a code');
});

t.test('a share without a password: the page reads it without a session', async (t) => {
  let r = await ta.inject('GET', ws(openId));
  t.equal(r.statusCode, 200);
  t.match(json(r), { share: { name: 'open', protected: false } });
  t.notOk('csrf_token' in json(r));
  r = await ta.inject('POST', ws(openId), { payload: { password: 'anything' } });
  t.equal(r.statusCode, 400, r.payload);
});
