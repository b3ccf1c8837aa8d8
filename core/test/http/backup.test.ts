import t from 'tap';
import Boom from '@hapi/boom';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { accountsApp, FS_FIXTURE, s3, tmpDir, user, type AccountsApp } from './accounts-helpers.js';
import { User } from '../../src/data/entities/index.js';
import { UserService } from '../../src/accounts/user.service.js';
import { FsFactory } from '../../src/vfs/fs-factory.js';
import { ConnectionManager } from '../../src/vfs/connection-manager.js';
import { QuotaScanService } from '../../src/vfs/quota-scan.service.js';
import { ApiKeyService } from '../../src/accounts/api-key.service.js';
import { BackupRegistry } from '../../src/backup/registry.js';

const backupsA = tmpDir('ferry-bk-a-');
const backupsB = tmpDir('ferry-bk-b-');
// event action types come from a plugin: the test-actions fixture registers 101 and 102
const actionsFixture = (app: string) => ({ name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app } });
const A = await accountsApp({ plugins: [FS_FIXTURE, actionsFixture('acc-bk-a')], config: { common: { backups_dir: backupsA } } });
const B = await accountsApp({ plugins: [FS_FIXTURE, actionsFixture('acc-bk-b')], config: { common: { backups_dir: backupsB } } });
t.teardown(async () => {
  await A.close();
  await B.close();
});

async function ok(app: AccountsApp, method: string, url: string, payload?: unknown) {
  const r = await app.inject(method, url, { token: app.token, payload });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.payload}`);
  return r.payload ? app.json(r) : undefined;
}

const dump = async (app: AccountsApp, q = '') => {
  const r = await app.inject('GET', `/api/v2/dumpdata?output-data=1${q}`, { token: app.token });
  if (r.statusCode !== 200) throw new Error(`dumpdata: ${r.statusCode} ${r.payload}`);
  return { text: r.payload, data: app.json(r) };
};
const load = (app: AccountsApp, data: unknown, q = '') => app.inject('POST', `/api/v2/loaddata${q}`, { token: app.token, payload: data as object });

// a populated instance A
const homeQ = tmpDir();
writeFileSync(path.join(homeQ, 'f.bin'), Buffer.alloc(64));
await ok(A, 'POST', '/api/v2/roles', { name: 'ops', description: 'operations' });
await ok(A, 'POST', '/api/v2/folders', { name: 'local-f', mapped_path: '/srv/local-f', description: 'local' });
await ok(A, 'POST', '/api/v2/folders', { name: 'cloud-f', filesystem: s3({ access_secret: { status: 'Plain', payload: 'FOLDER-SECRET-1' } }) });
await ok(A, 'POST', '/api/v2/groups', {
  name: 'g-prim',
  description: 'primary',
  user_settings: {
    home_dir: '/srv/%username%',
    quota_size: 1000,
    filesystem: s3({ access_secret: { status: 'Plain', payload: 'GROUP-SECRET-1' } }),
    filters: { denied_protocols: ['FTP'] },
  },
  virtual_folders: [{ name: 'cloud-f', virtual_path: '/cloud' }],
});
await ok(A, 'POST', '/api/v2/groups', { name: 'g-mem' });
await ok(
  A,
  'POST',
  '/api/v2/users',
  user('alice', {
    email: 'alice@example.test',
    role: 'ops',
    custom_placeholders: ['x'],
    groups: [
      { name: 'g-prim', type: 1 },
      { name: 'g-mem', type: 3 },
    ],
    virtual_folders: [{ name: 'local-f', virtual_path: '/local', quota_size: 10, quota_files: 1 }],
    filters: { allow_api_key_auth: true },
  }),
);
await ok(A, 'POST', '/api/v2/users', user('bob', { filesystem: s3({ access_secret: { status: 'Plain', payload: 'USER-SECRET-1' } }), quota_files: 9 }));
await ok(A, 'POST', '/api/v2/users', user('quentin', { home_dir: homeQ, quota_size: 100000 }));
await ok(A, 'PUT', '/api/v2/quotas/users/bob/usage', { used_quota_size: 4242, used_quota_files: 42 });
await ok(A, 'PUT', '/api/v2/quotas/users/bob/transfer-usage', { used_upload_data_transfer: 7, used_download_data_transfer: 8 });
await ok(A, 'PUT', '/api/v2/quotas/folders/local-f/usage', { used_quota_size: 99, used_quota_files: 3 });
{
  const em = A.app.orm.em.fork();
  const bob = await em.findOneOrFail(User, { username: 'bob' });
  const secrets = A.app.container.resolve<import('../../src/secrets/secret.js').SecretsService>(Symbol.for('ferry.Secrets'));
  bob.filters = {
    ...bob.filters,
    totp_config: { enabled: true, config_name: 'Default', secret: await secrets.encrypt('TOTP-SEED-1', 'bob'), protocols: ['HTTP'] },
  };
  await em.flush();
}
await ok(A, 'POST', '/api/v2/admins', {
  username: 'opsadmin',
  password: 'opsadmin-pw',
  permissions: ['view_users'],
  role: 'ops',
  groups: [{ name: 'g-mem', options: { add_to_users_as: 0 } }],
  filters: { allow_api_key_auth: true },
});
const adminKey = (await ok(A, 'POST', '/api/v2/apikeys', { name: 'ops-key', scope: 1, admin: 'opsadmin', description: 'k' })).key as string;
const userKey = (await ok(A, 'POST', '/api/v2/apikeys', { name: 'alice-key', scope: 2, user: 'alice' })).key as string;
// shares (restored: creating one through the user API needs a real backend to check its paths)
{
  const r = await A.inject('POST', '/api/v2/loaddata', {
    token: A.token,
    payload: {
      shares: [
        {
          id: 'alice-docs-1',
          name: 'alice docs',
          scope: 1,
          paths: ['/local', '/cloud/report.pdf'],
          username: 'alice',
          password: 'SHARE-PASS-1',
          expires_at: 4102444800000,
          max_tokens: 5,
          used_tokens: 2,
          allow_from: ['10.0.0.0/8'],
          created_at: 1700000000000,
          updated_at: 1700000000001,
          last_use_at: 1700000000002,
        },
        { id: 'bob-drop', name: 'bob drop box', scope: 2, paths: ['/in'], username: 'bob' },
      ],
    },
  });
  if (r.statusCode !== 200) throw new Error(`loaddata shares: ${r.statusCode} ${r.payload}`);
}
// event actions and rules, IP lists
await ok(A, 'POST', '/api/v2/eventactions', {
  name: 'notify',
  description: 'notifies',
  type: 101,
  options: { test_config: { message: 'up {{.VirtualPath}} by {{.Name}}', token: { status: 'Plain', payload: 'ACTION-SECRET-1' } } },
});
await ok(A, 'POST', '/api/v2/eventactions', { name: 'scheduled-only', type: 102 });
await ok(A, 'POST', '/api/v2/eventrules', {
  name: 'uploads',
  trigger: 1,
  conditions: { fs_events: ['upload'], options: { names: [{ pattern: 'al*' }], min_size: 10 } },
  actions: [{ name: 'notify', order: 1, relation_options: { stop_on_failure: true } }],
});
await ok(A, 'POST', '/api/v2/eventrules', {
  name: 'nightly',
  status: 0,
  trigger: 3,
  conditions: { schedules: [{ minute: '30', hour: '2', day_of_week: '*', day_of_month: '*', month: '*' }] },
  actions: [{ name: 'scheduled-only' }],
});
await ok(A, 'POST', '/api/v2/iplists/1', { ipornet: '192.168.1.10', description: 'office', protocols: 8 });
await ok(A, 'POST', '/api/v2/iplists/2', { ipornet: '203.0.113.0/24', mode: 2, description: 'banned net' });
await ok(A, 'POST', '/api/v2/iplists/3', { ipornet: '2001:db8::/32' });
const PLAIN = [
  'FOLDER-SECRET-1',
  'GROUP-SECRET-1',
  'USER-SECRET-1',
  'TOTP-SEED-1',
  'ACTION-SECRET-1',
  'SHARE-PASS-1',
  'alice-password',
  'opsadmin-pw',
  adminKey.split('.')[1]!,
];

t.test('dump: every section, secrets encrypted, hashes kept, no plaintext', async (t) => {
  const { text, data } = await dump(A);
  t.same(Object.keys(data).sort(), [
    'admins',
    'api_keys',
    'event_actions',
    'event_rules',
    'folders',
    'groups',
    'ip_lists',
    'roles',
    'shares',
    'users',
    'version',
  ]);
  t.equal(data.version, 1);
  t.same(
    data.users.map((u: { username: string }) => u.username),
    ['alice', 'bob', 'quentin'],
  );
  for (const p of PLAIN) t.notOk(text.includes(p), `${p.slice(0, 12)}... not in the dump`);
  const bob = data.users.find((u: { username: string }) => u.username === 'bob');
  t.match(bob.password, /^\$argon2id\$/, 'password hash dumped');
  t.match(bob.filesystem.s3config.access_secret, { status: 'AES-256-GCM', payload: String, key: String, additional_data: 'bob' });
  t.match(bob.filters.totp_config, { enabled: true, secret: { status: 'AES-256-GCM', payload: String } });
  t.match(bob, { used_quota_size: 4242, used_quota_files: 42, used_upload_data_transfer: 7 });
  t.notOk('id' in bob || 'has_password' in bob);
  t.match(data.api_keys[0], { key: /^[0-9a-f]{64}$/ });
  t.match(
    data.groups.find((g: { name: string }) => g.name === 'g-prim'),
    { virtual_folders: [{ name: 'cloud-f', virtual_path: '/cloud' }], user_settings: { filesystem: { s3config: { access_secret: { payload: String } } } } },
  );
  t.match(
    data.admins.find((a: { username: string }) => a.username === 'opsadmin'),
    { role: 'ops', groups: [{ name: 'g-mem' }], password: /^\$argon2id\$/ },
  );
  t.same(data.shares.map((x: { id: string }) => x.id).sort(), ['alice-docs-1', 'bob-drop']);
  t.match(
    data.shares.find((x: { id: string }) => x.id === 'alice-docs-1'),
    { username: 'alice', password: /^\$argon2id\$/, used_tokens: 2, allow_from: ['10.0.0.0/8'] },
  );
  t.same(
    data.event_actions.map((x: { name: string }) => x.name),
    ['notify', 'scheduled-only'],
  );
  t.match(data.event_actions[0], { options: { test_config: { token: { status: 'AES-256-GCM', payload: String } } } });
  t.same(
    data.event_rules.map((x: { name: string }) => x.name),
    ['nightly', 'uploads'],
  );
  t.equal(data.ip_lists.length, 3);

  const scoped = await dump(A, '&scopes=users,roles');
  t.same(Object.keys(scoped.data).sort(), ['roles', 'users', 'version']);
  t.same(Object.keys((await dump(A, '&scopes=folders&scopes=groups')).data).sort(), ['folders', 'groups', 'version']);
  t.match((await dump(A, '&indent=1&scopes=roles')).text, /^\{\n {2}"roles": \[/);
});

t.test('restore into an empty instance: identical second dump, logins and API keys keep working', async (t) => {
  const first = await dump(A);
  const r = await load(B, first.data);
  t.equal(r.statusCode, 200, r.payload);
  t.match(B.json(r), { message: String });
  const second = await dump(B);
  t.same(second.data, first.data, 'identical dump');
  t.equal(second.text, first.text, 'byte for byte');
  t.ok(await B.userToken('alice', 'alice-password'), 'password hash restored');
  t.ok(await B.adminToken('opsadmin', 'opsadmin-pw'));
  for (const section of ['shares', 'event_actions', 'event_rules', 'ip_lists']) t.ok(second.data[section].length >= 2, `${section} restored`);
  t.equal((await B.inject('GET', '/api/v2/users', { apiKey: adminKey })).statusCode, 200, 'admin API key works on the restored instance');
  t.match(
    await B.app.container.resolve(ApiKeyService).authenticate(userKey),
    { key: { scope: 2, user: { username: 'alice' } } },
    'user API key hash preserved',
  );
  const eff = await B.app.container.resolve(UserService).effectiveUser('bob');
  const opts = await B.app.container.resolve(FsFactory).options(eff.filesystem, { username: 'bob' });
  t.equal(opts.access_secret, 'USER-SECRET-1', 'secrets restored as-is, still decryptable');
  const kinds = B.events.filter((e) => e.action === 'add').map((e) => `${e.object_type}:${e.object_name}`);
  t.ok(
    kinds.includes('user:alice') &&
      kinds.includes('group:g-prim') &&
      kinds.includes('folder:cloud-f') &&
      kinds.includes('role:ops') &&
      kinds.includes('api_key:' + adminKey.split('.')[0]),
  );
  t.ok(
    B.events.some((e) => e.action === 'update' && e.object_type === 'admin' && e.object_name === 'admin'),
    'the existing admin was updated',
  );
  const ev = JSON.stringify(B.events);
  for (const p of PLAIN) t.notOk(ev.includes(p), 'no secret in restore events');
  t.notOk(/"payload"|argon2/.test(ev));
});

t.test('a restore is validated whole before anything is written', async (t) => {
  const before = await dump(B);
  const bad = {
    groups: [{ name: 'new-group' }],
    users: [user('fresh', { groups: [{ name: 'new-group', type: 2 }] }), user('broken', { home_dir: 'relative' })],
  };
  const r = await load(B, bad);
  t.equal(r.statusCode, 400);
  t.match(B.json(r).message, /users\[1\] "broken": "home_dir" must be an absolute path/);
  t.same((await dump(B)).data, before.data, 'nothing written');
  const cases: [unknown, RegExp][] = [
    [{ users: [user('x1', { groups: [{ name: 'nowhere', type: 2 }] })] }, /users\[0\] "x1": "groups": group "nowhere" does not exist/],
    [
      { users: [user('x2', { virtual_folders: [{ name: 'nofolder', virtual_path: '/n' }] })] },
      /users\[0\] "x2": "virtual_folders": folder "nofolder" does not exist/,
    ],
    [{ users: [user('x3', { filesystem: { provider: 99 } })] }, /users\[0\] "x3": "filesystem.provider": filesystem provider 99/],
    [{ users: [user('dup'), user('dup')] }, /users\[1\]: "dup" appears more than once/],
    [
      {
        folders: [
          {
            name: 'f',
            filesystem: {
              provider: 1,
              s3config: { bucket: 'b', access_secret: { status: 'AES-256-GCM', payload: 'Z2FyYmFnZWdhcmJhZ2VnYXJiYWdlZ2FyYmFnZQ==', key: 'eA==' } },
            },
          },
        ],
      },
      /folders\[0\] "f": "filesystem.s3config.access_secret": the encrypted secret cannot be decrypted/,
    ],
    [{ admins: [{ username: 'a1', permissions: ['*'] }] }, /admins\[0\] "a1": "password" is required/],
    [{ admins: [{ username: 'a2', password: 'x', permissions: ['fly'] }] }, /admins\[0\] "a2": "permissions\[0\]" must be one of/],
    [{ api_keys: [{ id: 'abcdefgh1', key: 'nothex', name: 'k', scope: 1 }] }, /api_keys\[0\] "abcdefgh1": "key"/],
    [{ api_keys: [{ id: 'abcdefgh2', key: 'a'.repeat(64), name: 'k', scope: 2, user: 'ghost' }] }, /api_keys\[0\] "abcdefgh2": user "ghost" does not exist/],
    [{ roles: [{ name: 'bad/role' }] }, /roles\[0\] "bad\/role": "name"/],
    [{ shares: [{ id: 's', name: 'n', scope: 1, paths: ['/'], username: 'ghost' }] }, /shares\[0\] "s": user "ghost" does not exist/],
    [{ users: {} }, /"users" must be an array/],
    [{ version: 'x' }, /"version" must be a non-negative integer/],
    [[], /must be a BackupData object/],
  ];
  for (const [data, re] of cases) {
    const res = await load(B, data);
    t.equal(res.statusCode, 400, JSON.stringify(data).slice(0, 100));
    t.match(B.json(res).message, re);
  }
  // a member this server does not know (another revision's section, a plugin not loaded here) is left out, not refused
  const other = await load(B, { configs: [{ name: 'c' }], fz_future: { x: 1 } });
  t.equal(other.statusCode, 200, other.payload);
  t.same((await dump(B)).data, before.data, 'still nothing written');
  // references inside one backup resolve
  const good = await load(B, bad.groups && { groups: bad.groups, users: [bad.users[0]] });
  t.equal(good.statusCode, 200, good.payload);
  t.same((await ok(B, 'GET', '/api/v2/users/fresh')).groups, [{ name: 'new-group', type: 2 }]);
});

t.test('modes: 0 updates, 1 keeps existing, 2 updates and disconnects; scan-quota', async (t) => {
  const cm = B.app.container.resolve(ConnectionManager);
  const conn = () => cm.open({ username: 'bob', protocol: 'HTTP', remote_address: '127.0.0.1', client_version: '', command: '', role: '' });
  const { data } = await dump(B, '&scopes=users');
  const bob = data.users.find((u: { username: string }) => u.username === 'bob');
  const c1 = conn();
  t.equal((await load(B, { users: [{ ...bob, email: 'kept@example.test' }, user('mode1-new')] }, '?mode=1')).statusCode, 200);
  t.equal((await ok(B, 'GET', '/api/v2/users/bob')).email, '', 'mode 1 keeps the existing object');
  t.equal((await B.inject('GET', '/api/v2/users/mode1-new', { token: B.token })).statusCode, 200, 'and adds new ones');
  t.equal((await load(B, { users: [{ ...bob, email: 'm0@example.test' }] }, '?mode=0')).statusCode, 200);
  t.equal((await ok(B, 'GET', '/api/v2/users/bob')).email, 'm0@example.test', 'mode 0 updates');
  t.notOk(c1.controller.signal.aborted, 'mode 0 leaves connections alone');
  t.equal((await load(B, { users: [{ ...bob, email: 'm2@example.test' }] }, '?mode=2')).statusCode, 200);
  t.equal((await ok(B, 'GET', '/api/v2/users/bob')).email, 'm2@example.test');
  t.ok(c1.controller.signal.aborted, 'mode 2 disconnects updated users');
  t.equal((await load(B, {}, '?mode=3')).statusCode, 400);
  t.equal((await load(B, {}, '?scan-quota=5')).statusCode, 400);

  // scan-quota=1: restored users are scanned
  const quentin = data.users.find((u: { username: string }) => u.username === 'quentin');
  await ok(B, 'PUT', '/api/v2/quotas/users/quentin/usage', { used_quota_size: 1, used_quota_files: 1 });
  t.equal((await load(B, { users: [{ ...quentin, used_quota_size: 0, used_quota_files: 0 }] }, '?scan-quota=1')).statusCode, 200);
  await B.app.container.resolve(QuotaScanService).idle();
  t.match(await ok(B, 'GET', '/api/v2/users/quentin'), { used_quota_size: 64, used_quota_files: 1 });
  // scan-quota=2: only users with a quota
  await ok(B, 'PUT', '/api/v2/quotas/users/mode1-new/usage', { used_quota_size: 5 });
  t.equal((await load(B, { users: [user('mode1-new', { used_quota_size: 0 })] }, '?scan-quota=2')).statusCode, 200);
  await B.app.container.resolve(QuotaScanService).idle();
  t.equal((await ok(B, 'GET', '/api/v2/users/mode1-new')).used_quota_size, 0, 'restored counter, no scan');
});

t.test('files: output-file and input-file stay inside the backups directory', async (t) => {
  const r = await A.inject('GET', '/api/v2/dumpdata?output-file=nightly/a.json&indent=1', { token: A.token });
  t.equal(r.statusCode, 200, r.payload);
  t.match(A.json(r).message, /nightly\/a\.json/);
  const file = path.join(backupsA, 'nightly', 'a.json');
  t.ok(existsSync(file));
  t.equal(statSync(file).mode & 0o777, 0o600, 'written 0600');
  t.same(JSON.parse(readFileSync(file, 'utf8')), (await dump(A)).data);
  writeFileSync(path.join(backupsB, 'from-a.json'), readFileSync(file));
  t.equal((await B.inject('GET', '/api/v2/loaddata?input-file=from-a.json&mode=1', { token: B.token })).statusCode, 200);
  for (const bad of ['../escape.json', '/etc/passwd', 'a/../../b.json', '..%2Fx.json', 'x%00y']) {
    const w = await A.inject('GET', `/api/v2/dumpdata?output-file=${bad}`, { token: A.token });
    t.equal(w.statusCode, 400, `write ${bad}`);
    t.match(A.json(w).message, /"output-file"/);
    const rd = await B.inject('GET', `/api/v2/loaddata?input-file=${bad}`, { token: B.token });
    t.equal(rd.statusCode, 400, `read ${bad}`);
  }
  t.notOk(existsSync(path.join(path.dirname(backupsA), 'escape.json')));
  t.match(B.json(await B.inject('GET', '/api/v2/loaddata?input-file=missing.json', { token: B.token })).message, /does not exist/);
  writeFileSync(path.join(backupsB, 'junk.json'), '{not json');
  t.match(B.json(await B.inject('GET', '/api/v2/loaddata?input-file=junk.json', { token: B.token })).message, /not valid JSON/);
  t.equal((await B.inject('GET', '/api/v2/loaddata', { token: B.token })).statusCode, 400, 'input-file is required');
  t.match(A.json(await A.inject('GET', '/api/v2/dumpdata', { token: A.token })).message, /"output-file" is required unless output-data=1/);
  t.match(A.json(await A.inject('GET', '/api/v2/dumpdata?output-data=1&scopes=bogus', { token: A.token })).message, /"bogus" is not one of/);
  t.match(A.json(await A.inject('GET', '/api/v2/dumpdata?output-data=1&scopes=configs', { token: A.token })).message, /scope "configs" is not available/);
});

t.test('permissions: `*` without a role', async (t) => {
  t.equal((await A.inject('GET', '/api/v2/dumpdata?output-data=1')).statusCode, 401);
  t.equal((await A.inject('POST', '/api/v2/loaddata', { payload: {} })).statusCode, 401);
  await ok(A, 'POST', '/api/v2/admins', {
    username: 'almost',
    password: 'almost-pw',
    permissions: ['add_users', 'edit_users', 'view_users', 'manage_groups', 'manage_folders'],
  });
  await ok(A, 'POST', '/api/v2/admins', { username: 'rolestar', password: 'rolestar-pw', permissions: ['*'], role: 'ops' });
  for (const [u, p] of [
    ['almost', 'almost-pw'],
    ['rolestar', 'rolestar-pw'],
  ]) {
    const tok = await A.adminToken(u, p);
    for (const [m, url] of [
      ['GET', '/api/v2/dumpdata?output-data=1'],
      ['GET', '/api/v2/loaddata?input-file=x.json'],
      ['POST', '/api/v2/loaddata'],
    ] as const) {
      const r = await A.inject(m, url, { token: tok, payload: m === 'POST' ? {} : undefined });
      t.equal(r.statusCode, 403, `${u}: ${m} ${url}`);
    }
  }
});

t.test('sections are a registry: another feature adds its own scope', async (t) => {
  const store: { name: string; value: number }[] = [{ name: 'stored', value: 1 }];
  const restored: string[] = [];
  B.app.container.resolve(BackupRegistry).register({
    scope: 'configs',
    key: 'configs',
    order: 70,
    names: (items) => items.map((x) => String((x as { name?: string }).name ?? '')),
    dump: async () => store.map((x) => ({ ...x })),
    validate: async (items, ctx) => {
      for (const [i, x] of (items as { name: string; value: unknown; user?: string }[]).entries()) {
        if (typeof x.value !== 'number') throw Boom.badRequest(`configs[${i}]: "value" must be a number`);
        if (x.user && !(await ctx.lookup.user(x.user))) throw Boom.badRequest(`configs[${i}]: user "${x.user}" does not exist`);
      }
      return items;
    },
    restore: async (items, ctx) => {
      for (const x of items as { name: string; value: number }[]) {
        restored.push(`${ctx.mode}:${x.name}`);
        store.push(x);
      }
    },
  });
  t.throws(() => B.app.container.resolve(BackupRegistry).register({ scope: 'configs' } as never), /already registered/);
  const d = await dump(B, '&scopes=configs');
  t.same(d.data, { configs: [{ name: 'stored', value: 1 }], version: 1 });
  t.same((await dump(B)).data.configs, [{ name: 'stored', value: 1 }], 'part of the full dump');
  const ok1 = await load(B, { configs: [{ name: 'n1', value: 2, user: 'fresh' }], users: [user('for-ip')] }, '?mode=1');
  t.equal(ok1.statusCode, 200, ok1.payload);
  t.same(restored, ['1:n1'], 'restored after the core sections, in the same restore');
  const bad = await load(B, { configs: [{ name: 'n2', value: 'x' }], users: [user('not-written')] });
  t.equal(bad.statusCode, 400);
  t.match(B.json(bad).message, /configs\[0\]: "value" must be a number/);
  t.match(
    B.json(await load(B, { configs: [{ name: 'n3', value: 3, user: 'ghost' }] })).message,
    /user "ghost" does not exist/,
    'sections resolve names through the overlay lookup',
  );
  t.equal((await B.inject('GET', '/api/v2/users/not-written', { token: B.token })).statusCode, 404, 'nothing written when a section refuses');
  t.same(restored, ['1:n1']);
});
