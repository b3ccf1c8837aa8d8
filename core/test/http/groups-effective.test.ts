import t from 'tap';
import { accountsApp, s3, user } from './accounts-helpers.js';
import { UserService } from '../../src/services/user.service.js';

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
  t.same(e.permissions, { '/sub': ['list'], '/': ['list'], '/eve-drop': ['upload'], '/extra': ['download'] }, "root from the primary group only; sub-paths from primary and secondary");
  t.equal(e.max_sessions, 2);
  t.equal(e.quota_size, 5000, 'filled from the primary group');
  t.equal(e.quota_files, 7, "the user's own value wins");
  t.equal(e.upload_bandwidth, 50);
  const created = (await ta.sql("select created_at from users where username = 'eve'"))[0]!.created_at;
  t.equal(e.expiration_date, Number(created) + 10 * 86_400_000, "expires_in days after creation");
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
  t.equal((e.virtual_folders[1]!.filesystem.s3config as Record<string, unknown>).key_prefix, 'eve/', "folder provider placeholders interpolated");
  t.same(e.groups, [{ name: 'prim', type: 1 }, { name: 'sec', type: 2 }, { name: 'mem', type: 3 }]);
  t.same(e.custom_placeholders, ['c1', 'c2']);

  const light = await users.effectiveUser('eve', { folders: false });
  t.same(light.virtual_folders, [], 'folders skipped for login checks');
  t.same(light.filters, e.filters);
});

t.test("the user's own settings win over the primary group", async (t) => {
  const sftp = { provider: 5, sftpconfig: { endpoint: 'h:22', username: 'u', password: 'pw-x', prefix: '/p/%username%' } };
  await ok('POST', '/api/v2/users', user('own', { home_dir: '/own/%username%', filesystem: sftp, quota_size: 1, permissions: { '/': ['download'], '/own-drop': ['list'] }, filters: { max_upload_file_size: 9, web_client: ['mfa-disabled'] }, groups: [{ name: 'prim', type: 1 }] }));
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
  const r2 = await ta.inject('POST', '/api/v2/users', { token, payload: { username: 'hg2', password: 'x', permissions: { '/': ['*'] }, groups: [{ name: 'home-only', type: 2 }] } });
  t.equal(r2.statusCode, 400, 'a secondary group does not supply home_dir');
  t.match(ta.json(r2).message, /"home_dir" is required/);
  const r3 = await ta.inject('POST', '/api/v2/users', { token, payload: { username: 'hg3', password: 'x', groups: [{ name: 'sec', type: 1 }], home_dir: '/x' } });
  t.equal(r3.statusCode, 201, "the primary group's root permissions count");
});

t.test('unknown users', async (t) => {
  await t.rejects(users.effectiveUser('nobody'), /user "nobody" not found/);
  t.equal(await users.findEffectiveUser('nobody'), null);
});

t.test('group changes apply to members at the next login', async (t) => {
  await ok('PUT', '/api/v2/groups/prim', { name: 'prim', user_settings: { home_dir: '/moved/%username%', permissions: { '/': ['*'] } } });
  const e = await users.effectiveUser('eve');
  t.equal(e.home_dir, '/moved/eve');
  t.equal(e.filesystem.provider, 0);
  t.equal(e.quota_size, 0, 'no quota from the primary any more; membership groups supply none');
});
