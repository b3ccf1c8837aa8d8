import t, { type Test } from 'tap';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createTestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import { LoginRefusedError, type LoginRefusalReason } from '../../src/errors.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { LogEvent } from '../../src/events/event-types.js';
import type { LoginGate, ShareLoginRequest } from '../../src/sdk/login.js';
import { DefenderService } from '../../src/security/defender.service.js';
import { Share, ShareCode } from '../../src/data/entities/index.js';
import { hashCode } from '../../src/shares/share-codes.service.js';

// Share logins through the login service (LoginGate.authenticateShare) for a front-end other than the
// REST API's share routes: the share's checks, with log events and defender scores in the request's
// protocol. Each case uses its own source address, so its events and score are its own.
const ta = await createTestApp({ config: { defender: { enabled: true, threshold: 20, score_invalid: 3, score_valid: 2, observation_time: 60 } } });
t.teardown(() => ta.close());
const login = ta.app.container.resolve<LoginGate>(TOKENS.LoginService);
const defender = ta.app.container.resolve(DefenderService);
const logs: LogEvent[] = [];
ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('log', (e) => void logs.push(e));
const adminToken = await ta.adminToken();

const home = path.join(ta.dataDir, 'owner');
mkdirSync(path.join(home, 'pub'), { recursive: true });
const created = await ta.inject('POST', '/api/v2/users', {
  token: adminToken,
  payload: { username: 'owner', password: 'owner-pass-1', home_dir: home, permissions: { '/': ['*'] } },
});
if (created.statusCode !== 201) throw new Error(created.payload);
const token = await ta.userToken('owner', 'owner-pass-1');
const mkShare = async (payload: Record<string, unknown>) => {
  const r = await ta.inject('POST', '/api/v2/user/shares', { token, payload });
  if (r.statusCode !== 201) throw new Error(`add share: ${r.statusCode} ${r.payload}`);
  return String(r.headers['x-object-id']);
};
const readId = await mkShare({ name: 'read', scope: 1, paths: ['/pub'], password: 'open-sesame' });
const writeId = await mkShare({ name: 'drop', scope: 2, paths: ['/pub'], password: 'drop-it' });
const openId = await mkShare({ name: 'open', scope: 3, paths: ['/pub'] });
const mailId = await mkShare({ name: 'mail', scope: 1, paths: ['/pub'], emails: ['ann@example.test'] });
const expiredId = await mkShare({ name: 'old', scope: 1, paths: ['/pub'], password: 'old-pass' });
await ta.app.orm.em.fork().nativeUpdate(Share, { share_id: expiredId }, { expires_at: Date.now() - 1000 });

let host = 10;
const nextIp = () => `198.51.100.${host++}`;
const req = (o: Partial<ShareLoginRequest> & { shareId: string }): ShareLoginRequest => ({ ip: nextIp(), protocol: 'DAV', access: 'read', ...o });
const eventsOf = (ip: string) => logs.filter((e) => e.ip === ip).map((e) => ({ event: e.event, protocol: e.protocol, username: e.username }));
async function scoreOf(ip: string): Promise<number> {
  await defender.idle();
  try {
    return (await defender.get(ip)).score;
  } catch {
    return 0;
  }
}
async function refusedWith(tt: Test, p: Promise<unknown>, reason: LoginRefusalReason, kind: string, re: RegExp) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  tt.ok(err instanceof LoginRefusedError, 'a LoginRefusedError');
  if (!(err instanceof LoginRefusedError)) return;
  tt.equal(err.reason, reason, 'its reason');
  tt.equal(err.kind, kind, 'its kind');
  tt.match(err.message, re, 'its message');
}

t.test('the share password lets in, with a login event in the protocol of the request', async (tt) => {
  const r = req({ shareId: readId, credential: { method: 'share-password', password: 'open-sesame' } });
  const ok = await login.authenticateShare(r);
  tt.same(ok, { shareId: readId, owner: 'owner', scope: 1, paths: ['/pub'], email: '' });
  tt.same(eventsOf(r.ip), [{ event: 5, protocol: 'DAV', username: readId }]);
  tt.equal(await scoreOf(r.ip), 0, 'no score');
});

t.test('an open share needs no credential; the access must fit the scope', async (tt) => {
  const r = req({ shareId: openId, access: 'write' });
  tt.match(await login.authenticateShare(r), { shareId: openId, scope: 3 });
  tt.same(eventsOf(r.ip), [], 'no login event for a share without credentials');
  await refusedWith(
    tt,
    login.authenticateShare(req({ shareId: readId, access: 'write', credential: { method: 'share-password', password: 'open-sesame' } })),
    'share-denied',
    'forbidden',
    /scope/,
  );
  tt.match(await login.authenticateShare(req({ shareId: writeId, access: 'write', credential: { method: 'share-password', password: 'drop-it' } })), {
    scope: 2,
  });
  await refusedWith(
    tt,
    login.authenticateShare(req({ shareId: writeId, access: 'read', credential: { method: 'share-password', password: 'drop-it' } })),
    'share-denied',
    'forbidden',
    /scope/,
  );
});

t.test('a wrong password, a missing one and an unknown share are refused and scored as over HTTP', async (tt) => {
  const wrong = req({ shareId: readId, protocol: 'SFTP', credential: { method: 'share-password', password: 'nope' } });
  await refusedWith(tt, login.authenticateShare(wrong), 'bad-credentials', 'unauthorized', /invalid share password/);
  tt.same(eventsOf(wrong.ip), [{ event: 1, protocol: 'SFTP', username: readId }]);
  tt.equal(await scoreOf(wrong.ip), 2, 'score_valid');
  const none = req({ shareId: readId });
  await refusedWith(tt, login.authenticateShare(none), 'bad-credentials', 'unauthorized', /needs a password/);
  tt.same(eventsOf(none.ip), [{ event: 3, protocol: 'DAV', username: readId }]);
  const unknown = req({ shareId: 'no-such-share', credential: { method: 'share-password', password: 'x' } });
  await refusedWith(tt, login.authenticateShare(unknown), 'bad-credentials', 'unauthorized', /not found/);
  tt.same(eventsOf(unknown.ip), [{ event: 2, protocol: 'DAV', username: 'no-such-share' }]);
});

t.test('an expired share is refused after its password', async (tt) => {
  const r = req({ shareId: expiredId, credential: { method: 'share-password', password: 'old-pass' } });
  await refusedWith(tt, login.authenticateShare(r), 'share-denied', 'forbidden', /expired/);
  tt.same(eventsOf(r.ip), [{ event: 1, protocol: 'DAV', username: expiredId }]);
});

t.test('an email-restricted share lets an allowed address in with its one-time code, once', async (tt) => {
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
  const code = { method: 'share-code' as const, email: 'ann@example.test', code: 'abcd-efgh' };
  const r = req({ shareId: mailId, protocol: 'FTP', credential: code });
  tt.match(await login.authenticateShare(r), { shareId: mailId, email: 'ann@example.test' });
  tt.same(eventsOf(r.ip), [{ event: 5, protocol: 'FTP', username: mailId }]);
  await refusedWith(tt, login.authenticateShare(req({ shareId: mailId, credential: code })), 'bad-credentials', 'unauthorized', /one-time code/);
  const other = { method: 'share-code' as const, email: 'bob@example.test', code: 'abcd-efgh' };
  await refusedWith(tt, login.authenticateShare(req({ shareId: mailId, credential: other })), 'bad-credentials', 'unauthorized', /one-time code/);
});

t.test('the connection checks come first: a banned host, a protocol nobody logs in over, malformed input', async (tt) => {
  const ip = nextIp();
  for (let i = 0; i < 7; i++) await defender.addEvent(ip, 'invalid', 'DAV');
  await refusedWith(
    tt,
    login.authenticateShare(req({ shareId: readId, ip, credential: { method: 'share-password', password: 'open-sesame' } })),
    'banned',
    'forbidden',
    /./,
  );
  tt.same(eventsOf(ip), [], 'a banned host gets no login event');
  await refusedWith(tt, login.authenticateShare(req({ shareId: readId, protocol: 'EventAction' })), 'protocol-denied', 'forbidden', /EventAction/);
  await refusedWith(
    tt,
    login.authenticateShare(req({ shareId: 'a\u0000b', credential: { method: 'share-password', password: 'x' } })),
    'malformed',
    'unauthorized',
    /NUL/,
  );
  await refusedWith(tt, login.authenticateShare(req({ shareId: '' })), 'malformed', 'unauthorized', /no share id/);
});
