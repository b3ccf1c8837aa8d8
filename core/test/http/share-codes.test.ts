import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { addUser, fileApp, PASSWORD } from '../helpers/user-files.js';
import { ShareCodesService } from '../../src/shares/share-codes.service.js';
import { DefenderService, defenderHostId } from '../../src/security/defender.service.js';

// a real SMTP server in this process (no STARTTLS, no AUTH); messages parsed with mailparser
const mails: ParsedMail[] = [];
const smtp = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  authOptional: true,
  logger: false,
  onData(stream, _session, cb) {
    simpleParser(stream).then(
      (m) => {
        mails.push(m);
        cb();
      },
      (err: Error) => cb(err),
    );
  },
});
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
const smtpPort = (smtp.server.address() as AddressInfo).port;

const ta = await fileApp({
  config: {
    httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] },
    smtp: { host: '127.0.0.1', port: smtpPort, from: 'Ferry <ferry@example.test>', encryption: 0 },
    share_codes: { code_lifetime: 10, max_codes: 3, max_attempts: 3 },
    defender: { enabled: true, threshold: 1000, score_valid: 2 },
  },
});
t.teardown(() => ta.close());
const codes = ta.app.container.resolve(ShareCodesService);
const defender = ta.app.container.resolve(DefenderService);

const home = await addUser(ta, { username: 'owner' });
mkdirSync(path.join(home, 'pub'), { recursive: true });
writeFileSync(path.join(home, 'pub', 'a.txt'), 'alpha');
const token = await ta.userToken('owner', PASSWORD);
const adminToken = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload);
const basic = (username: string, password: string) => ({ username, password });

const created = await ta.inject('POST', '/api/v2/user/shares', {
  token,
  payload: { name: 'for partners', scope: 1, paths: ['/pub'], emails: ['Ext@Example.com', 'other@example.com'] },
});
t.equal(created.statusCode, 201, created.payload);
const id = String(created.headers['x-object-id']);
const url = `/api/v2/shares/${id}`;

/** Asks for a code for `email` and returns what was mailed (null when nothing was). */
async function askCode(email: string): Promise<string | null> {
  const before = mails.length;
  const r = await ta.inject('POST', `${url}/codes`, { payload: { email } });
  t.equal(r.statusCode, 200, r.payload);
  t.same(json(r), { message: 'if the address is allowed for this share, a one-time code has been mailed to it' });
  await codes.idle();
  if (mails.length === before) return null;
  const m = mails[mails.length - 1]!;
  return /Code: ([A-Z0-9]+)/.exec(m.text ?? '')![1]!;
}

await t.test('the share shows its addresses in lower case; bad addresses are refused naming the field', async (t) => {
  const r = await ta.inject('GET', `/api/v2/user/shares/${id}`, { token });
  t.same(json(r).emails, ['ext@example.com', 'other@example.com']);
  const bad = await ta.inject('POST', '/api/v2/user/shares', { token, payload: { name: 'x', scope: 1, paths: ['/pub'], emails: ['not-an-address'] } });
  t.equal(bad.statusCode, 400);
  t.match(json(bad).message, /"emails\[0\]" must be a valid email/);
});

await t.test('without credentials the share asks for a password or a code', async (t) => {
  const r = await ta.inject('GET', `${url}/dirs`);
  t.equal(r.statusCode, 401);
  t.match(json(r).message, /one-time code/);
  t.match(r.headers['www-authenticate'], /^Basic/);
});

await t.test('a code is mailed to an allowed address and works once, as basic auth', async (t) => {
  const code = await askCode('EXT@example.com');
  t.ok(code, 'a code was mailed');
  const m = mails[mails.length - 1]!;
  t.same(m.to && !Array.isArray(m.to) ? m.to.value.map((a) => a.address) : [], ['ext@example.com']);
  t.equal(m.from?.value[0]?.address, 'ferry@example.test');
  t.match(m.subject, /for partners/);
  const ok = await ta.inject('GET', `${url}/dirs`, { basic: basic('ext@example.com', code!) });
  t.equal(ok.statusCode, 200, ok.payload);
  t.same(
    json(ok).map((e: { name: string }) => e.name),
    ['a.txt'],
  );
  const again = await ta.inject('GET', `${url}/dirs`, { basic: basic('ext@example.com', code!) });
  t.equal(again.statusCode, 401, 'single use');
  t.match(json(again).message, /already used one-time code/);
  const stored = await ta.app.orm.em.fork().getConnection().execute('select code_hash from share_codes');
  t.notOk(
    stored.some((r: { code_hash: string }) => r.code_hash.includes(code!)),
    'codes are stored hashed',
  );
});

await t.test('an address the share does not list gets the same answer and no mail', async (t) => {
  t.equal(await askCode('stranger@example.com'), null);
});

await t.test('a code for one address does not work for another', async (t) => {
  const code = await askCode('other@example.com');
  t.equal((await ta.inject('GET', `${url}/dirs`, { basic: basic('ext@example.com', code!) })).statusCode, 401);
  t.equal((await ta.inject('GET', `${url}/dirs`, { basic: basic('other@example.com', code!) })).statusCode, 200);
});

await t.test('wrong codes: 401, scored by the defender, and max_attempts voids the live codes', async (t) => {
  await ta.inject('DELETE', `/api/v2/defender/hosts/${defenderHostId('127.0.0.1')}`, { token: adminToken });
  const code = await askCode('ext@example.com');
  for (let i = 0; i < 3; i++) {
    const r = await ta.inject('GET', `${url}/dirs`, { basic: basic('ext@example.com', 'WRONGCODE1') });
    t.equal(r.statusCode, 401);
  }
  await defender.idle();
  const h = await ta.inject('GET', `/api/v2/defender/hosts/${defenderHostId('127.0.0.1')}`, { token: adminToken });
  t.equal(json(h).score, 6, 'three wrong codes: 3 x score_valid');
  await ta.inject('DELETE', `/api/v2/defender/hosts/${defenderHostId('127.0.0.1')}`, { token: adminToken });
  t.equal(
    (await ta.inject('GET', `${url}/dirs`, { basic: basic('ext@example.com', code!) })).statusCode,
    401,
    'the right code is void after max_attempts wrong ones',
  );
});

await t.test('an expired code is refused', async (t) => {
  const code = await askCode('ext@example.com');
  await ta.app.orm.em
    .fork()
    .getConnection()
    .execute('update share_codes set expires_at = ? where used_at = 0', [Date.now() - 1000]);
  t.equal((await ta.inject('GET', `${url}/dirs`, { basic: basic('ext@example.com', code!) })).statusCode, 401);
});

await t.test('at most max_codes live codes per address: further requests mail nothing', async (t) => {
  const got = [];
  for (let i = 0; i < 4; i++) got.push(await askCode('other@example.com'));
  t.equal(got.filter(Boolean).length, 3, 'the codes before are expired: three, then nothing');
  t.equal(got[3], null);
});

await t.test('a code exchanged for a share token: several requests, TUS-style; void once the share changes', async (t) => {
  const code = await askCode('ext@example.com');
  const r = await ta.inject('POST', `${url}/token`, { basic: basic('ext@example.com', code!) });
  t.equal(r.statusCode, 200, r.payload);
  const { access_token, expires_at } = json(r);
  t.ok(Date.parse(expires_at) > Date.now());
  for (let i = 0; i < 3; i++) {
    const d = await ta.inject('GET', `${url}/files?path=a.txt`, { headers: { authorization: `Bearer ${access_token}` } });
    t.equal(d.statusCode, 200);
    t.equal(d.payload, 'alpha');
  }
  t.equal((await ta.inject('POST', `${url}/token`, { basic: basic('ext@example.com', code!) })).statusCode, 401, 'the code was spent by the exchange');
  const bearerForToken = await ta.inject('POST', `${url}/token`, { headers: { authorization: `Bearer ${access_token}` } });
  t.equal(bearerForToken.statusCode, 400);
  t.equal((await ta.inject('GET', `${url}/dirs`, { headers: { authorization: 'Bearer forged.token.value' } })).statusCode, 401);
  await new Promise((r) => setTimeout(r, 1100));
  const u = await ta.inject('PUT', `/api/v2/user/shares/${id}`, {
    token,
    payload: { name: 'for partners', scope: 1, paths: ['/pub'], emails: ['other@example.com'] },
  });
  t.equal(u.statusCode, 200, u.payload);
  const after = await ta.inject('GET', `${url}/dirs`, { headers: { authorization: `Bearer ${access_token}` } });
  t.equal(after.statusCode, 401, 'the address was removed: its token is void');
});

await t.test('a TUS upload to an email-restricted share with a share token on every request', async (t) => {
  mkdirSync(path.join(home, 'drop'), { recursive: true });
  const w = await ta.inject('POST', '/api/v2/user/shares', { token, payload: { name: 'drop', scope: 2, paths: ['/drop'], emails: ['ext@example.com'] } });
  t.equal(w.statusCode, 201, w.payload);
  const dropId = String(w.headers['x-object-id']);
  const before = mails.length;
  t.equal((await ta.inject('POST', `/api/v2/shares/${dropId}/codes`, { payload: { email: 'ext@example.com' } })).statusCode, 200);
  await codes.idle();
  t.equal(mails.length, before + 1);
  const code = /Code: ([A-Z0-9]+)/.exec(mails[mails.length - 1]!.text ?? '')![1]!;
  const tok = json(await ta.inject('POST', `/api/v2/shares/${dropId}/token`, { basic: basic('ext@example.com', code) })).access_token as string;
  const auth = `Bearer ${tok}`;
  const meta = `share_id ${Buffer.from(dropId).toString('base64')},path ${Buffer.from('up.bin').toString('base64')}`;
  const body = Buffer.alloc(3000, 5);
  const c = await ta.server.inject({
    method: 'POST',
    url: '/api/v2/shares-chunked-uploads',
    headers: { authorization: auth, 'tus-resumable': '1.0.0', 'upload-length': String(body.length), 'upload-metadata': meta },
  });
  t.equal(c.statusCode, 201, c.payload);
  for (let off = 0; off < body.length; off += 1000) {
    const r = await ta.server.inject({
      method: 'PATCH',
      url: String(c.headers.location),
      headers: { authorization: auth, 'tus-resumable': '1.0.0', 'upload-offset': String(off), 'content-type': 'application/offset+octet-stream' },
      payload: body.subarray(off, off + 1000),
    });
    t.equal(r.statusCode, 204, r.payload);
  }
  t.same(readFileSync(path.join(home, 'drop', 'up.bin')), body);
  const noCreds = await ta.server.inject({
    method: 'POST',
    url: '/api/v2/shares-chunked-uploads',
    headers: { 'tus-resumable': '1.0.0', 'upload-length': '1', 'upload-metadata': meta },
  });
  t.equal(noCreds.statusCode, 401, 'without the token');
});

await t.test('refusals of the code request', async (t) => {
  const unknown = await ta.inject('POST', '/api/v2/shares/nope/codes', { payload: { email: 'ext@example.com' } });
  t.equal(unknown.statusCode, 404);
  t.same(Object.keys(json(unknown)).sort(), ['error', 'message']);
  const bad = await ta.inject('POST', `${url}/codes`, { payload: { email: 'nope' } });
  t.equal(bad.statusCode, 400);
  t.match(json(bad).message, /"email" must be a valid email/);
  const missing = await ta.inject('POST', `${url}/codes`, { payload: {} });
  t.equal(missing.statusCode, 400);
  t.match(json(missing).message, /"email" is required/);
  const plain = await ta.inject('POST', '/api/v2/user/shares', { token, payload: { name: 'plain', scope: 1, paths: ['/pub'], password: 'pw-123' } });
  const plainId = String(plain.headers['x-object-id']);
  const notRestricted = await ta.inject('POST', `/api/v2/shares/${plainId}/codes`, { payload: { email: 'ext@example.com' } });
  t.equal(notRestricted.statusCode, 400);
  t.match(json(notRestricted).message, /not email-restricted/);
  // the share password also gets a token
  const pwTok = await ta.inject('POST', `/api/v2/shares/${plainId}/token`, { basic: basic('', 'pw-123') });
  t.equal(pwTok.statusCode, 200, pwTok.payload);
  t.equal((await ta.inject('GET', `/api/v2/shares/${plainId}/dirs`, { headers: { authorization: `Bearer ${json(pwTok).access_token}` } })).statusCode, 200);
  t.equal(
    (await ta.inject('GET', `${url}/dirs`, { headers: { authorization: `Bearer ${json(pwTok).access_token}` } })).statusCode,
    401,
    'a token of another share',
  );
  const expiredId = String(
    (await ta.inject('POST', '/api/v2/user/shares', { token, payload: { name: 'old', scope: 1, paths: ['/pub'], emails: ['ext@example.com'] } })).headers[
      'x-object-id'
    ],
  );
  await ta.app.orm.em
    .fork()
    .getConnection()
    .execute('update shares set expires_at = ? where share_id = ?', [Date.now() - 1000, expiredId]);
  const expired = await ta.inject('POST', `/api/v2/shares/${expiredId}/codes`, { payload: { email: 'ext@example.com' } });
  t.equal(expired.statusCode, 403);
  t.match(json(expired).message, /expired/);
});

await t.test('without a mail server the code request is refused with 403', async (t) => {
  const nomail = await fileApp();
  t.teardown(() => nomail.close());
  const h = await addUser(nomail, { username: 'o2' });
  mkdirSync(path.join(h, 'pub'), { recursive: true });
  const tok = await nomail.userToken('o2', PASSWORD);
  const s = await nomail.inject('POST', '/api/v2/user/shares', { token: tok, payload: { name: 's', scope: 1, paths: ['/pub'], emails: ['ext@example.com'] } });
  const r = await nomail.inject('POST', `/api/v2/shares/${s.headers['x-object-id']}/codes`, { payload: { email: 'ext@example.com' } });
  t.equal(r.statusCode, 403);
  t.match(json(r).message, /no mail server is configured/);
});

await t.test('backups keep the addresses', async (t) => {
  const d = await ta.inject('GET', '/api/v2/dumpdata?output-data=1', { token: adminToken });
  t.equal(d.statusCode, 200);
  const dump = json(d);
  const mine = dump.shares.find((s: { id: string }) => s.id === id);
  t.same(mine.emails, ['other@example.com']);
  mine.emails = ['restored@example.com'];
  const l = await ta.inject('POST', '/api/v2/loaddata?mode=0', { token: adminToken, payload: { shares: [mine] } });
  t.equal(l.statusCode, 200, l.payload);
  t.same(json(await ta.inject('GET', `/api/v2/user/shares/${id}`, { token })).emails, ['restored@example.com']);
  t.ok(await askCode('restored@example.com'), 'the restored address gets codes');
});

await t.test('stop the SMTP server', async () => {
  await new Promise<void>((r) => smtp.close(() => r()));
});
