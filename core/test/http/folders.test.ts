import t from 'tap';
import { accountsApp, s3, user } from './accounts-helpers.js';

const ta = await accountsApp();
t.teardown(() => ta.close());
const { token } = ta;

const post = (payload: unknown, tok = token) => ta.inject('POST', '/api/v2/folders', { token: tok, payload });
const get = (name: string, tok = token) => ta.inject('GET', `/api/v2/folders/${encodeURIComponent(name)}`, { token: tok });

t.test('create, read, list, update, delete', async (t) => {
  const c = await post({ name: 'docs', mapped_path: '/srv/docs/', description: 'team docs' });
  t.equal(c.statusCode, 201, c.payload);
  t.equal(c.headers.location, '/api/v2/folders/docs');
  const f = ta.json(c);
  t.match(f, {
    name: 'docs',
    description: 'team docs',
    mapped_path: '/srv/docs/',
    filesystem: { provider: 0 },
    used_quota_size: 0,
    used_quota_files: 0,
    last_quota_update: 0,
    users: [],
    groups: [],
  });
  t.ok(f.id > 0);

  const cloud = await post({ name: 'cloud', filesystem: s3({ key_prefix: 'shared/' }) });
  t.equal(cloud.statusCode, 201, 'no mapped_path needed for a cloud backend');
  t.match(ta.json(cloud), {
    mapped_path: '',
    filesystem: { provider: 1, s3config: { bucket: 'bucket-a', key_prefix: 'shared/', access_secret: { status: 'AES-256-GCM' } } },
  });
  t.equal(
    (await post({ name: 'enc', mapped_path: '/srv/enc', filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'pp' } } } }))
      .statusCode,
    201,
  );

  // referenced by users and groups
  t.equal(
    (
      await ta.inject('POST', '/api/v2/users', {
        token,
        payload: user('fu', { virtual_folders: [{ name: 'docs', virtual_path: '/docs', quota_size: 100, quota_files: 10 }] }),
      })
    ).statusCode,
    201,
  );
  t.equal(
    (await ta.inject('POST', '/api/v2/groups', { token, payload: { name: 'fg', virtual_folders: [{ name: 'docs', virtual_path: '/team-docs' }] } })).statusCode,
    201,
  );
  t.match(ta.json(await get('docs')), { users: ['fu'], groups: ['fg'] });
  const uf = ta.json(await ta.inject('GET', '/api/v2/users/fu', { token })).virtual_folders;
  t.match(uf, [{ name: 'docs', virtual_path: '/docs', quota_size: 100, quota_files: 10, mapped_path: '/srv/docs/', used_quota_size: 0 }]);

  const names = async (q: string) => ta.json(await ta.inject('GET', `/api/v2/folders${q}`, { token })).map((x: { name: string }) => x.name);
  t.same(await names(''), ['cloud', 'docs', 'enc']);
  t.same(await names('?order=DESC&limit=2'), ['enc', 'docs']);
  t.same(await names('?offset=2'), ['enc']);

  const upd = await ta.inject('PUT', '/api/v2/folders/docs', { token, payload: { name: 'docs', mapped_path: '/srv/docs2', description: 'moved' } });
  t.equal(upd.statusCode, 200, upd.payload);
  t.match(ta.json(await get('docs')), { mapped_path: '/srv/docs2', description: 'moved', users: ['fu'] });
  // the counters are not writable through the folder API
  await ta.inject('PUT', '/api/v2/folders/docs', { token, payload: { name: 'docs', mapped_path: '/srv/docs2', used_quota_size: 999 } });
  t.equal(ta.json(await get('docs')).used_quota_size, 0);
  t.equal((await ta.inject('PUT', '/api/v2/folders/docs', { token, payload: { name: 'other', mapped_path: '/x' } })).statusCode, 400, 'no rename');
  t.equal((await ta.inject('PUT', '/api/v2/folders/ghost', { token, payload: { name: 'ghost', mapped_path: '/x' } })).statusCode, 404);

  const refused = await ta.inject('DELETE', '/api/v2/folders/docs', { token });
  t.equal(refused.statusCode, 400);
  t.match(ta.json(refused).message, /folder "docs" is still referenced by user "fu", group "fg"/);
  t.equal((await ta.inject('DELETE', '/api/v2/folders/enc', { token })).statusCode, 200);
  t.equal((await get('enc')).statusCode, 404);
  t.equal((await ta.inject('DELETE', '/api/v2/folders/enc', { token })).statusCode, 404);
  await ta.inject('PUT', '/api/v2/users/fu', { token, payload: user('fu') });
  await ta.inject('PUT', '/api/v2/groups/fg', { token, payload: { name: 'fg' } });
  t.equal((await ta.inject('DELETE', '/api/v2/folders/docs', { token })).statusCode, 200, 'deletable once unreferenced');

  const kinds = ta.events.filter((e) => e.object_type === 'folder').map((e) => `${e.action}:${e.object_name}`);
  t.same(kinds, ['add:docs', 'add:cloud', 'add:enc', 'update:docs', 'update:docs', 'delete:enc', 'delete:docs']);
});

t.test('validation: 400 naming the field', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ mapped_path: '/x' }, /"name" is required/],
    [{ name: 'a/b', mapped_path: '/x' }, /"name"/],
    [{ name: 'ctl\u0001', mapped_path: '/x' }, /"name"/],
    [{ name: 'cloud\n', mapped_path: '/x' }, /"name" with value "cloud\n" fails to match the a name without control characters/],
    [{ name: '\tcloud', mapped_path: '/x' }, /"name" with value "\tcloud" fails to match/],
    [{ name: ' cloud ', mapped_path: '/x' }, /"name" must not begin or end with spaces/],
    [{ name: 'cloud ', mapped_path: '/x' }, /"name" must not begin or end with spaces/],
    [{ name: 'nomap' }, /"mapped_path" is required \(an absolute path\) for filesystem provider 0/],
    [
      { name: 'nomap4', filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'x' } } } },
      /"mapped_path" is required .* provider 4/,
    ],
    [{ name: 'rel', mapped_path: 'relative/dir' }, /"mapped_path" must be an absolute path/],
    [{ name: 'dots', mapped_path: '/a/../b' }, /"mapped_path" must not contain ".." segments/],
    [{ name: 'prov', filesystem: { provider: 13 } }, /"filesystem.provider": filesystem provider 13 is not available/],
    [{ name: 's3bad', filesystem: { provider: 1, s3config: { bucket: '' } } }, /filesystem.s3config: "bucket" is not allowed to be empty/],
    [{ name: 'cloud', filesystem: s3() }, /folder "cloud" already exists/],
  ];
  for (const [payload, re] of cases) {
    const r = await post(payload);
    t.equal(r.statusCode, 400, JSON.stringify(payload));
    t.match(ta.json(r), { error: 'Bad Request', message: re });
  }
  // path parameters are checked raw: "cloud" exists, "cloud\n", "\tcloud", " cloud" do not name it
  for (const [method, url] of [
    ['GET', '/api/v2/folders/cloud%0A'],
    ['GET', '/api/v2/folders/%09cloud'],
    ['PUT', '/api/v2/folders/cloud%20'],
    ['DELETE', '/api/v2/folders/%20cloud'],
    ['DELETE', '/api/v2/folders/cloud%0D'],
  ] as const) {
    const r = await ta.inject(method, url, { token, payload: method === 'PUT' ? { name: 'cloud', filesystem: s3() } : undefined });
    t.equal(r.statusCode, 400, `${method} ${url}`);
    t.match(ta.json(r), { error: 'Bad Request', message: /"name" (with value [\s\S]* fails to match|must not begin or end with spaces)/ }, `${method} ${url}`);
  }
  t.equal((await get('cloud')).statusCode, 200, 'cloud is still there');
});

t.test('permissions: manage_folders', async (t) => {
  t.equal((await ta.inject('GET', '/api/v2/folders')).statusCode, 401);
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'nof', password: 'nof-pw', permissions: ['manage_groups', 'view_users'] } });
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'mf', password: 'mf-pw', permissions: ['manage_folders'] } });
  const nof = await ta.adminToken('nof', 'nof-pw');
  const mf = await ta.adminToken('mf', 'mf-pw');
  for (const [m, u] of [
    ['GET', '/api/v2/folders'],
    ['POST', '/api/v2/folders'],
    ['GET', '/api/v2/folders/cloud'],
    ['PUT', '/api/v2/folders/cloud'],
    ['DELETE', '/api/v2/folders/cloud'],
  ] as const) {
    const r = await ta.inject(m, u, { token: nof, payload: m === 'POST' || m === 'PUT' ? { name: 'cloud', mapped_path: '/x' } : undefined });
    t.equal(r.statusCode, 403, `${m} ${u}`);
    t.match(ta.json(r), { error: 'Forbidden' });
  }
  t.equal((await post({ name: 'by-mf', mapped_path: '/srv/mf' }, mf)).statusCode, 201);
  t.equal((await ta.inject('GET', '/api/v2/folders/by-mf?confidential_data=1', { token: mf })).statusCode, 200);
  t.equal((await ta.inject('DELETE', '/api/v2/folders/by-mf', { token: mf })).statusCode, 200);
});

t.test('confidential_data shows the encrypted form to * admins only', async (t) => {
  const conf = ta.json(await ta.inject('GET', '/api/v2/folders/cloud?confidential_data=1', { token }));
  t.match(conf.filesystem.s3config.access_secret, { status: 'AES-256-GCM', payload: String, key: String, additional_data: 'cloud' });
  t.notOk(JSON.stringify(conf).includes('S3-SECRET-PLAIN'));
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'mf2', password: 'mf2-pw', permissions: ['manage_folders'] } });
  const mf2 = await ta.adminToken('mf2', 'mf2-pw');
  t.same(ta.json(await ta.inject('GET', '/api/v2/folders/cloud?confidential_data=1', { token: mf2 })).filesystem.s3config.access_secret, {
    status: 'AES-256-GCM',
  });
  t.equal((await ta.inject('GET', '/api/v2/folders/cloud?confidential_data=2', { token })).statusCode, 400);
});
