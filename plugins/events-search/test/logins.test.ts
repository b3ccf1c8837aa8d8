import t from 'tap';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { addUser, appWithSearch, search, settled } from './helpers.js';
import type { LogEventRow } from '../src/entities.js';

// Log events of the logins that are not the token routes': share passwords, one-time codes and
// share tokens on the public share routes and TUS uploads (protocol HTTPShare), refused API keys.

/** A log event as the search answers it (the members these tests read). */
type Logged = Omit<LogEventRow, 'id' | 'instance_id'>;

// a real SMTP server in this process for the one-time codes (the raw messages: the code is a plain text line)
const mails: string[] = [];
const smtp = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  authOptional: true,
  logger: false,
  onData(stream, _session, cb) {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      mails.push(Buffer.concat(chunks).toString('utf8'));
      cb();
    });
  },
});
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
t.teardown(() => new Promise<void>((r) => smtp.close(() => r())));

const ta = await appWithSearch(
  {},
  {
    config: {
      // upload_chunk_size: resumable (TUS) uploads on
      httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] },
      smtp: { host: '127.0.0.1', port: (smtp.server.address() as AddressInfo).port, from: 'Ferry <ferry@example.test>', encryption: 0 },
    },
  },
);
t.teardown(() => ta.close());
const admin = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload) as Record<string, unknown>;

await addUser(ta, admin, 'owner');
mkdirSync(path.join(ta.dataDir, 'homes', 'owner', 'pub'), { recursive: true });
mkdirSync(path.join(ta.dataDir, 'homes', 'owner', 'drop'), { recursive: true });
const owner = await ta.userToken('owner', 'owner-password');
const mkShare = async (payload: Record<string, unknown>) => {
  const r = await ta.inject('POST', '/api/v2/user/shares', { token: owner, payload });
  if (r.statusCode !== 201) throw new Error(`add share: ${r.statusCode} ${r.payload}`);
  return String(r.headers['x-object-id']);
};
const readId = await mkShare({ name: 'read', scope: 1, paths: ['/pub'], password: 'read-secret' });
const dropId = await mkShare({ name: 'drop', scope: 2, paths: ['/drop'], password: 'drop-secret' });
const mailId = await mkShare({ name: 'mail', scope: 1, paths: ['/pub'], emails: ['ext@example.com'] });
const openId = await mkShare({ name: 'open', scope: 1, paths: ['/pub'] });

/** The log events of `username` and protocol, oldest first, once everything published is written. */
async function logsOf(username: string, protocol: string): Promise<Logged[]> {
  await settled(ta);
  return search<Logged>(ta, admin, `/api/v2/events/logs?order=ASC&limit=1000&username=${encodeURIComponent(username)}&protocols=${protocol}`);
}

const basic = (password: string, username = 'anyone') => ({ username, password });

t.test('share password: no credentials 3, wrong password 1, right password 5, refused after the password 1', async (t) => {
  const dirs = `/api/v2/shares/${readId}/dirs`;
  t.equal((await ta.inject('GET', dirs)).statusCode, 401);
  t.equal((await ta.inject('GET', dirs, { basic: basic('wrong') })).statusCode, 401);
  t.equal((await ta.inject('GET', dirs, { basic: basic('read-secret') })).statusCode, 200);
  // a read share refuses an upload with the right password: a refused login
  t.equal((await ta.inject('POST', `/api/v2/shares/${readId}/files/x.txt`, { basic: basic('read-secret'), payload: 'x' })).statusCode, 403);
  const logs = await logsOf(readId, 'HTTPShare');
  t.same(
    logs.map((e) => e.event),
    [3, 1, 5, 1],
  );
  t.ok(
    logs.every((e) => e.protocol === 'HTTPShare' && e.ip === '127.0.0.1' && e.role === ''),
    'protocol, address and the role of the owner (none)',
  );
  t.match(logs[1]!.message, /invalid share password/);
  t.match(logs[2]!.message, /share password/);
  t.match(logs[3]!.message, /scope of this share/);
  // the events filter of the search finds them too
  t.equal((await search(ta, admin, `/api/v2/events/logs?username=${readId}&events=1,3`)).length, 3);
});

t.test('a share without a password records no login; credentials for a share that does not exist are 2', async (t) => {
  t.equal((await ta.inject('GET', `/api/v2/shares/${openId}/dirs`)).statusCode, 200);
  t.equal((await ta.inject('GET', `/api/v2/shares/${openId}/dirs`, { basic: basic('whatever') })).statusCode, 200);
  t.same(await logsOf(openId, 'HTTPShare'), []);
  const ghost = 'no-such-share-0123';
  t.equal((await ta.inject('GET', `/api/v2/shares/${ghost}/dirs`, { basic: basic('x') })).statusCode, 404);
  t.equal((await ta.inject('GET', `/api/v2/shares/${ghost}/dirs`)).statusCode, 404, 'no credentials, nothing tried');
  const logs = await logsOf(ghost, 'HTTPShare');
  t.same(
    logs.map((e) => [e.event, e.role]),
    [[2, '']],
  );
});

t.test('share tokens: issuing one is a login (5), using it is not, a bad one is a refused login (1)', async (t) => {
  const issued = await ta.inject('POST', `/api/v2/shares/${dropId}/token`, { basic: basic('drop-secret') });
  t.equal(issued.statusCode, 200, issued.payload);
  const bearer = String(json(issued).access_token);
  const meta = (o: Record<string, string>) =>
    Object.entries(o)
      .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
      .join(',');
  const tus = { 'tus-resumable': '1.0.0', 'upload-length': '3', 'upload-metadata': meta({ share_id: dropId, path: 'a.bin' }) };
  const created = await ta.inject('POST', '/api/v2/shares-chunked-uploads', { headers: { ...tus, authorization: `Bearer ${bearer}` } });
  t.equal(created.statusCode, 201, created.payload);
  const loc = String(created.headers.location);
  const chunk = { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' };
  const forged = await ta.inject('PATCH', loc, { payload: Buffer.from('abc'), headers: { ...chunk, authorization: 'Bearer not.a.token' } });
  t.equal(forged.statusCode, 401);
  const wrong = await ta.inject('PATCH', loc, { payload: Buffer.from('abc'), headers: chunk, basic: basic('nope') });
  t.equal(wrong.statusCode, 401);
  const done = await ta.inject('PATCH', loc, { payload: Buffer.from('abc'), headers: chunk, basic: basic('drop-secret') });
  t.equal(done.statusCode, 204, done.payload);
  const logs = await logsOf(dropId, 'HTTPShare');
  t.same(
    logs.map((e) => e.event),
    [5, 1, 1, 5],
    'token issued, forged token, wrong password, chunk with the password',
  );
  t.match(logs[1]!.message, /invalid or expired share token/);
});

t.test('one-time codes: the address is in the message of a login and of a refused code', async (t) => {
  t.equal((await ta.inject('POST', `/api/v2/shares/${mailId}/codes`, { payload: { email: 'ext@example.com' } })).statusCode, 200);
  // the code is mailed in the background
  const deadline = Date.now() + 20_000;
  while (!mails.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const code = /Code: ([A-Z0-9]+)/.exec(mails.at(-1) ?? '')?.[1];
  if (!code) throw new Error('no code mailed');
  const dirs = `/api/v2/shares/${mailId}/dirs`;
  t.equal((await ta.inject('GET', dirs, { basic: basic('WRONGCODE1', 'ext@example.com') })).statusCode, 401);
  t.equal((await ta.inject('GET', dirs, { basic: basic(code, 'ext@example.com') })).statusCode, 200);
  t.equal((await ta.inject('GET', dirs, { basic: basic(code, 'ext@example.com') })).statusCode, 401, 'a spent code');
  const logs = await logsOf(mailId, 'HTTPShare');
  t.same(
    logs.map((e) => e.event),
    [1, 5, 1],
  );
  t.match(logs[0]!.message, /one-time code.*user name "ext@example.com"/);
  t.match(logs[1]!.message, /one-time code of ext@example.com/);
});

t.test('API keys: a refused key is one log event (2 no such key or account, 1 refused account), a key let in none', async (t) => {
  const r = await ta.inject('POST', '/api/v2/admins', { token: admin, payload: { username: 'bot', password: 'bot-password-1', permissions: ['*'] } });
  t.equal(r.statusCode, 201, r.payload);
  await addUser(ta, admin, 'keyuser', { filters: { allow_api_key_auth: true } });
  const mk = async (payload: Record<string, unknown>) => {
    const c = await ta.inject('POST', '/api/v2/apikeys', { token: admin, payload });
    if (c.statusCode !== 201) throw new Error(`add key: ${c.statusCode} ${c.payload}`);
    return String(json(c).key);
  };
  const botKey = await mk({ name: 'bot', scope: 1, admin: 'bot' });
  const userKey = await mk({ name: 'user', scope: 2, user: 'keyuser' });
  const unbound = await mk({ name: 'any', scope: 1 });

  // /version takes admin and user keys: both strategies see the key, one event
  t.equal((await ta.inject('GET', '/api/v2/version', { apiKey: 'abcdefgh12.0123456789abcdef0123' })).statusCode, 401);
  // an admin whose API key login is not enabled
  t.equal((await ta.inject('GET', '/api/v2/users', { apiKey: botKey })).statusCode, 401);
  // an unbound key naming an admin that does not exist
  t.equal((await ta.inject('GET', '/api/v2/users', { apiKey: `${unbound}.ghost` })).statusCode, 401);
  // a user key let in, then refused once the user is disabled
  t.equal((await ta.inject('GET', '/api/v2/user/dirs', { apiKey: userKey })).statusCode, 200);
  const ku = json(await ta.inject('GET', '/api/v2/users/keyuser', { token: admin }));
  const disabled = await ta.inject('PUT', '/api/v2/users/keyuser', { token: admin, payload: { ...ku, status: 0, password: undefined } });
  t.equal(disabled.statusCode, 200, disabled.payload);
  t.equal((await ta.inject('GET', '/api/v2/version', { apiKey: userKey })).statusCode, 401);

  await settled(ta);
  const keyed = (await search<Logged>(ta, admin, '/api/v2/events/logs?order=ASC&limit=1000&protocols=HTTP')).filter((e) => /API key/.test(e.message));
  t.same(
    keyed.map((e) => [e.event, e.username, e.protocol, e.ip]),
    [
      [2, '', 'HTTP', '127.0.0.1'],
      [1, 'bot', 'HTTP', '127.0.0.1'],
      [2, 'ghost', 'HTTP', '127.0.0.1'],
      [1, 'keyuser', 'HTTP', '127.0.0.1'],
    ],
  );
  t.match(keyed[1]!.message, /not enabled for this admin/);
});
