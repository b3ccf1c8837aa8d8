import t from 'tap';
import { accountsApp, user } from './accounts-helpers.js';
import { ConnectionManager } from '../../src/vfs/connection-manager.js';
import { User } from '../../src/data/entities/index.js';

const ta = await accountsApp();
t.teardown(() => ta.close());
const { token } = ta;

const post = (payload: unknown, tok = token) => ta.inject('POST', '/api/v2/users', { token: tok, payload });
const get = (name: string, tok = token) => ta.inject('GET', `/api/v2/users/${encodeURIComponent(name)}`, { token: tok });

t.test('create, read, list, update, delete', async (t) => {
  const c = await post(user('ann', { email: 'ann@example.test', quota_size: 1000, custom_placeholders: ['sales', 'eu'], description: 'd' }));
  t.equal(c.statusCode, 201, c.payload);
  t.equal(c.headers.location, '/api/v2/users/ann');
  const created = ta.json(c);
  t.match(created, {
    username: 'ann',
    email: 'ann@example.test',
    status: 1,
    has_password: true,
    home_dir: '/srv/ferry/ann',
    permissions: { '/': ['*'] },
    quota_size: 1000,
    filesystem: { provider: 0 },
    groups: [],
    virtual_folders: [],
    role: '',
    custom_placeholders: ['sales', 'eu'],
    used_quota_size: 0,
  });
  t.ok(created.id > 0 && created.created_at > 0);
  t.notOk('password' in created, 'password is write-only');
  t.notOk(c.payload.includes('ann-password'));

  t.match(ta.json(await get('ann')), { username: 'ann', quota_size: 1000 });

  // update: password kept when omitted, fields replaced
  const { password: _p, ...noPassword } = user('ann');
  const u = await ta.inject('PUT', '/api/v2/users/ann', {
    token,
    payload: { ...noPassword, email: 'a2@example.test', permissions: { '/': ['list', 'download'], '/in\\box/': ['upload'] } },
  });
  t.equal(u.statusCode, 200, u.payload);
  t.match(ta.json(u), { message: String });
  const after = ta.json(await get('ann'));
  t.match(after, { email: 'a2@example.test', has_password: true, quota_size: 0 });
  t.same(after.permissions, { '/': ['list', 'download'], '/in/box': ['upload'] }, 'permission paths normalised');
  t.ok(await ta.userToken('ann', 'ann-password'), 'password kept');
  t.equal((await ta.inject('PUT', '/api/v2/users/ann', { token, payload: { ...noPassword, password: 'new-pass-1' } })).statusCode, 200);
  t.ok(await ta.userToken('ann', 'new-pass-1'), 'password changed');
  const raw = await ta.sql('select password_hash from users where username = ?', ['ann']);
  t.match(raw[0]!.password_hash, /^\$argon2id\$/, 'stored hashed');

  // list: ordered by username, offset/limit/order
  for (const n of ['bob', 'cat', 'dan']) t.equal((await post(user(n))).statusCode, 201);
  const names = async (q: string) => ta.json(await ta.inject('GET', `/api/v2/users${q}`, { token })).map((x: { username: string }) => x.username);
  t.same(await names(''), ['ann', 'bob', 'cat', 'dan']);
  t.same(await names('?order=DESC&limit=2'), ['dan', 'cat']);
  t.same(await names('?offset=1&limit=2'), ['bob', 'cat']);
  t.same(await names('?order=DESC&offset=1&limit=2'), ['cat', 'bob']);
  t.same(await names('?offset=3&limit=5'), ['dan'], 'the last page is short');
  t.same(await names('?offset=4'), [], 'past the end: no user');
  t.same(await names('?order=DESC&offset=10'), []);
  for (const q of ['limit=0', 'limit=501', 'offset=-1', 'order=UP']) t.equal((await ta.inject('GET', `/api/v2/users?${q}`, { token })).statusCode, 400, q);

  // delete
  t.equal((await ta.inject('DELETE', '/api/v2/users/dan', { token })).statusCode, 200);
  t.equal((await get('dan')).statusCode, 404);
  t.equal((await ta.inject('DELETE', '/api/v2/users/dan', { token })).statusCode, 404);
  t.equal((await ta.inject('PUT', '/api/v2/users/dan', { token, payload: user('dan') })).statusCode, 404);
  t.match(ta.json(await get('dan')), { error: 'Not Found', message: /user "dan" not found/ });

  const kinds = ta.events.filter((e) => e.object_type === 'user').map((e) => `${e.action}:${e.object_name}`);
  t.same(kinds, ['add:ann', 'update:ann', 'update:ann', 'add:bob', 'add:cat', 'add:dan', 'delete:dan']);
  t.notOk(JSON.stringify(ta.events).match(/ann-password|new-pass-1|argon2/), 'no password or hash in provider events');
});

t.test('validation: 400 naming the field', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ password: 'x', home_dir: '/x', permissions: { '/': ['*'] } }, /"username" is required/],
    [user('bad/name'), /"username"/],
    [user('bad\\name'), /"username"/],
    [user('ctl\u0007name'), /"username"/],
    [user('zed\n'), /"username" with value "zed\n" fails to match the a name without control characters/],
    [user('\tzed'), /"username" with value "\tzed" fails to match/],
    [user('zed\u007f'), /"username" with value "zed\u007f" fails to match/],
    [user('zed\u0085'), /"username" with value "zed\u0085" fails to match/],
    [user(' zed '), /"username" must not begin or end with spaces/],
    [user('zed '), /"username" must not begin or end with spaces/],
    [user('..'), /"username" must not be "." or ".."/],
    [user('nohome', { home_dir: '' }), /"home_dir" is required \(an absolute path\) for filesystem provider 0/],
    [user('relhome', { home_dir: 'srv/x' }), /"home_dir" must be an absolute path/],
    [user('noroot', { permissions: { '/sub': ['*'] } }), /"permissions" must hold the permissions of the root directory/],
    [user('badperm', { permissions: { '/': ['fly'] } }), /"permissions\.\/\[0\]" must be one of/],
    [user('emptyperm', { permissions: { '/': [] } }), /"permissions\.\/" must contain at least 1 items/],
    [user('dotdot', { permissions: { '/': ['*'], '/a/../b': ['list'] } }), /"permissions": "\/a\/..\/b" is not a valid path/],
    [user('dupperm', { permissions: { '/': ['*'], '/a': ['list'], '/a/': ['upload'] } }), /names the same path/],
    [user('negquota', { quota_size: -1 }), /"quota_size" must be greater than or equal to 0/],
    [user('negfiles', { quota_files: -5 }), /"quota_files" must be greater than or equal to 0/],
    [user('ghostfolder', { virtual_folders: [{ name: 'ghost', virtual_path: '/g' }] }), /"virtual_folders": folder "ghost" does not exist/],
    [user('vfroot', { virtual_folders: [{ name: 'x', virtual_path: '/' }] }), /virtual_path cannot be "\/"/],
    [
      user('vfquota', { virtual_folders: [{ name: 'x', virtual_path: '/x', quota_size: -2, quota_files: -2 }] }),
      /quota_size" must be greater than or equal to -1/,
    ],
    [user('vfmixed', { virtual_folders: [{ name: 'x', virtual_path: '/x', quota_size: -1, quota_files: 10 }] }), /must both be -1/],
    [
      user('vfover', {
        virtual_folders: [
          { name: 'x', virtual_path: '/x' },
          { name: 'y', virtual_path: '/x/y' },
        ],
      }),
      /virtual paths "\/x" and "\/x\/y" overlap/,
    ],
    [user('norole', { role: 'ghost-role' }), /"role": role "ghost-role" does not exist/],
    [user('nogroup', { groups: [{ name: 'ghost-group', type: 2 }] }), /"groups": group "ghost-group" does not exist/],
    [
      user('twoprim', {
        groups: [
          { name: 'g1', type: 1 },
          { name: 'g2', type: 1 },
        ],
      }),
      /at most one primary group/,
    ],
    [user('badgtype', { groups: [{ name: 'g1', type: 4 }] }), /"groups\[0\]\.type" must be one of/],
    [user('prov9', { filesystem: { provider: 9 } }), /"filesystem.provider": filesystem provider 9 is not available/],
    [user('nos3', { filesystem: { provider: 1, s3config: { region: 'x' } } }), /filesystem\.s3config: "bucket" is required/],
    [
      user('s3key', { filesystem: { provider: 1, s3config: { bucket: 'b', access_key: 'AK' } } }),
      /filesystem\.s3config: access_secret is required when access_key is set/,
    ],
    [
      user('badsecret', { filesystem: { provider: 1, s3config: { bucket: 'b', access_secret: { status: 'Bogus', payload: 'x' } } } }),
      /filesystem\.s3config: "access_secret.status" must be one of/,
    ],
    [
      user('encjunk', {
        filesystem: { provider: 1, s3config: { bucket: 'b', access_secret: { status: 'AES-256-GCM', payload: 'bm90IHJlYWw=', key: 'a2V5' } } },
      }),
      /"filesystem.s3config.access_secret": the encrypted secret cannot be decrypted/,
    ],
    [user('crypt', { filesystem: { provider: 4, cryptconfig: {} } }), /filesystem\.cryptconfig: "passphrase" is required/],
    [
      user('crypthome', { home_dir: '', filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'crypt-pass' } } } }),
      /"home_dir" is required \(an absolute path\) for filesystem provider 4/,
    ],
    [
      user('crypthome2', { home_dir: undefined, filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'crypt-pass' } } } }),
      /"home_dir" is required \(an absolute path\) for filesystem provider 4/,
    ],
    [user('custom', { custom_placeholders: Array.from({ length: 11 }, (_, i) => `v${i}`) }), /"custom_placeholders" holds at most 10 values/],
    [user('custdot', { custom_placeholders: ['../etc'] }), /"custom_placeholders\[0\]" must not contain ".." segments/],
    [user('badkey', { public_keys: ['not a key'] }), /"public_keys\[0\]"/],
    [user('badip', { filters: { allowed_ip: ['300.1.1.1'] } }), /"filters.allowed_ip\[0\]" must be an IP address or a CIDR network/],
    [user('badproto', { filters: { denied_protocols: ['GOPHER'] } }), /"filters.denied_protocols\[0\]" must be one of/],
    [user('ann'), /user "ann" already exists/],
  ];
  for (const [payload, re] of cases) {
    const r = await post(payload);
    t.equal(r.statusCode, 400, JSON.stringify(payload).slice(0, 120));
    const body = ta.json(r);
    t.match(body.message, re, JSON.stringify(payload).slice(0, 80));
    t.equal(body.error, 'Bad Request');
  }
  t.equal((await ta.inject('PUT', '/api/v2/users/ann', { token, payload: user('other') })).statusCode, 400, 'rename refused');
  t.equal((await ta.inject('PUT', '/api/v2/users/ann?disconnect=3', { token, payload: user('ann') })).statusCode, 400);
  t.equal((await ta.inject('GET', '/api/v2/users/a%2Fb', { token })).statusCode, 400, 'an invalid name in the path');
  t.equal((await get('zed')).statusCode, 404, 'no name was created by trimming a refused one');

  // path parameters are checked raw too: "ann" exists, but "ann\n", "\tann", " ann" do not name it
  const { password: _pw, ...annBody } = user('ann');
  for (const [method, url] of [
    ['GET', '/api/v2/users/ann%0A'],
    ['GET', '/api/v2/users/%09ann'],
    ['GET', '/api/v2/users/%20ann'],
    ['PUT', '/api/v2/users/ann%0D'],
    ['PUT', '/api/v2/users/ann%20'],
    ['DELETE', '/api/v2/users/ann%0A'],
    ['DELETE', '/api/v2/users/%20ann%20'],
  ] as const) {
    const r = await ta.inject(method, url, { token, payload: method === 'PUT' ? annBody : undefined });
    t.equal(r.statusCode, 400, `${method} ${url}`);
    t.match(
      ta.json(r),
      { error: 'Bad Request', message: /"username" (with value [\s\S]* fails to match|must not begin or end with spaces)/ },
      `${method} ${url}`,
    );
  }
  t.equal((await get('ann')).statusCode, 200, 'ann is still there');
});

t.test('read-only fields, TOTP and recovery codes cannot be set; existing ones survive updates', async (t) => {
  const c = await post(
    user('tfa', {
      id: 999,
      has_password: false,
      used_quota_size: 123,
      created_at: 5,
      filters: {
        totp_config: { enabled: true, config_name: 'x', secret: { status: 'Plain', payload: 'JBSWY3DPEHPK3PXP' } },
        recovery_codes: [{ secret: { status: 'Plain', payload: 'rc' } }],
        allow_api_key_auth: true,
      },
    }),
  );
  t.equal(c.statusCode, 201, c.payload);
  const body = ta.json(c);
  t.not(body.id, 999);
  t.equal(body.used_quota_size, 0);
  t.ok(body.created_at > 5);
  t.equal(body.has_password, true);
  t.same(body.filters, { allow_api_key_auth: true }, 'no 2FA material stored');
  // enable 2FA directly (as the 2FA routes would), then update through the API
  const em = ta.app.orm.em.fork();
  const u = await em.findOneOrFail(User, { username: 'tfa' });
  u.filters = {
    ...u.filters,
    totp_config: { enabled: true, config_name: 'Default', secret: { status: 'AES-256-GCM', payload: 'x', key: 'y' } },
    recovery_codes: [{ used: false }],
  };
  await em.flush();
  const r = await ta.inject('PUT', '/api/v2/users/tfa', { token, payload: user('tfa', { filters: { totp_config: { enabled: false }, recovery_codes: [] } }) });
  t.equal(r.statusCode, 200, r.payload);
  const stored = await ta.app.orm.em.fork().findOneOrFail(User, { username: 'tfa' });
  t.match(stored.filters, { totp_config: { enabled: true, config_name: 'Default' }, recovery_codes: [{ used: false }] }, 'kept on update');
  const read = ta.json(await get('tfa'));
  t.same(read.filters.totp_config, { enabled: true, config_name: 'Default', protocols: [] }, 'TOTP shown as a summary');
  t.notOk('recovery_codes' in read.filters);
  t.notOk(JSON.stringify(read).includes('"payload"'));
});

t.test('PUT ?disconnect=1 closes the user connections after the update', async (t) => {
  t.equal((await post(user('conn'))).statusCode, 201);
  const cm = ta.app.container.resolve(ConnectionManager);
  const open = () => cm.open({ username: 'conn', protocol: 'HTTP', remote_address: '127.0.0.1', client_version: 't', command: '', role: '' });
  const c1 = open();
  t.equal((await ta.inject('PUT', '/api/v2/users/conn', { token, payload: user('conn', { quota_files: 3 }) })).statusCode, 200);
  t.equal(cm.countFor('conn'), 1, 'kept by default');
  t.notOk(c1.controller.signal.aborted);
  t.equal((await ta.inject('PUT', '/api/v2/users/conn?disconnect=1', { token, payload: user('conn', { quota_files: 4 }) })).statusCode, 200);
  t.equal(cm.countFor('conn'), 0);
  t.ok(c1.controller.signal.aborted, 'transfers aborted');
  t.equal(ta.json(await get('conn')).quota_files, 4, 'updated before disconnecting');
});

t.test('permissions: 401 without credentials, 403 without the permission', async (t) => {
  t.equal((await ta.inject('GET', '/api/v2/users')).statusCode, 401);
  t.equal((await ta.inject('POST', '/api/v2/users', { payload: user('x') })).statusCode, 401);
  const mk = async (name: string, permissions: string[]) => {
    t.equal((await ta.inject('POST', '/api/v2/admins', { token, payload: { username: name, password: `${name}-pw`, permissions } })).statusCode, 201);
    return ta.adminToken(name, `${name}-pw`);
  };
  const viewer = await mk('viewer', ['view_users']);
  const adder = await mk('adder', ['add_users']);
  const editor = await mk('editor', ['edit_users']);
  const deleter = await mk('deleter', ['del_users']);
  t.equal((await ta.inject('GET', '/api/v2/users', { token: viewer })).statusCode, 200);
  t.equal((await get('ann', viewer)).statusCode, 200);
  for (const [tok, m, u, ok] of [
    [viewer, 'POST', '/api/v2/users', false],
    [viewer, 'PUT', '/api/v2/users/bob', false],
    [viewer, 'DELETE', '/api/v2/users/bob', false],
    [adder, 'GET', '/api/v2/users', false],
    [adder, 'POST', '/api/v2/users', true],
    [editor, 'PUT', '/api/v2/users/bob', true],
    [editor, 'DELETE', '/api/v2/users/bob', false],
    [deleter, 'PUT', '/api/v2/users/bob', false],
    [deleter, 'DELETE', '/api/v2/users/cat', true],
  ] as const) {
    const r = await ta.inject(m, u, { token: tok, payload: m === 'GET' || m === 'DELETE' ? undefined : user(m === 'POST' ? 'made-by-adder' : 'bob') });
    if (ok) t.ok(r.statusCode < 300, `${m} ${u} allowed (${r.statusCode} ${r.payload})`);
    else {
      t.equal(r.statusCode, 403, `${m} ${u} forbidden`);
      t.match(ta.json(r), { error: 'Forbidden', message: /permission/ });
    }
  }
  // confidential_data is honoured only for `*`
  t.equal((await ta.inject('GET', '/api/v2/users/ann?confidential_data=1', { token: viewer })).statusCode, 200);
});

t.test('role-scoped admins see and manage only users of their role', async (t) => {
  for (const r of ['team-a', 'team-b']) t.equal((await ta.inject('POST', '/api/v2/roles', { token, payload: { name: r } })).statusCode, 201);
  t.equal(
    (await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'lead-a', password: 'lead-a-pw', permissions: ['*'], role: 'team-a' } }))
      .statusCode,
    201,
  );
  t.equal((await post(user('in-b', { role: 'team-b' }))).statusCode, 201);
  const lt = await ta.adminToken('lead-a', 'lead-a-pw');
  const mine = await post(user('in-a'), lt);
  t.equal(mine.statusCode, 201, mine.payload);
  t.equal(ta.json(mine).role, 'team-a', 'new users get the creator role');
  t.equal((await post(user('in-a2', { role: 'team-b' }), lt)).statusCode, 403);
  const seen = ta.json(await ta.inject('GET', '/api/v2/users', { token: lt })).map((u: { username: string }) => u.username);
  t.same(seen, ['in-a']);
  t.equal((await get('in-b', lt)).statusCode, 404);
  t.equal((await ta.inject('PUT', '/api/v2/users/in-b', { token: lt, payload: user('in-b') })).statusCode, 404);
  t.equal((await ta.inject('DELETE', '/api/v2/users/in-b', { token: lt })).statusCode, 404);
  const upd = await ta.inject('PUT', '/api/v2/users/in-a', { token: lt, payload: user('in-a', { role: '' }) });
  t.equal(upd.statusCode, 200);
  t.equal(ta.json(await get('in-a')).role, 'team-a', 'a role admin cannot drop the role');
  const del = await ta.inject('DELETE', '/api/v2/roles/team-b', { token });
  t.equal(del.statusCode, 400);
  t.match(ta.json(del).message, /user "in-b"/);
});

t.test('tokens: disabled, expired, and group filters apply at login', async (t) => {
  t.equal((await post(user('off', { status: 0 }))).statusCode, 201);
  t.equal((await post(user('old', { expiration_date: Date.now() - 1000 }))).statusCode, 201);
  for (const u of ['off', 'old'])
    t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: u, password: `${u}-password` } })).statusCode, 401, u);
  const g = await ta.inject('POST', '/api/v2/groups', { token, payload: { name: 'no-http', user_settings: { filters: { denied_protocols: ['HTTP'] } } } });
  t.equal(g.statusCode, 201, g.payload);
  t.equal((await post(user('grouped', { groups: [{ name: 'no-http', type: 2 }] }))).statusCode, 201);
  const basic = { username: 'grouped', password: 'grouped-password' };
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic })).statusCode, 403, "the group's denied protocol applies");
  const tok = await (async () => {
    await ta.inject('PUT', '/api/v2/users/grouped', { token, payload: user('grouped') });
    return ta.userToken('grouped', 'grouped-password');
  })();
  t.equal((await ta.inject('GET', '/api/v2/user/logout', { token: tok })).statusCode, 200);
  const tok2 = await ta.userToken('grouped', 'grouped-password');
  await ta.inject('PUT', '/api/v2/users/grouped', { token, payload: user('grouped', { groups: [{ name: 'no-http', type: 3 }] }) });
  t.equal((await ta.inject('GET', '/api/v2/user/logout', { token: tok2 })).statusCode, 200, 'membership groups add no login filters');
  const exp = await ta.inject('POST', '/api/v2/groups', { token, payload: { name: 'short-lived', user_settings: { expires_in: 1 } } });
  t.equal(exp.statusCode, 201);
  await ta.app.orm.em.fork().nativeUpdate(User, { username: 'grouped' }, { created_at: Date.now() - 2 * 86_400_000 });
  await ta.inject('PUT', '/api/v2/users/grouped', { token, payload: user('grouped', { groups: [{ name: 'short-lived', type: 1 }] }) });
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic })).statusCode, 401, "expired by the primary group's expires_in");
});

t.test("an admin's groups are given to the users it creates", async (t) => {
  for (const name of ['dflt-p', 'dflt-m'])
    t.equal((await ta.inject('POST', '/api/v2/groups', { token, payload: { name, user_settings: { home_dir: '/srv/g/%username%' } } })).statusCode, 201);
  const a = await ta.inject('POST', '/api/v2/admins', {
    token,
    payload: {
      username: 'grouper',
      password: 'grouper-pw',
      permissions: ['add_users', 'view_users'],
      groups: [
        { name: 'dflt-p', options: { add_to_users_as: 1 } },
        { name: 'dflt-m', options: { add_to_users_as: 0 } },
      ],
    },
  });
  t.equal(a.statusCode, 201, a.payload);
  const gt = await ta.adminToken('grouper', 'grouper-pw');
  const r = await post({ username: 'auto', password: 'auto-pw', permissions: { '/': ['*'] } }, gt);
  t.equal(r.statusCode, 201, r.payload);
  t.same(ta.json(r).groups, [
    { name: 'dflt-m', type: 3 },
    { name: 'dflt-p', type: 1 },
  ]);
  t.equal(ta.json(r).home_dir, '', 'home_dir supplied by the primary group');
  const explicit = await post(user('manual', { groups: [] }), gt);
  t.same(ta.json(explicit).groups.length, 2, 'no groups given: the defaults apply');
});

t.test('GET /users/{name} and the list render groups and folders as a create does', async (t) => {
  // read in one statement (JSON subqueries) on both databases: strings with quotes, backslashes and
  // non-ASCII, secrets of a folder's filesystem, quotas and both group types must come out as the batch render shows them
  for (const f of [
    { name: 'mf-b', mapped_path: '/srv/mf "b"', description: 'quote " backslash \\ ü €' },
    { name: 'mf-a', mapped_path: '/srv/mf-a', filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'mf-secret' } } } },
  ])
    t.equal((await ta.inject('POST', '/api/v2/folders', { token, payload: f })).statusCode, 201, f.name);
  for (const name of ['mg-p', 'mg-s']) t.equal((await ta.inject('POST', '/api/v2/groups', { token, payload: { name } })).statusCode, 201, name);
  const c = await post(
    user('mapped', {
      virtual_folders: [
        { name: 'mf-b', virtual_path: '/b', quota_size: 100, quota_files: 10 },
        { name: 'mf-a', virtual_path: '/a', quota_size: -1, quota_files: -1 },
      ],
      groups: [
        { name: 'mg-s', type: 2 },
        { name: 'mg-p', type: 1 },
      ],
    }),
  );
  t.equal(c.statusCode, 201, c.payload);
  const created = ta.json(c);
  t.same(
    created.virtual_folders.map((v: { virtual_path: string; name: string }) => [v.virtual_path, v.name]),
    [
      ['/a', 'mf-a'],
      ['/b', 'mf-b'],
    ],
  );
  t.equal(created.virtual_folders[1].description, 'quote " backslash \\ ü €');
  t.match(created.virtual_folders[0].filesystem.cryptconfig.passphrase, { status: 'AES-256-GCM' });
  t.notOk('payload' in created.virtual_folders[0].filesystem.cryptconfig.passphrase, 'secrets redacted');
  t.same(created.groups, [
    { name: 'mg-p', type: 1 },
    { name: 'mg-s', type: 2 },
  ]);
  t.strictSame(ta.json(await get('mapped')), created, 'GET /users/{name}');
  const page = ta.json(await ta.inject('GET', '/api/v2/users?limit=500', { token }));
  t.strictSame(
    page.find((u: { username: string }) => u.username === 'mapped'),
    created,
    'the list',
  );
  const plain = ta.json(await post(user('unmapped')));
  t.strictSame(ta.json(await get('unmapped')), plain, 'a user without mappings');
  t.strictSame(
    ta.json(await ta.inject('GET', '/api/v2/users?limit=500', { token })).find((u: { username: string }) => u.username === 'unmapped'),
    plain,
  );
});

t.test('pages of users with their groups and folders: every page is the slice of the whole list', async (t) => {
  const ok = async (method: string, url: string, payload: unknown) => {
    const r = await ta.inject(method, url, { token, payload });
    t.ok(r.statusCode < 300, `${method} ${url}: ${r.payload}`);
  };
  await ok('POST', '/api/v2/roles', { name: 'pg-role' });
  await ok('POST', '/api/v2/folders', { name: 'pg-f1', mapped_path: '/data/pg-f1' });
  await ok('POST', '/api/v2/folders', { name: 'pg-f2', mapped_path: '/data/pg-f2' });
  await ok('POST', '/api/v2/groups', { name: 'pg-g1', user_settings: { quota_size: 5 } });
  await ok('POST', '/api/v2/groups', { name: 'pg-g2', user_settings: { quota_files: 3 } });
  for (let i = 0; i < 13; i++) {
    const extra: Record<string, unknown> = {};
    if (i % 2 === 0) extra.groups = [{ name: 'pg-g1', type: 1 }, ...(i % 4 === 0 ? [{ name: 'pg-g2', type: 2 }] : [])];
    if (i % 3 === 0) extra.virtual_folders = [{ name: 'pg-f1', virtual_path: '/one' }, ...(i % 6 === 0 ? [{ name: 'pg-f2', virtual_path: '/two' }] : [])];
    if (i % 5 === 0) extra.role = 'pg-role';
    t.equal((await post(user(`pg-${String.fromCharCode(109 - i)}${i}`, extra))).statusCode, 201);
  }
  const list = async (q: string) => ta.json(await ta.inject('GET', `/api/v2/users?${q}`, { token })) as { username: string }[];
  const whole = await list('limit=500');
  const names = whole.map((u) => u.username);
  t.same(names, [...names].sort(), 'the whole list, ordered by username');
  t.ok(names.length >= 13);
  // each user of the list as its own read answers it
  for (const u of whole.filter((x) => x.username.startsWith('pg-'))) t.same(u, ta.json(await get(u.username)), `${u.username} as read alone`);
  t.ok(
    whole.some((u) => (u as { groups?: unknown[] }).groups?.length === 2) &&
      whole.some((u) => (u as { virtual_folders?: unknown[] }).virtual_folders?.length === 2),
  );
  // a role admin's pages: the users of its role only, cut the same way
  await ok('POST', '/api/v2/admins', { username: 'pg-lead', password: 'pg-lead-pw', permissions: ['*'], role: 'pg-role' });
  const leadToken = await ta.adminToken('pg-lead', 'pg-lead-pw');
  const roleList = async (q: string) => ta.json(await ta.inject('GET', `/api/v2/users?${q}`, { token: leadToken })) as { username: string }[];
  const mine = whole.filter((u) => (u as { role?: string }).role === 'pg-role');
  t.equal(mine.length, 3);
  t.same(await roleList('limit=500'), mine, "the role's users");
  for (const [q, expected] of [
    ['limit=2', mine.slice(0, 2)],
    ['limit=2&offset=2', mine.slice(2)],
    ['limit=2&order=DESC', [...mine].reverse().slice(0, 2)],
    ['offset=3', []],
  ] as const) {
    t.same(await roleList(q), expected, `role page ${q}`);
  }
  const desc = [...whole].reverse();
  for (const limit of [1, 4, 5]) {
    for (let offset = 0; offset <= whole.length + 1; offset += 3) {
      t.same(await list(`limit=${limit}&offset=${offset}`), whole.slice(offset, offset + limit), `limit ${limit} offset ${offset}`);
      t.same(await list(`limit=${limit}&offset=${offset}&order=DESC`), desc.slice(offset, offset + limit), `limit ${limit} offset ${offset} DESC`);
    }
  }
});

t.test('order_by=used_quota_size: pages by used quota size, equal sizes by username; a role admin sees its users only', async (t) => {
  const ok = async (method: string, url: string, payload?: unknown, tok = token) => {
    const r = await ta.inject(method, url, { token: tok, payload });
    t.ok(r.statusCode < 300, `${method} ${url}: ${r.payload}`);
  };
  await ok('POST', '/api/v2/roles', { name: 'qs-role' });
  // sizes: qs-a 30, qs-b 10, qs-c 30, qs-d 0, qs-e 20 (qs-b and qs-e in the role)
  const sizes: [string, number, boolean][] = [
    ['qs-a', 30, false],
    ['qs-b', 10, true],
    ['qs-c', 30, false],
    ['qs-d', 0, false],
    ['qs-e', 20, true],
  ];
  for (const [name, size, inRole] of sizes) {
    t.equal((await post(user(name, inRole ? { role: 'qs-role' } : {}))).statusCode, 201);
    if (size) await ok('PUT', `/api/v2/quotas/users/${name}/usage`, { used_quota_size: size, used_quota_files: 1 });
  }
  const list = async (q: string, tok = token) => {
    const r = await ta.inject('GET', `/api/v2/users?${q}`, { token: tok });
    t.equal(r.statusCode, 200, q);
    return (ta.json(r) as { username: string; used_quota_size: number }[]).map((u) => `${u.username}:${u.used_quota_size}`);
  };
  const whole = (await list('order_by=used_quota_size&order=DESC&limit=500')).filter((u) => u.startsWith('qs-'));
  t.same(whole, ['qs-a:30', 'qs-c:30', 'qs-e:20', 'qs-b:10', 'qs-d:0'], 'largest first, equal sizes A to Z');
  const all = await list('order_by=used_quota_size&order=DESC&limit=500');
  t.same(await list('order_by=used_quota_size&order=DESC&limit=2'), all.slice(0, 2), 'the first page: the two largest');
  for (let offset = 0; offset < all.length; offset += 2)
    t.same(await list(`order_by=used_quota_size&order=DESC&limit=2&offset=${offset}`), all.slice(offset, offset + 2), `DESC page at ${offset}`);
  const asc = await list('order_by=used_quota_size&limit=500');
  t.same(
    asc.filter((u) => u.startsWith('qs-')),
    ['qs-d:0', 'qs-b:10', 'qs-e:20', 'qs-a:30', 'qs-c:30'],
    'ASC: smallest first, equal sizes still A to Z',
  );
  t.same(await list('order_by=username&limit=500'), await list('limit=500'), 'order_by=username is the default');
  for (const q of ['order_by=quota_size', 'order_by=', 'order_by=USED_QUOTA_SIZE', 'order_by=password_hash']) {
    const r = await ta.inject('GET', `/api/v2/users?${q}`, { token });
    t.equal(r.statusCode, 400, q);
    t.match(ta.json(r), { error: 'Bad Request', message: /order_by/ }, q);
  }
  await ok('POST', '/api/v2/admins', { username: 'qs-lead', password: 'qs-lead-pw', permissions: ['*'], role: 'qs-role' });
  const lead = await ta.adminToken('qs-lead', 'qs-lead-pw');
  t.same(await list('order_by=used_quota_size&order=DESC', lead), ['qs-e:20', 'qs-b:10'], "a role admin: its role's users by size");
  t.same(await list('order_by=used_quota_size&order=DESC&limit=1&offset=1', lead), ['qs-b:10']);
});
