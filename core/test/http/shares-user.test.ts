import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { addUser, fileApp, PASSWORD, updateUser } from '../helpers/user-files.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { ProviderEvent } from '../../src/events/event-types.js';
import { Share } from '../../src/data/entities/index.js';

const ta = await fileApp();
t.teardown(() => ta.close());
const events: ProviderEvent[] = [];
ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('provider', (e) => void events.push(e));
const adminToken = await ta.adminToken();

const home = await addUser(ta, { username: 'alice', filters: { allow_api_key_auth: true } });
mkdirSync(path.join(home, 'docs', 'sub'), { recursive: true });
writeFileSync(path.join(home, 'docs', 'a.txt'), 'A');
writeFileSync(path.join(home, 'f.txt'), 'F');
writeFileSync(path.join(home, 'g.txt'), 'G');
await addUser(ta, { username: 'bob' });
const alice = await ta.userToken('alice', PASSWORD);
const bob = await ta.userToken('bob', PASSWORD);
const DAY = 86_400_000;

const json = (r: { payload: string }) => JSON.parse(r.payload);
const add = (token: string, payload: unknown) => ta.inject('POST', '/api/v2/user/shares', { token, payload: payload as object });
const get = (token: string, id: string) => ta.inject('GET', `/api/v2/user/shares/${id}`, { token });
const put = (token: string, id: string, payload: unknown) => ta.inject('PUT', `/api/v2/user/shares/${id}`, { token, payload: payload as object });
const del = (token: string, id: string) => ta.inject('DELETE', `/api/v2/user/shares/${id}`, { token });
const created = async (token: string, payload: Record<string, unknown>) => {
  const r = await add(token, payload);
  if (r.statusCode !== 201) throw new Error(`add share: ${r.statusCode} ${r.payload}`);
  return String(r.headers['x-object-id']);
};
const row = (id: string) => ta.app.orm.em.fork().findOne(Share, { share_id: id });

t.test('create: 201 with X-Object-ID and Location, stored with a hashed password, read back', async (t) => {
  events.length = 0;
  const before = Date.now();
  const expires = Date.now() + 5 * DAY;
  const r = await add(alice, {
    name: 'docs',
    description: 'Q3 reports for the auditors',
    scope: 1,
    paths: ['docs', '\\f.txt'],
    password: 'share-secret-1',
    expires_at: expires,
    max_tokens: 5,
    allow_from: ['127.0.0.1', '10.0.0.0/8'],
  });
  t.equal(r.statusCode, 201, r.payload);
  t.match(json(r), { message: String });
  const id = String(r.headers['x-object-id']);
  t.match(id, /^[A-Za-z0-9_-]{22}$/);
  t.equal(r.headers.location, `/api/v2/user/shares/${id}`);
  const g = await get(alice, id);
  t.equal(g.statusCode, 200);
  const s = json(g);
  t.match(s, {
    id,
    name: 'docs',
    description: 'Q3 reports for the auditors',
    scope: 1,
    paths: ['/docs', '/f.txt'],
    username: 'alice',
    expires_at: expires,
    max_tokens: 5,
    used_tokens: 0,
    last_use_at: 0,
    allow_from: ['127.0.0.1', '10.0.0.0/8'],
  });
  t.ok(s.created_at >= before && s.updated_at === s.created_at);
  t.equal(s.password, '[**redacted**]', 'the hash is never returned');
  t.notOk(g.payload.includes('share-secret-1'));
  const stored = await row(id);
  t.match(stored?.password_hash, /^\$argon2id\$/, 'stored as an argon2id hash');
  t.same(
    events.map((e) => [e.action, e.object_type, e.object_name, e.username]),
    [['add', 'share', id, 'alice']],
  );
  t.notOk(JSON.stringify(events).includes('share-secret-1'));
  t.notOk(JSON.stringify(events).includes('argon2'), 'no password hash in provider events');

  const noPw = await created(alice, { name: 'open', scope: 3, paths: ['/docs'] });
  t.match(json(await get(alice, noPw)), { description: '', scope: 3, password: '', expires_at: 0, max_tokens: 0, allow_from: [] });
  // a read object can be sent back as is
  const back = await put(alice, noPw, json(await get(alice, noPw)));
  t.equal(back.statusCode, 200, back.payload);
});

t.test('list: own shares only, ordered by id, offset/limit/order', async (t) => {
  const ids = [await created(alice, { name: 'l1', scope: 1, paths: ['/g.txt'] }), await created(alice, { name: 'l2', scope: 1, paths: ['/g.txt'] })];
  await created(bob, { name: 'bobs', scope: 2, paths: ['/'] });
  const all = json(await ta.inject('GET', '/api/v2/user/shares', { token: alice }));
  t.ok(all.length >= 4);
  t.ok(
    all.every((s: { username: string }) => s.username === 'alice'),
    'no share of another user',
  );
  for (const id of ids) t.ok(all.some((s: { id: string }) => s.id === id));
  const sortedIds = all.map((s: { id: string }) => s.id);
  t.same(sortedIds, [...sortedIds].sort(), 'ascending ids');
  const desc = json(await ta.inject('GET', '/api/v2/user/shares?order=DESC', { token: alice })).map((s: { id: string }) => s.id);
  t.same(desc, [...sortedIds].reverse());
  const page = json(await ta.inject('GET', '/api/v2/user/shares?offset=1&limit=2', { token: alice })).map((s: { id: string }) => s.id);
  t.same(page, sortedIds.slice(1, 3));
  for (const q of ['limit=0', 'limit=501', 'offset=-1', 'order=UP']) {
    t.equal((await ta.inject('GET', `/api/v2/user/shares?${q}`, { token: alice })).statusCode, 400, q);
  }
  t.same(
    json(await ta.inject('GET', '/api/v2/user/shares', { token: bob })).map((s: { name: string }) => s.name),
    ['bobs'],
  );
});

t.test('create refusals: 400 naming the problem', async (t) => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ scope: 1, paths: ['/docs'] }, /"name" is required/],
    [{ name: 'x', paths: ['/docs'] }, /"scope" is required/],
    [{ name: 'x', scope: 4, paths: ['/docs'] }, /"scope" must be one of/],
    [{ name: 'x', scope: 1 }, /"paths" is required/],
    [{ name: 'x', scope: 1, paths: [] }, /"paths" must contain at least 1/],
    [{ name: 'x', scope: 1, paths: ['/../etc'] }, /"paths\[0\]" is not a valid path/],
    [{ name: 'x', scope: 1, paths: ['/nope'] }, /\/nope does not exist/],
    [{ name: 'x', scope: 1, paths: ['/f.txt/inner'] }, /\/f.txt\/inner does not exist/],
    [{ name: 'x', scope: 1, paths: ['/docs', '/docs/a.txt'] }, /overlap/],
    [{ name: 'x', scope: 2, paths: ['/docs', '/f.txt'] }, /write scope needs exactly one directory path/],
    [{ name: 'x', scope: 3, paths: ['/docs', '/docs/sub'] }, /overlap/],
    [{ name: 'x', scope: 2, paths: ['/f.txt'] }, /write scope needs a directory/],
    [{ name: 'x', scope: 1, paths: ['/docs'], expires_at: Date.now() - 1000 }, /"expires_at" must be in the future/],
    [{ name: 'x', scope: 1, paths: ['/docs'], allow_from: ['999.1.1.1'] }, /"allow_from\[0\]" must be an IP address or a CIDR network/],
    [{ name: 'x', scope: 1, paths: ['/docs'], max_tokens: -1 }, /"max_tokens" must be greater than or equal to 0/],
    [{ name: 'x', scope: 1, paths: ['/docs'], password: '[**redacted**]' }, /redacted marker/],
    [{ name: 'bad\u0001name', scope: 1, paths: ['/docs'] }, /"name"/],
    // a name has at most 255 characters, as every other name the API takes (docs/shares.md)
    [{ name: 'x'.repeat(256), scope: 1, paths: ['/docs'] }, /"name" length must be less than or equal to 255 characters long/],
    [{ name: 'x'.repeat(1 << 19), scope: 1, paths: ['/docs'] }, /"name" length must be less than or equal to 255 characters long/],
  ];
  for (const [payload, re] of cases) {
    const r = await add(alice, payload);
    t.equal(r.statusCode, 400, `${JSON.stringify(payload)}: ${r.payload}`);
    t.match(json(r), { message: re, error: 'Bad Request' });
  }
  t.equal(
    (await ta.inject('POST', '/api/v2/user/shares', { token: alice, payload: 'not json', headers: { 'content-type': 'application/json' } })).statusCode,
    400,
  );
  // members of other API revisions are dropped, not refused, and never stored
  const longest = await add(alice, { name: 'é'.repeat(255), scope: 1, paths: ['/docs'] });
  t.equal(longest.statusCode, 201, '255 characters are accepted');
  const renamed = await ta.inject('PUT', `/api/v2/user/shares/${String(longest.headers['x-object-id'])}`, {
    token: alice,
    payload: { name: 'é'.repeat(256), scope: 1, paths: ['/docs'] },
  });
  t.equal(renamed.statusCode, 400, 'an update is held to the same limit');
  t.match(json(renamed), { message: /"name" length must be less than or equal to 255/ });
  const extra = await add(alice, { name: 'extra', scope: 1, paths: ['/docs'], color: 'red', description: null });
  t.equal(extra.statusCode, 201, extra.payload);
  const stored = json(await get(alice, String(extra.headers['x-object-id'])));
  t.notOk('color' in stored);
  t.equal(stored.description, '');
  t.equal((await ta.inject('POST', '/api/v2/user/shares', { payload: { name: 'x', scope: 1, paths: ['/docs'] } })).statusCode, 401);
  t.equal(
    (await ta.inject('POST', '/api/v2/user/shares', { token: adminToken, payload: { name: 'x', scope: 1, paths: ['/docs'] } })).statusCode,
    401,
    'an admin token is not a user credential',
  );
});

t.test('the owner needs the permissions the share uses, and sharing enabled', async (t) => {
  const h = await addUser(ta, { username: 'carol', permissions: { '/': ['list'], '/up': ['list', 'upload'], '/dl': ['list', 'download'] } });
  mkdirSync(path.join(h, 'up'));
  mkdirSync(path.join(h, 'dl'));
  writeFileSync(path.join(h, 'dl', 'x.txt'), 'x');
  writeFileSync(path.join(h, 'top.txt'), 'x');
  const carol = await ta.userToken('carol', PASSWORD);
  const refused: [Record<string, unknown>, RegExp][] = [
    [{ scope: 1, paths: ['/top.txt'] }, /"download" permission/],
    [{ scope: 2, paths: ['/dl'] }, /"upload" permission/],
    [{ scope: 3, paths: ['/up'] }, /"download" permission/],
  ];
  for (const [p, re] of refused) {
    const r = await add(carol, { name: 'c', ...p });
    t.equal(r.statusCode, 403, `${JSON.stringify(p)}: ${r.payload}`);
    t.match(json(r), { message: re, error: 'Forbidden' });
  }
  t.equal((await add(carol, { name: 'c', scope: 1, paths: ['/dl/x.txt'] })).statusCode, 201);
  t.equal((await add(carol, { name: 'c', scope: 2, paths: ['/up'] })).statusCode, 201);
  const id = await created(carol, { name: 'c', scope: 1, paths: ['/dl'] });

  await updateUser(ta, 'carol', { filters: { web_client: ['shares-disabled'] } });
  const checks = [
    await ta.inject('GET', '/api/v2/user/shares', { token: carol }),
    await add(carol, { name: 'c', scope: 1, paths: ['/dl'] }),
    await get(carol, id),
    await put(carol, id, { name: 'c', scope: 1, paths: ['/dl'] }),
    await del(carol, id),
  ];
  for (const r of checks) {
    t.equal(r.statusCode, 403, r.payload);
    t.match(json(r).message, /sharing is disabled/);
  }
  t.ok(await row(id), 'not deleted');
  const policy = await ta.inject('GET', '/api/v2/user/share-policy', { token: carol });
  t.equal(policy.statusCode, 200, 'the share policy is readable without the right to share');
  t.same(json(policy), {
    shares_allowed: false,
    password_required: false,
    default_expiration_days: 0,
    max_expiration_days: 0,
    policies: [],
    policy_change_disabled: false,
  });
});

t.test('group share policies: password required, default and maximum expiration', async (t) => {
  let r = await ta.inject('POST', '/api/v2/groups', {
    token: adminToken,
    payload: {
      name: 'share-policy',
      user_settings: { filters: { web_client: ['shares-without-password-disabled'], max_shares_expiration: 10, default_shares_expiration: 3 } },
    },
  });
  t.equal(r.statusCode, 201, r.payload);
  const h = await addUser(ta, { username: 'dave', groups: [{ name: 'share-policy', type: 3 }] });
  mkdirSync(path.join(h, 'd'));
  const dave = await ta.userToken('dave', PASSWORD);
  r = await ta.inject('GET', '/api/v2/user/share-policy', { token: dave });
  t.same(
    json(r),
    { shares_allowed: true, password_required: true, default_expiration_days: 3, max_expiration_days: 10, policies: [], policy_change_disabled: false },
    'the policy of the group',
  );
  r = await ta.inject('GET', '/api/v2/user/share-policy', { token: alice });
  t.same(
    json(r),
    { shares_allowed: true, password_required: false, default_expiration_days: 0, max_expiration_days: 0, policies: [], policy_change_disabled: false },
    'no policy',
  );
  t.equal((await ta.inject('GET', '/api/v2/user/share-policy')).statusCode, 401, 'only for a signed-in user');
  r = await add(dave, { name: 'd', scope: 1, paths: ['/d'] });
  t.equal(r.statusCode, 400);
  t.match(json(r).message, /must have a password/);
  const before = Date.now();
  const id = await created(dave, { name: 'd', scope: 1, paths: ['/d'], password: 'pw' });
  const s = json(await get(dave, id));
  t.ok(s.expires_at >= before + 3 * DAY && s.expires_at <= Date.now() + 3 * DAY, 'default expiration of 3 days');
  r = await add(dave, { name: 'd', scope: 1, paths: ['/d'], password: 'pw', expires_at: Date.now() + 11 * DAY });
  t.equal(r.statusCode, 400);
  t.match(json(r).message, /must expire within 10 days/);
  r = await put(dave, id, { ...s, password: '' });
  t.equal(r.statusCode, 400, 'the password cannot be removed');
  r = await put(dave, id, { ...s, expires_at: 0 });
  t.equal(r.statusCode, 400, 'the expiration cannot be removed');
  t.match(json(r).message, /must expire within 10 days/);
  t.equal((await put(dave, id, { ...s, expires_at: Date.now() + 9 * DAY })).statusCode, 200);
});

t.test("read, update and delete: 404 for unknown ids and for other users' shares", async (t) => {
  const id = await created(alice, { name: 'mine', scope: 1, paths: ['/docs'], password: 'first-pw' });
  for (const r of [await get(bob, id), await put(bob, id, { name: 'x', scope: 1, paths: ['/'] }), await del(bob, id), await get(alice, 'unknown-id')]) {
    t.equal(r.statusCode, 404, r.payload);
    t.match(json(r), { message: /not found/, error: 'Not Found' });
  }
  t.equal((await get(alice, 'bad%20id')).statusCode, 400);
  t.equal((await get(alice, 'x'.repeat(65))).statusCode, 400);
  t.equal((await ta.inject('GET', `/api/v2/user/shares/${id}`)).statusCode, 401);
  t.equal((await ta.inject('DELETE', `/api/v2/user/shares/${id}`)).statusCode, 401);
  t.equal((await put(alice, id, { name: 'x', scope: 1, paths: ['/missing'] })).statusCode, 400);
  t.equal((await put(alice, id, { name: 'x' })).statusCode, 400);
  t.equal(json(await get(alice, id)).name, 'mine', 'unchanged by refused updates');
});

t.test('update: fields changed, password kept with the marker or removed, usage kept', async (t) => {
  const id = await created(alice, { name: 'u', scope: 1, paths: ['/docs'], password: 'pw-one' });
  await ta.app.orm.em.fork().nativeUpdate(Share, { share_id: id }, { used_tokens: 4, last_use_at: 1234 });
  const hash = (await row(id))!.password_hash;
  const s = json(await get(alice, id));
  events.length = 0;
  let r = await put(alice, id, {
    ...s,
    name: 'renamed',
    description: 'now writable',
    scope: 2,
    paths: ['/docs/sub'],
    max_tokens: 9,
    allow_from: ['192.168.0.0/16'],
    used_tokens: 0,
    created_at: 1,
    id: 'other',
  });
  t.equal(r.statusCode, 200, r.payload);
  t.match(json(r), { message: String });
  const u = json(await get(alice, id));
  t.match(u, {
    id,
    name: 'renamed',
    description: 'now writable',
    scope: 2,
    paths: ['/docs/sub'],
    max_tokens: 9,
    allow_from: ['192.168.0.0/16'],
    used_tokens: 4,
    last_use_at: 1234,
    created_at: s.created_at,
    password: '[**redacted**]',
  });
  t.ok(u.updated_at >= s.updated_at);
  t.equal((await row(id))!.password_hash, hash, 'the redacted marker keeps the password');
  t.same(
    events.map((e) => [e.action, e.object_type, e.object_name]),
    [['update', 'share', id]],
  );
  r = await put(alice, id, { ...u, password: 'pw-two' });
  t.equal(r.statusCode, 200);
  t.not((await row(id))!.password_hash, hash, 'a new password');
  r = await put(alice, id, { ...u, password: '' });
  t.equal(r.statusCode, 200);
  t.equal(json(await get(alice, id)).password, '', 'password removed');
});

t.test('delete: 200, then gone; provider event', async (t) => {
  const id = await created(alice, { name: 'd', scope: 1, paths: ['/docs'] });
  events.length = 0;
  const r = await del(alice, id);
  t.equal(r.statusCode, 200);
  t.match(json(r), { message: String });
  t.equal((await get(alice, id)).statusCode, 404);
  t.equal((await del(alice, id)).statusCode, 404);
  t.same(
    events.map((e) => [e.action, e.object_type, e.object_name]),
    [['delete', 'share', id]],
  );
});

t.test('user API keys manage shares too', async (t) => {
  const k = await ta.inject('POST', '/api/v2/apikeys', { token: adminToken, payload: { name: 'ak', scope: 2, user: 'alice' } });
  t.equal(k.statusCode, 201, k.payload);
  const apiKey = json(k).key as string;
  const r = await ta.inject('POST', '/api/v2/user/shares', { apiKey, payload: { name: 'via key', scope: 1, paths: ['/docs'] } });
  t.equal(r.statusCode, 201, r.payload);
  t.equal(json(await ta.inject('GET', `/api/v2/user/shares/${r.headers['x-object-id']}`, { apiKey })).name, 'via key');
});

t.test('admin side: dumpdata and loaddata carry shares; deleting the user deletes its shares', async (t) => {
  const id = await created(bob, {
    name: 'bk',
    description: 'backup copy',
    scope: 1,
    paths: ['/'],
    password: 'bk-pw',
    expires_at: Date.now() + DAY,
    allow_from: ['127.0.0.1'],
  });
  const d = await ta.inject('GET', '/api/v2/dumpdata?output-data=1&scopes=shares', { token: adminToken });
  t.equal(d.statusCode, 200, d.payload);
  const dumped = json(d).shares.find((s: { id: string }) => s.id === id);
  t.match(dumped, { id, name: 'bk', description: 'backup copy', scope: 1, paths: ['/'], username: 'bob', max_tokens: 0, allow_from: ['127.0.0.1'] });
  t.match(dumped.password, /^\$argon2id\$/, 'the hash is dumped, never the password');
  t.notOk(d.payload.includes('bk-pw'));

  // restore: the share comes back as dumped (same hash), a plain password is hashed
  t.equal((await del(bob, id)).statusCode, 200);
  const other = { ...dumped, id: 'restored-plain-1', password: 'plain-pw', name: 'plain' };
  let r = await ta.inject('POST', '/api/v2/loaddata', { token: adminToken, payload: { shares: [dumped, other] } });
  t.equal(r.statusCode, 200, r.payload);
  t.equal((await row(id))!.password_hash, dumped.password);
  t.match((await row('restored-plain-1'))!.password_hash, /^\$argon2id\$/);
  t.match(json(await get(bob, id)), { name: 'bk', description: 'backup copy' }, 'restored with its description');
  const bad: [unknown, RegExp][] = [
    [{ shares: [{ ...dumped, username: 'ghost' }] }, /shares\[0\] ".*": user "ghost" does not exist/],
    [{ shares: [{ ...dumped, scope: 2, paths: ['/a', '/b'] }] }, /shares\[0\] ".*": "paths": a share with write scope/],
    [{ shares: [{ ...dumped, id: 'bad id' }] }, /shares\[0\] "bad id": "id"/],
    [{ shares: [dumped, dumped] }, /shares\[1\]: ".*" appears more than once/],
    [{ shares: [{ ...dumped, name: 'x'.repeat(256) }] }, /shares\[0\] ".*": "name" length must be less than or equal to 255/],
  ];
  for (const [data, re] of bad) {
    r = await ta.inject('POST', '/api/v2/loaddata', { token: adminToken, payload: data as object });
    t.equal(r.statusCode, 400, r.payload);
    t.match(json(r).message, re);
  }

  t.equal((await ta.inject('DELETE', '/api/v2/users/bob', { token: adminToken })).statusCode, 200);
  t.equal(await ta.app.orm.em.fork().count(Share, { share_id: { $in: [id, 'restored-plain-1'] } }), 0, 'shares removed with their user');
});
