import t from 'tap';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { addUser, fileApp, PASSWORD } from '../helpers/user-files.js';
import { accountRefusalOf } from '../../src/accounts/account-access.js';
import { anonymousPermissions } from '../../src/vfs/permissions.js';
import { FileSessions } from '../../src/vfs/file-sessions.service.js';
import { FsErrorCode, isFsError } from '../../src/fs/fs-error.js';
import type { FileSession } from '../../src/sdk/file-session.js';
import type { Protocol } from '../../src/sdk/protocols.js';

// filters.is_anonymous: read-only whatever the permissions say (the file session's permission
// check), and logins over FTP and WebDAV only (the login service, tokens, web sessions, file sessions).
const ta = await fileApp();
t.teardown(() => ta.close());
const sessions = ta.app.container.resolve(FileSessions);
const token = await ta.adminToken();

let keys = 0;
const open = (username: string, protocol: Protocol = 'FTP'): Promise<FileSession> =>
  sessions.open({ username, ip: '127.0.0.1', protocol, sessionKey: `anon-${++keys}` });

async function refusal(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  return undefined;
}

const home = await addUser(ta, {
  username: 'anon',
  permissions: { '/': ['*'], '/drop': ['upload', 'list'] },
  filters: { is_anonymous: true, allow_api_key_auth: true },
});
mkdirSync(path.join(home, 'docs'));
mkdirSync(path.join(home, 'drop'));
writeFileSync(path.join(home, 'docs', 'a.txt'), 'read me');
await addUser(ta, { username: 'named', filters: { is_anonymous: false } });

t.test('the rule: FTP, WebDAV and the server’s own work; SSH and HTTP refused like a denied protocol', async (t) => {
  const anon = { status: 1, filters: { is_anonymous: true } };
  for (const p of ['FTP', 'DAV', 'EventAction', 'DataRetention']) t.equal(accountRefusalOf(anon, '10.0.0.1', p), null, `${p} allowed`);
  for (const p of ['SSH', 'SFTP', 'SCP', 'HTTP', 'HTTPShare', 'OIDC']) {
    t.match(accountRefusalOf(anon, '10.0.0.1', p), { reason: 'protocol-denied', message: /anonymous account/ }, `${p} refused`);
  }
  t.equal(accountRefusalOf({ status: 1, filters: { is_anonymous: false } }, '10.0.0.1', 'SSH'), null, 'is_anonymous false: no rule');
  t.same(anonymousPermissions({ '/': ['*'], '/in': ['upload', 'list', 'delete'], '/dl': ['download', 'rename'] }), {
    '/': ['list', 'download'],
    '/in': ['list'],
    '/dl': ['download'],
  });
});

t.test('an anonymous file session lists and downloads; every write is a permission error', async (t) => {
  const s = await open('anon');
  t.teardown(() => s.close());
  const names: string[] = [];
  for await (const page of await s.list('/docs')) names.push(...page.map((e) => e.name));
  t.same(names, ['a.txt']);
  const r = await s.openRead('/docs/a.txt');
  t.equal(await text(r.stream), 'read me');
  await r.done;
  t.ok(s.hasPermission('/', 'download'), 'download kept');
  t.notOk(s.hasPermission('/', 'upload'), "upload gone although '/' grants *");

  const writes: [string, () => Promise<unknown>][] = [
    ['upload', () => s.openWrite('/new.txt', { size: 1 }).then((w) => (w.stream.end(Buffer.from('x')), w.done))],
    ['upload into a directory granting upload', () => s.openWrite('/drop/new.txt', { size: 1 }).then((w) => (w.stream.end(Buffer.from('x')), w.done))],
    ['overwrite', () => s.openWrite('/docs/a.txt', { size: 1 }).then((w) => (w.stream.end(Buffer.from('x')), w.done))],
    ['mkdir', () => s.mkdir('/newdir')],
    ['delete', () => s.removeFile('/docs/a.txt')],
    ['rmdir', () => s.removeDir('/docs')],
    ['rename', () => s.rename('/docs/a.txt', '/docs/b.txt')],
    ['copy', () => s.copy('/docs/a.txt', '/docs/c.txt')],
    ['chtimes', () => s.setMtime('/docs/a.txt', new Date(0))],
    ['truncate', () => s.truncate('/docs/a.txt', 0)],
  ];
  for (const [what, fn] of writes) {
    const err = await refusal(fn());
    t.ok(isFsError(err, FsErrorCode.Permission), `${what}: refused with the permission error`, { found: err });
  }
  t.notOk(existsSync(path.join(home, 'new.txt')));
  t.notOk(existsSync(path.join(home, 'drop', 'new.txt')));
  t.notOk(existsSync(path.join(home, 'newdir')));
  t.ok(existsSync(path.join(home, 'docs', 'a.txt')));
});

t.test('file sessions over SSH or HTTP are refused; an account not flagged is not', async (t) => {
  for (const p of ['SFTP', 'HTTP'] as const) t.match(await refusal(open('anon', p)), { message: /anonymous account/ }, `${p} refused`);
  const s = await open('named', 'SFTP');
  await s.close();
  t.pass('is_anonymous false: SFTP opens');
});

t.test('REST: the user token, a web session, an API key are refused', async (t) => {
  const tok = await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'anon', password: PASSWORD } });
  t.equal(tok.statusCode, 403, tok.payload);
  t.match(JSON.parse(tok.payload), { message: /anonymous account/ });
  const web = await ta.server.inject({ method: 'POST', url: '/api/v2/user/web-session', payload: { username: 'anon', password: PASSWORD } });
  t.equal(web.statusCode, 403, web.payload);
  const k = await ta.inject('POST', '/api/v2/apikeys', { token, payload: { name: 'anon-key', scope: 2, user: 'anon' } });
  t.equal(k.statusCode, 201, k.payload);
  const keyed = await ta.inject('GET', '/api/v2/user/dirs', { apiKey: JSON.parse(k.payload).key as string });
  t.equal(keyed.statusCode, 401, `the API key: ${keyed.payload}`);
  const named = await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'named', password: PASSWORD } });
  t.equal(named.statusCode, 200, 'the same request for an account not flagged');
  // an account flagged after its token was issued: the token stops working
  const later = JSON.parse(named.payload).access_token as string;
  const current = JSON.parse((await ta.inject('GET', '/api/v2/users/named', { token })).payload);
  const put = await ta.inject('PUT', '/api/v2/users/named', { token, payload: { ...current, filters: { ...current.filters, is_anonymous: true } } });
  t.equal(put.statusCode, 200, put.payload);
  t.equal((await ta.inject('GET', '/api/v2/user/dirs', { token: later })).statusCode, 401, 'a token issued before is refused');
});

t.test("a primary group's is_anonymous makes its members anonymous", async (t) => {
  const g = await ta.inject('POST', '/api/v2/groups', { token, payload: { name: 'g-anon', user_settings: { filters: { is_anonymous: true } } } });
  t.equal(g.statusCode, 201, g.payload);
  await addUser(ta, { username: 'member', groups: [{ name: 'g-anon', type: 1 }] });
  t.match(await refusal(open('member', 'SFTP')), { message: /anonymous account/ });
  const s = await open('member', 'DAV');
  t.teardown(() => s.close());
  t.ok(isFsError(await refusal(s.mkdir('/x')), FsErrorCode.Permission), 'read-only');
});
