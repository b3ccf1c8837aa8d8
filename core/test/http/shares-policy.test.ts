import t from 'tap';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { addUser, fileApp, PASSWORD, updateUser } from '../helpers/user-files.js';
import { applySharePolicy, policyOf, policyScope } from '../../src/shares/share-policy.js';

const ta = await fileApp();
t.teardown(() => ta.close());
const adminToken = await ta.adminToken();
const DAY = 86_400_000;

const json = (r: { payload: string }) => JSON.parse(r.payload);
const add = (token: string, payload: unknown) => ta.inject('POST', '/api/v2/user/shares', { token, payload: payload as object });
const get = (token: string, id: string) => ta.inject('GET', `/api/v2/user/shares/${id}`, { token });
const put = (token: string, id: string, payload: unknown) => ta.inject('PUT', `/api/v2/user/shares/${id}`, { token, payload: payload as object });
const policyOfUser = async (token: string) => json(await ta.inject('GET', '/api/v2/user/share-policy', { token }));
const created = async (token: string, payload: Record<string, unknown>) => {
  const r = await add(token, payload);
  if (r.statusCode !== 201) throw new Error(`add share: ${r.statusCode} ${r.payload}`);
  return String(r.headers['x-object-id']);
};
const dirs = (home: string, ...names: string[]) => names.forEach((n) => mkdirSync(path.join(home, n), { recursive: true }));

t.test('rules: permissions give a scope; the longest prefix, segment by segment, applies', async (t) => {
  t.equal(policyScope(['read']), 1);
  t.equal(policyScope(['write']), 2);
  t.equal(policyScope(['upload']), 2);
  t.equal(policyScope(['read', 'upload']), 3);
  t.equal(policyScope(['*']), 3);
  t.equal(policyScope(['list', 'delete']), 0, 'other permissions allow nothing');
  const rules = [
    { path: '/', permissions: ['read'] },
    { path: '/pub', permissions: ['write'] },
    { path: '/pub/both', permissions: ['read', 'write'] },
  ];
  t.equal(policyOf(rules, '/docs')?.path, '/');
  t.equal(policyOf(rules, '/pub')?.path, '/pub');
  t.equal(policyOf(rules, '/pub/x/y')?.path, '/pub');
  t.equal(policyOf(rules, '/public')?.path, '/', 'not a prefix segment-wise');
  t.equal(policyOf(rules, '/pub/both/z')?.path, '/pub/both');
  t.equal(policyOf(rules.slice(1), '/docs'), null, 'no rule');
  t.equal(applySharePolicy(rules, false, ['/docs', '/public'], undefined), 1, 'the intersection of the rules of the paths');
  t.equal(applySharePolicy(rules, false, ['/pub/both'], undefined), 3);
  t.equal(applySharePolicy(rules, true, ['/pub/both'], 1), 1, 'less than allowed is fine under the lock');
  t.equal(applySharePolicy(rules.slice(1), true, ['/docs'], 3), 3, 'a path without a rule is not restricted');
  t.throws(() => applySharePolicy(rules.slice(1), false, ['/docs'], undefined), { message: /"scope" is required: no share policy applies/ });
  t.throws(() => applySharePolicy(rules, false, ['/docs', '/pub/a'], undefined), { message: /allow no common scope/ });
  t.throws(() => applySharePolicy(rules, true, ['/pub/a'], 3), { message: /"scope": a read-write share of \/pub\/a goes beyond the share policy of "\/pub"/ });
});

t.test('own policies without share_policy_change_disabled: the default scope only', async (t) => {
  const home = await addUser(ta, {
    username: 'erin',
    filters: {
      default_shares_policies: [
        { path: '/', permissions: ['read'] },
        { path: '/drop', permissions: ['upload'] },
        { path: '/drop/both', permissions: ['read', 'write'] },
      ],
    },
  });
  dirs(home, 'docs', 'drop/both', 'dropbox');
  const erin = await ta.userToken('erin', PASSWORD);
  t.same(await policyOfUser(erin), {
    shares_allowed: true,
    password_required: false,
    default_expiration_days: 0,
    max_expiration_days: 0,
    policies: [
      { path: '/', permissions: ['read'], scope: 1 },
      { path: '/drop', permissions: ['upload'], scope: 2 },
      { path: '/drop/both', permissions: ['read', 'write'], scope: 3 },
    ],
    policy_change_disabled: false,
  });
  const scopeOf = async (paths: string[]) => json(await get(erin, await created(erin, { name: 'e', paths }))).scope;
  t.equal(await scopeOf(['/docs']), 1, 'read under /');
  t.equal(await scopeOf(['/drop']), 2, 'upload under /drop');
  t.equal(await scopeOf(['/drop/both']), 3, 'read and write under /drop/both');
  t.equal(await scopeOf(['/dropbox']), 1, '/dropbox is not under /drop');
  const id = await created(erin, { name: 'e', scope: 3, paths: ['/docs'] });
  t.equal(json(await get(erin, id)).scope, 3, 'a scope sent goes beyond the policy: it is only a default');
  t.equal((await put(erin, id, { name: 'e', scope: 2, paths: ['/docs'] })).statusCode, 200);
  const r = await add(erin, { name: 'e', paths: ['/docs', '/drop'] });
  t.equal(r.statusCode, 400, r.payload);
  t.match(json(r), { message: /^"scope" is required: the share policies .*"\/" \(read\).*"\/drop" \(upload\)/, error: 'Bad Request' });
});

t.test('share_policy_change_disabled from a group: scopes beyond the policy are refused on create and update', async (t) => {
  let r = await ta.inject('POST', '/api/v2/groups', {
    token: adminToken,
    payload: {
      name: 'locked-shares',
      user_settings: {
        filters: {
          web_client: ['share_policy_change_disabled'],
          default_shares_policies: [
            { path: '/', permissions: ['read'] },
            { path: '/in', permissions: ['write'] },
          ],
        },
      },
    },
  });
  t.equal(r.statusCode, 201, r.payload);
  const home = await addUser(ta, {
    username: 'frank',
    groups: [{ name: 'locked-shares', type: 3 }],
    filters: { default_shares_policies: [{ path: '/in/open', permissions: ['read', 'write'] }] },
  });
  dirs(home, 'docs', 'in/open', 'inbox');
  const frank = await ta.userToken('frank', PASSWORD);
  const p = await policyOfUser(frank);
  t.equal(p.policy_change_disabled, true, 'the option of the group');
  t.same(
    p.policies,
    [
      { path: '/in/open', permissions: ['read', 'write'], scope: 3 },
      { path: '/', permissions: ['read'], scope: 1 },
      { path: '/in', permissions: ['write'], scope: 2 },
    ],
    "the user's rules, then the group's",
  );

  const refused: [Record<string, unknown>, RegExp][] = [
    [{ scope: 3, paths: ['/docs'] }, /^"scope": a read-write share of \/docs goes beyond the share policy of "\/" \(permissions: read; allows read\)$/],
    [{ scope: 2, paths: ['/inbox'] }, /^"scope": a write share of \/inbox goes beyond the share policy of "\/" /],
    [{ scope: 1, paths: ['/in'] }, /^"scope": a read share of \/in goes beyond the share policy of "\/in" \(permissions: write; allows write\)$/],
  ];
  for (const [body, re] of refused) {
    r = await add(frank, { name: 'f', ...body });
    t.equal(r.statusCode, 400, `${JSON.stringify(body)}: ${r.payload}`);
    t.match(json(r), { message: re, error: 'Bad Request' });
  }
  t.equal((await ta.inject('GET', '/api/v2/user/shares', { token: frank })).payload, '[]', 'nothing created');

  const readId = await created(frank, { name: 'docs', scope: 1, paths: ['/docs'] });
  const inId = await created(frank, { name: 'in', paths: ['/in'] });
  t.equal(json(await get(frank, inId)).scope, 2, 'the scope of the policy');
  const openId = await created(frank, { name: 'open', scope: 3, paths: ['/in/open'] });
  t.equal(json(await get(frank, openId)).scope, 3, "the user's own rule for /in/open");

  const s = json(await get(frank, readId));
  r = await put(frank, readId, { ...s, scope: 3 });
  t.equal(r.statusCode, 400, r.payload);
  t.match(json(r).message, /^"scope": a read-write share of \/docs goes beyond the share policy of "\/"/);
  r = await put(frank, readId, { ...s, scope: 2 });
  t.equal(r.statusCode, 400, 'write is beyond read too');
  r = await put(frank, inId, { ...s, scope: 1, paths: ['/in'] });
  t.equal(r.statusCode, 400);
  t.match(json(r).message, /share policy of "\/in"/);
  t.equal(json(await get(frank, readId)).scope, 1, 'unchanged by refused updates');
  const { scope: _scope, ...noScope } = s;
  t.equal((await put(frank, readId, { ...noScope, name: 'renamed' })).statusCode, 200, 'an update without scope takes the policy');
  t.match(json(await get(frank, readId)), { name: 'renamed', scope: 1 });

  // a share made before the lock must come within the policy when it is next updated
  await updateUser(ta, 'frank', { groups: [] });
  const before = await created(frank, { name: 'before', scope: 3, paths: ['/docs'] });
  await updateUser(ta, 'frank', { groups: [{ name: 'locked-shares', type: 3 }] });
  r = await put(frank, before, json(await get(frank, before)));
  t.equal(r.statusCode, 400, 'an unchanged scope beyond the policy is refused on update');
  t.match(json(r).message, /goes beyond the share policy of "\/"/);
});

t.test('share_no_password_disabled and max_shares_expiration: refused on create and on update', async (t) => {
  const home = await addUser(ta, { username: 'gina', filters: { web_client: ['share_no_password_disabled'], max_shares_expiration: 5 } });
  dirs(home, 'docs');
  const gina = await ta.userToken('gina', PASSWORD);
  t.match(await policyOfUser(gina), { password_required: true, max_expiration_days: 5 });
  const soon = Date.now() + 2 * DAY;
  let r = await add(gina, { name: 'g', scope: 1, paths: ['/docs'], expires_at: soon });
  t.equal(r.statusCode, 400);
  t.match(json(r), { message: /^"password": shares of this account must have a password/, error: 'Bad Request' });
  r = await add(gina, { name: 'g', scope: 1, paths: ['/docs'], password: 'pw' });
  t.equal(r.statusCode, 400, 'no expiry');
  t.match(json(r).message, /^"expires_at": shares of this account must expire within 5 days/);
  r = await add(gina, { name: 'g', scope: 1, paths: ['/docs'], password: 'pw', expires_at: Date.now() + 6 * DAY });
  t.equal(r.statusCode, 400, 'too late');
  const id = await created(gina, { name: 'g', scope: 1, paths: ['/docs'], password: 'pw', expires_at: soon });
  const s = json(await get(gina, id));
  r = await put(gina, id, { ...s, password: '' });
  t.equal(r.statusCode, 400, 'the password cannot be removed');
  t.match(json(r).message, /^"password": shares of this account must have a password/);
  r = await put(gina, id, { ...s, expires_at: Date.now() + 6 * DAY });
  t.equal(r.statusCode, 400, 'the expiry cannot be moved beyond the maximum');
  t.match(json(r).message, /^"expires_at": shares of this account must expire within 5 days/);
  r = await put(gina, id, { ...s, expires_at: 0 });
  t.equal(r.statusCode, 400, 'nor removed');
  t.match(json(await get(gina, id)), { expires_at: soon, password: '[**redacted**]' }, 'unchanged by refused updates');
  t.equal((await put(gina, id, { ...s, name: 'kept', expires_at: Date.now() + 4 * DAY })).statusCode, 200, 'the redacted marker keeps the password');
});
