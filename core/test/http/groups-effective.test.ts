import t from 'tap';
import { accountsApp, s3, user } from './accounts-helpers.js';
import { UserService } from '../../src/accounts/user.service.js';

const ta = await accountsApp();
t.teardown(() => ta.close());
const { token } = ta;
const users = ta.app.container.resolve(UserService);

async function ok(method: string, url: string, payload: unknown) {
  const r = await ta.inject(method, url, { token, payload });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.payload}`);
  return ta.json(r);
}

await ok('POST', '/api/v2/roles', { name: 'r-eng' });
await ok('POST', '/api/v2/folders', { name: 'fa', mapped_path: '/data/fa/%username%' });
await ok('POST', '/api/v2/folders', { name: 'fb', filesystem: s3({ key_prefix: '%username%/' }) });
await ok('POST', '/api/v2/folders', { name: 'fc', mapped_path: '/data/fc' });
await ok('POST', '/api/v2/groups', {
  name: 'prim',
  user_settings: {
    home_dir: '/srv/%role%/%username%/%custom1%',
    max_sessions: 2,
    quota_size: 5000,
    permissions: { '/': ['list'], '/%username%-drop': ['upload'] },
    upload_bandwidth: 50,
    expires_in: 10,
    filesystem: s3({ key_prefix: 'users/%username%/' }),
    filters: {
      denied_protocols: ['FTP'],
      max_upload_file_size: 1000,
      allowed_ip: ['10.0.0.0/8'],
      web_client: ['write-disabled'],
      file_patterns: [{ path: '/docs', denied_patterns: ['*.exe'] }],
    },
  },
  virtual_folders: [{ name: 'fa', virtual_path: '/team-%custom2%' }],
});
await ok('POST', '/api/v2/groups', {
  name: 'sec',
  user_settings: {
    permissions: { '/': ['*'], '/extra': ['download'] },
    quota_files: 99,
    filters: { denied_protocols: ['DAV'], allowed_ip: ['192.168.0.0/16'], max_upload_file_size: 5 },
  },
  virtual_folders: [
    { name: 'fb', virtual_path: '/shared' },
    { name: 'fc', virtual_path: '/mine' },
  ],
});
await ok('POST', '/api/v2/groups', {
  name: 'mem',
  user_settings: {
    quota_size: 1,
    filters: {
      default_shares_policies: [{ path: '/', permissions: ['read'] }],
      web_client: ['shares-without-password-disabled', 'write-disabled'],
      max_shares_expiration: 30,
      denied_protocols: ['HTTP'],
    },
  },
  virtual_folders: [{ name: 'fc', virtual_path: '/never' }],
});

t.test('primary, secondary and membership groups merge into the effective user', async (t) => {
  const c = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: {
      username: 'eve',
      password: 'eve-pw',
      role: 'r-eng',
      custom_placeholders: ['c1', 'c2'],
      permissions: { '/sub': ['list'] },
      quota_files: 7,
      filters: { denied_ip: ['1.2.3.4'] },
      virtual_folders: [{ name: 'fc', virtual_path: '/mine', quota_size: 0, quota_files: 0 }],
      groups: [
        { name: 'prim', type: 1 },
        { name: 'sec', type: 2 },
        { name: 'mem', type: 3 },
      ],
    },
  });
  t.equal(c.statusCode, 201, c.payload);
  t.match(ta.json(c), { home_dir: '', filesystem: { provider: 0 } }, 'the stored user keeps its own (empty) settings');

  const e = await users.effectiveUser('eve');
  t.equal(e.username, 'eve');
  t.equal(e.role, 'r-eng');
  t.equal(e.home_dir, '/srv/r-eng/eve/c1', 'home_dir from the primary group, placeholders interpolated');
  t.equal(e.filesystem.provider, 1, "a user on provider 0 takes the primary group's filesystem");
  const s3c = e.filesystem.s3config as Record<string, any>;
  t.equal(s3c.key_prefix, 'users/eve/', 'placeholder fields of the provider interpolated');
  t.match(s3c.access_secret, { status: 'AES-256-GCM', payload: String }, 'secrets stay encrypted');
  t.same(
    e.permissions,
    { '/sub': ['list'], '/': ['list'], '/eve-drop': ['upload'], '/extra': ['download'] },
    'root from the primary group only; sub-paths from primary and secondary',
  );
  t.equal(e.max_sessions, 2);
  t.equal(e.quota_size, 5000, 'filled from the primary group');
  t.equal(e.quota_files, 7, "the user's own value wins");
  t.equal(e.upload_bandwidth, 50);
  const created = (await ta.sql("select created_at from users where username = 'eve'"))[0]!.created_at;
  t.equal(e.expiration_date, Number(created) + 10 * 86_400_000, 'expires_in days after creation');
  t.same(e.filters.denied_ip, ['1.2.3.4']);
  t.same(e.filters.denied_protocols, ['FTP', 'DAV'], 'additive from primary and secondary, not membership');
  t.same(e.filters.allowed_ip, ['10.0.0.0/8', '192.168.0.0/16']);
  t.equal(e.filters.max_upload_file_size, 1000, 'scalar filters from the primary group only');
  t.same(e.filters.web_client, ['write-disabled', 'shares-without-password-disabled'], 'share options from every group');
  t.same(e.filters.file_patterns, [{ path: '/docs', denied_patterns: ['*.exe'] }]);
  t.same(e.filters.default_shares_policies, [{ path: '/', permissions: ['read'] }], 'share policies from a membership group');
  t.equal(e.filters.max_shares_expiration, 30);
  t.same(
    e.virtual_folders.map((v) => [v.virtual_path, v.name, v.quota_size, v.mapped_path]),
    [
      ['/mine', 'fc', 0, '/data/fc'],
      ['/shared', 'fb', -1, ''],
      ['/team-c2', 'fa', -1, '/data/fa/eve'],
    ],
    "the user's folders, then the groups' at free paths (placeholders interpolated); membership groups add none",
  );
  t.equal((e.virtual_folders[1]!.filesystem.s3config as Record<string, unknown>).key_prefix, 'eve/', 'folder provider placeholders interpolated');
  t.same(e.groups, [
    { name: 'prim', type: 1 },
    { name: 'sec', type: 2 },
    { name: 'mem', type: 3 },
  ]);
  t.same(e.custom_placeholders, ['c1', 'c2']);

  const light = await users.effectiveUser('eve', { folders: false });
  t.same(light.virtual_folders, [], 'folders skipped for login checks');
  t.same(light.filters, e.filters);
});

t.test("the user's own settings win over the primary group", async (t) => {
  const sftp = { provider: 5, sftpconfig: { endpoint: 'h:22', username: 'u', password: 'pw-x', prefix: '/p/%username%' } };
  await ok(
    'POST',
    '/api/v2/users',
    user('own', {
      home_dir: '/own/%username%',
      custom_placeholders: ['o1', 'o2'],
      filesystem: sftp,
      quota_size: 1,
      permissions: { '/': ['download'], '/own-drop': ['list'] },
      filters: { max_upload_file_size: 9, web_client: ['mfa-disabled'] },
      groups: [{ name: 'prim', type: 1 }],
    }),
  );
  const e = await users.effectiveUser('own');
  t.equal(e.home_dir, '/own/own');
  t.equal(e.filesystem.provider, 5);
  t.equal((e.filesystem.sftpconfig as Record<string, unknown>).prefix, '/p/own');
  t.equal(e.quota_size, 1);
  t.same(e.permissions['/'], ['download']);
  t.same(e.permissions['/own-drop'], ['list']);
  t.equal(e.filters.max_upload_file_size, 9);
  t.same(e.filters.web_client, ['mfa-disabled']);
  t.equal(e.expiration_date > 0, true);
});

t.test('validation uses the primary group: home_dir and root permissions may come from it', async (t) => {
  await ok('POST', '/api/v2/groups', { name: 'home-only', user_settings: { home_dir: '/srv/h/%username%', permissions: { '/': ['*'] } } });
  const r = await ta.inject('POST', '/api/v2/users', { token, payload: { username: 'hg', password: 'hg-pw', groups: [{ name: 'home-only', type: 1 }] } });
  t.equal(r.statusCode, 201, r.payload);
  t.equal((await users.effectiveUser('hg')).home_dir, '/srv/h/hg');
  const r2 = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: { username: 'hg2', password: 'x', permissions: { '/': ['*'] }, groups: [{ name: 'home-only', type: 2 }] },
  });
  t.equal(r2.statusCode, 400, 'a secondary group does not supply home_dir');
  t.match(ta.json(r2).message, /"home_dir" is required/);
  const r3 = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: { username: 'hg3', password: 'x', groups: [{ name: 'sec', type: 1 }], home_dir: '/x' },
  });
  t.equal(r3.statusCode, 201, "the primary group's root permissions count");
});

t.test('unknown users', async (t) => {
  await t.rejects(users.effectiveUser('nobody'), /user "nobody" not found/);
  t.equal(await users.findEffectiveUser('nobody'), null);
});

t.test('%custom10% and %role% in a key prefix', async (t) => {
  await ok('POST', '/api/v2/groups', {
    name: 'ten',
    user_settings: {
      home_dir: '/srv/%custom10%/%custom1%',
      permissions: { '/': ['*'] },
      filesystem: s3({ key_prefix: 'tenants/%role%/%username%/%custom10%/' }),
    },
  });
  const values = Array.from({ length: 10 }, (_, i) => `v${i + 1}`);
  await ok('POST', '/api/v2/users', { username: 'ten-u', password: 'ten-pw', role: 'r-eng', custom_placeholders: values, groups: [{ name: 'ten', type: 1 }] });
  const e = await users.effectiveUser('ten-u');
  t.equal(e.home_dir, '/srv/v10/v1', '%custom10% is the tenth value, not %custom1% followed by "0"');
  t.equal((e.filesystem.s3config as Record<string, unknown>).key_prefix, 'tenants/r-eng/ten-u/v10/', '%role% interpolated in the key prefix');
  t.ok(await ta.userToken('ten-u', 'ten-pw'), 'a user with every value logs in');
});

/** The error effectiveUser() rejects with, or null when it resolves. */
const refusal = (username: string) =>
  users.effectiveUser(username).then(
    () => null,
    (e: unknown) => e as { kind: string; message: string; data: unknown },
  );

t.test('a placeholder without a value refuses the user instead of collapsing the path', async (t) => {
  await ok('POST', '/api/v2/groups', { name: 'team-home', user_settings: { home_dir: '/srv/team/%custom1%', permissions: { '/': ['*'] } } });
  await ok('POST', '/api/v2/groups', {
    name: 'role-prefix',
    user_settings: { permissions: { '/': ['*'] }, filesystem: s3({ key_prefix: 'tenants/%role%/%username%/' }) },
  });
  await ok('POST', '/api/v2/groups', { name: 'team-perm', user_settings: { permissions: { '/%custom3%': ['*'] } } });
  for (const [name, extra] of [
    ['nc-a', {}],
    ['nc-b', { custom_placeholders: ['', 'second'] }],
  ] as const) {
    await ok('POST', '/api/v2/users', { username: name, password: `${name}-pw`, ...extra, groups: [{ name: 'team-home', type: 1 }] });
  }
  for (const name of ['nc-a', 'nc-b']) {
    const err = await refusal(name);
    t.equal(err?.kind, 'forbidden', `${name}: refused, not given the shared /srv/team`);
    t.match(
      err?.message,
      /user "nc-[ab]" cannot be used until its placeholders have values: "\/srv\/team\/%custom1%" needs %custom1% \(custom_placeholders\[0\] is not set\)/,
    );
    t.same(err?.data, { missing_placeholders: ['%custom1%'] });
    const tok = await ta.inject('GET', '/api/v2/user/token', { basic: { username: name, password: `${name}-pw` } });
    t.equal(tok.statusCode, 403, `${name}: no token`);
    t.match(ta.json(tok), { error: 'Forbidden', message: /needs %custom1%/ });
    t.notOk(ta.json(tok).access_token);
  }
  const wrong = await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'nc-a', password: 'not-the-password' } });
  t.equal(wrong.statusCode, 401, 'a wrong password learns nothing about the account');
  t.notMatch(wrong.payload, /custom/);

  // once the value is set, the user logs in with its own directory
  await ok('PUT', '/api/v2/users/nc-a', { username: 'nc-a', custom_placeholders: ['alpha'], groups: [{ name: 'team-home', type: 1 }] });
  t.equal((await users.effectiveUser('nc-a')).home_dir, '/srv/team/alpha');
  t.ok(await ta.userToken('nc-a', 'nc-a-pw'));

  // %role% without a role, in a provider's key prefix
  await ok('POST', '/api/v2/users', user('nr', { groups: [{ name: 'role-prefix', type: 1 }] }));
  await t.rejects(users.effectiveUser('nr'), { kind: 'forbidden', message: /"tenants\/%role%\/%username%\/" needs %role% \(the user has no role\)/ });
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'nr', password: 'nr-password' } })).statusCode, 403);
  await ok('POST', '/api/v2/users', user('wr', { role: 'r-eng', groups: [{ name: 'role-prefix', type: 1 }] }));
  t.equal(((await users.effectiveUser('wr')).filesystem.s3config as Record<string, unknown>).key_prefix, 'tenants/r-eng/wr/');

  // a group permission path '/%custom3%' must not become '/'
  await ok('POST', '/api/v2/users', user('np', { permissions: { '/': ['list'] }, groups: [{ name: 'team-perm', type: 2 }] }));
  t.match(await refusal('np'), { kind: 'forbidden', data: { missing_placeholders: ['%custom3%'] } });

  // a group template the user overrides does not count
  await ok('POST', '/api/v2/users', user('ovr', { home_dir: '/srv/own-dir', groups: [{ name: 'team-home', type: 1 }] }));
  t.equal((await users.effectiveUser('ovr')).home_dir, '/srv/own-dir');

  // a secondary group's virtual path: the token (no folders) is issued, the file API refuses with the reason
  await ok('POST', '/api/v2/groups', { name: 'team-vf', virtual_folders: [{ name: 'fc', virtual_path: '/team-%custom2%' }] });
  await ok('POST', '/api/v2/users', user('nv', { custom_placeholders: ['one'], groups: [{ name: 'team-vf', type: 2 }] }));
  t.ok((await users.effectiveUser('nv', { folders: false })).home_dir);
  t.match(await refusal('nv'), { kind: 'forbidden', data: { missing_placeholders: ['%custom2%'] } });
  const utok = await ta.userToken('nv', 'nv-password');
  const dirs = await ta.inject('GET', '/api/v2/user/dirs', { token: utok });
  t.equal(dirs.statusCode, 403, dirs.payload);
  t.match(ta.json(dirs).message, /"\/team-%custom2%" needs %custom2%/);

  // an admin's quota scan of such a user: 400 naming the placeholder
  const scan = await ta.inject('POST', '/api/v2/quotas/users/nc-b/scan', { token });
  t.equal(scan.statusCode, 400);
  t.match(ta.json(scan), { error: 'Bad Request', message: /needs %custom1%/ });
});

t.test('group changes apply to members at the next login', async (t) => {
  await ok('PUT', '/api/v2/groups/prim', { name: 'prim', user_settings: { home_dir: '/moved/%username%', permissions: { '/': ['*'] } } });
  const e = await users.effectiveUser('eve');
  t.equal(e.home_dir, '/moved/eve');
  t.equal(e.filesystem.provider, 0);
  t.equal(e.quota_size, 0, 'no quota from the primary any more; membership groups supply none');
});
