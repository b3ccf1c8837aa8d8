import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { accountsApp, fixture, holdScans, s3, tmpDir, user } from './accounts-helpers.js';
import { createTestApp } from '../../src/testing.js';
import { QuotaService } from '../../src/vfs/quota.service.js';
import { QuotaScanService } from '../../src/vfs/quota-scan.service.js';
import { UserService } from '../../src/accounts/user.service.js';

const ta = await accountsApp();
t.teardown(() => ta.close());
const { token } = ta;
const quotas = ta.app.container.resolve(QuotaService);
const scans = ta.app.container.resolve(QuotaScanService);
const users = ta.app.container.resolve(UserService);

const put = (url: string, payload: unknown, tok = token) => ta.inject('PUT', url, { token: tok, payload });
const usage = async (kind: 'users' | 'folders', name: string) => {
  const r = ta.json(await ta.inject('GET', `/api/v2/${kind}/${name}`, { token }));
  return { size: r.used_quota_size, files: r.used_quota_files, up: r.used_upload_data_transfer, down: r.used_download_data_transfer, at: r.last_quota_update };
};

const home = tmpDir();
const shared = tmpDir();
const own = tmpDir();
writeFileSync(path.join(home, 'a.bin'), Buffer.alloc(100));
mkdirSync(path.join(home, 'sub/deeper'), { recursive: true });
writeFileSync(path.join(home, 'sub/b.bin'), Buffer.alloc(20));
writeFileSync(path.join(home, 'sub/deeper/c.bin'), Buffer.alloc(3));
writeFileSync(path.join(shared, 's.bin'), Buffer.alloc(1000));
writeFileSync(path.join(own, 'o.bin'), Buffer.alloc(5000));

async function setup(method: string, url: string, payload: unknown) {
  const r = await ta.inject(method, url, { token, payload });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.payload}`);
}
for (const [name, dir] of [
  ['shared', shared],
  ['own', own],
])
  await setup('POST', '/api/v2/folders', { name, mapped_path: dir });
await setup(
  'POST',
  '/api/v2/users',
  user('qa', {
    home_dir: home,
    virtual_folders: [
      { name: 'shared', virtual_path: '/shared', quota_size: -1, quota_files: -1 },
      { name: 'own', virtual_path: '/own', quota_size: 0, quota_files: 0 },
    ],
  }),
);

t.test('usage: reset (default) and add, missing fields count 0, never below 0', async (t) => {
  const r = await put('/api/v2/quotas/users/qa/usage', { used_quota_size: 500, used_quota_files: 5 });
  t.equal(r.statusCode, 200, r.payload);
  t.match(await usage('users', 'qa'), { size: 500, files: 5 });
  t.ok((await usage('users', 'qa')).at > 0, 'last_quota_update stamped');
  t.equal((await put('/api/v2/quotas/users/qa/usage?mode=add', { used_quota_size: 20 })).statusCode, 200);
  t.match(await usage('users', 'qa'), { size: 520, files: 5 }, 'a missing field adds 0');
  t.equal((await put('/api/v2/quotas/users/qa/usage?mode=add', { used_quota_size: -1000, used_quota_files: -2 })).statusCode, 200);
  t.match(await usage('users', 'qa'), { size: 0, files: 3 }, 'decrements stop at 0');
  t.equal((await put('/api/v2/quotas/users/qa/usage', { used_quota_files: 1 })).statusCode, 200);
  t.match(await usage('users', 'qa'), { size: 0, files: 1 }, 'reset: a missing field is 0');

  t.equal((await put('/api/v2/quotas/users/qa/transfer-usage', { used_upload_data_transfer: 10, used_download_data_transfer: 20 })).statusCode, 200);
  t.equal((await put('/api/v2/quotas/users/qa/transfer-usage?mode=add', { used_download_data_transfer: 5 })).statusCode, 200);
  t.match(await usage('users', 'qa'), { up: 10, down: 25 });
  t.equal((await put('/api/v2/quotas/users/qa/transfer-usage?mode=add', { used_upload_data_transfer: -50 })).statusCode, 200);
  t.match(await usage('users', 'qa'), { up: 0, down: 25 });
  // a download's counters linger before they are stored (CounterWrites): a reset stores them first, so they do not land on top of it
  const qa = await users.get('qa', null);
  const lingering = quotas.addTransfer(qa.id, 0, 1000, { linger: true });
  t.equal((await put('/api/v2/quotas/users/qa/transfer-usage', { used_download_data_transfer: 3 })).statusCode, 200);
  // (its promise settles once it is stored: before the reset's update with the flush, after it without)
  await lingering;
  t.match(await usage('users', 'qa'), { up: 0, down: 3 }, 'the reset is the last word');
  // in add mode they are simply summed
  const more = quotas.addTransfer(qa.id, 0, 10, { linger: true });
  t.equal((await put('/api/v2/quotas/users/qa/transfer-usage?mode=add', { used_download_data_transfer: 4 })).statusCode, 200);
  await more;
  t.match(await usage('users', 'qa'), { up: 0, down: 17 });

  t.equal((await put('/api/v2/quotas/folders/shared/usage', { used_quota_size: 7, used_quota_files: 1 })).statusCode, 200);
  t.equal((await put('/api/v2/quotas/folders/shared/usage?mode=add', { used_quota_size: 3 })).statusCode, 200);
  t.match(await usage('folders', 'shared'), { size: 10, files: 1 });

  const bad: [string, unknown, number, RegExp][] = [
    ['/api/v2/quotas/users/ghost/usage', {}, 404, /user "ghost" not found/],
    ['/api/v2/quotas/users/ghost/transfer-usage', {}, 404, /user "ghost" not found/],
    ['/api/v2/quotas/folders/ghost/usage', {}, 404, /folder "ghost" not found/],
    ['/api/v2/quotas/users/qa/usage?mode=sub', {}, 400, /"mode" must be one of/],
    ['/api/v2/quotas/users/qa/usage', { used_quota_size: -1 }, 400, /"used_quota_size" must be greater than or equal to 0 with mode=reset/],
    ['/api/v2/quotas/users/qa/usage', { used_quota_size: 1.5 }, 400, /"used_quota_size" must be an integer/],
    // an unknown member is dropped, not refused: refused here for the known one
    ['/api/v2/quotas/users/qa/usage', { used_quota_bytes: 1, used_quota_files: -1 }, 400, /"used_quota_files" must be greater than or equal to 0/],
    ['/api/v2/quotas/users/qa/transfer-usage', { used_upload_data_transfer: -3 }, 400, /"used_upload_data_transfer" must be greater than or equal to 0/],
    ['/api/v2/quotas/users/a%5Cb/usage', {}, 400, /"username"/],
  ];
  for (const [url, body, status, re] of bad) {
    const res = await put(url, body);
    t.equal(res.statusCode, status, url);
    t.match(ta.json(res).message, re);
  }
});

t.test('scans: 202, background walk with the provider Fs, folders with quota -1 add into the user', async (t) => {
  const r = await ta.inject('POST', '/api/v2/quotas/users/qa/scan', { token });
  t.equal(r.statusCode, 202, r.payload);
  t.match(ta.json(r), { message: String });
  await scans.idle();
  t.match(await usage('users', 'qa'), { size: 123 + 1000, files: 4 }, 'home (3 files) + the -1 folder, not the folder with its own quota');
  t.equal((await ta.inject('POST', '/api/v2/quotas/folders/own/scan', { token })).statusCode, 202);
  await scans.idle();
  t.match(await usage('folders', 'own'), { size: 5000, files: 1 });

  // every backend: the provider's own usedSpace (object store fixture), prefix interpolated
  fixture().objects.set('s3:bucket-a/tenants/cloudy/x', 40);
  fixture().objects.set('s3:bucket-a/tenants/cloudy/y/z', 2);
  fixture().objects.set('s3:bucket-a/tenants/other/q', 1000);
  t.equal(
    (await ta.inject('POST', '/api/v2/users', { token, payload: user('cloudy', { filesystem: s3({ key_prefix: 'tenants/%username%/' }) }) })).statusCode,
    201,
  );
  t.equal((await ta.inject('POST', '/api/v2/quotas/users/cloudy/scan', { token })).statusCode, 202);
  await scans.idle();
  t.match(await usage('users', 'cloudy'), { size: 42, files: 2 });
  const created = fixture()
    .created.filter((c) => c.provider === 1 && c.scope.username === 'cloudy')
    .at(-1)!;
  t.equal(created.options.access_secret, 'S3-SECRET-PLAIN', 'the scan Fs got the decrypted secret');

  // a home that does not exist yet holds nothing
  t.equal((await ta.inject('POST', '/api/v2/users', { token, payload: user('empty', { home_dir: path.join(home, 'missing') }) })).statusCode, 201);
  await put('/api/v2/quotas/users/empty/usage', { used_quota_size: 77 });
  t.equal((await ta.inject('POST', '/api/v2/quotas/users/empty/scan', { token })).statusCode, 202);
  await scans.idle();
  t.match(await usage('users', 'empty'), { size: 0, files: 0 });

  for (const u of ['/api/v2/quotas/users/ghost/scan', '/api/v2/quotas/folders/ghost/scan']) t.equal((await ta.inject('POST', u, { token })).statusCode, 404, u);
  t.equal((await ta.inject('POST', '/api/v2/quotas/users/a%2Fb/scan', { token })).statusCode, 400);
});

t.test('template folders (placeholders in mapped_path or prefix) are scanned through their users, not as one tree', async (t) => {
  const base = tmpDir();
  mkdirSync(path.join(base, 'tq'));
  writeFileSync(path.join(base, 'tq', 't.bin'), Buffer.alloc(300));
  mkdirSync(path.join(base, '%username%'));
  writeFileSync(path.join(base, '%username%', 'literal.bin'), Buffer.alloc(7));
  await setup('POST', '/api/v2/folders', { name: 'tpl-local', mapped_path: path.join(base, '%username%') });
  await setup('POST', '/api/v2/folders', { name: 'tpl-cloud', filesystem: s3({ key_prefix: 'teams/%custom1%/' }) });
  for (const [name, field] of [
    ['tpl-local', 'mapped_path'],
    ['tpl-cloud', 'filesystem.s3config.key_prefix'],
  ]) {
    const r = await ta.inject('POST', `/api/v2/quotas/folders/${name}/scan`, { token });
    t.equal(r.statusCode, 400, name);
    t.match(ta.json(r), {
      error: 'Bad Request',
      message: `folder "${name}" cannot be scanned: its ${field} holds placeholders, so each user has its own directory there (scan the users instead)`,
    });
  }
  t.same(ta.json(await ta.inject('GET', '/api/v2/quotas/folders/scans', { token })), [], 'no scan started');
  t.match(await usage('folders', 'tpl-local'), { size: 0, files: 0, at: 0 }, 'the literal "%username%" directory was not counted');

  // a user scan counts the user's own directory of a template folder mapped with quota -1
  const own = tmpDir();
  await setup(
    'POST',
    '/api/v2/users',
    user('tq', { home_dir: own, virtual_folders: [{ name: 'tpl-local', virtual_path: '/team', quota_size: -1, quota_files: -1 }] }),
  );
  t.equal((await ta.inject('POST', '/api/v2/quotas/users/tq/scan', { token })).statusCode, 202);
  await scans.idle();
  t.match(await usage('users', 'tq'), { size: 300, files: 1 });
});

t.test('409 while a scan of the same target runs; running scans are listed', async (t) => {
  t.same(ta.json(await ta.inject('GET', '/api/v2/quotas/users/scans', { token })), []);
  const gate = holdScans();
  try {
    const before = Date.now();
    t.equal((await ta.inject('POST', '/api/v2/quotas/users/qa/scan', { token })).statusCode, 202);
    t.equal((await ta.inject('POST', '/api/v2/quotas/folders/shared/scan', { token })).statusCode, 202);
    const again = await ta.inject('POST', '/api/v2/quotas/users/qa/scan', { token });
    t.equal(again.statusCode, 409);
    t.match(ta.json(again), { error: 'Conflict', message: /quota scan of user "qa" is already running/ });
    t.equal((await ta.inject('POST', '/api/v2/quotas/folders/shared/scan', { token })).statusCode, 409);
    t.equal((await put('/api/v2/quotas/users/qa/usage', { used_quota_size: 1 })).statusCode, 409);
    t.equal((await put('/api/v2/quotas/users/qa/transfer-usage', { used_upload_data_transfer: 1 })).statusCode, 409);
    t.equal((await put('/api/v2/quotas/folders/shared/usage', { used_quota_size: 1 })).statusCode, 409);
    t.equal((await put('/api/v2/quotas/folders/own/usage', { used_quota_size: 1 })).statusCode, 200, 'other targets are free');
    const us = ta.json(await ta.inject('GET', '/api/v2/quotas/users/scans', { token }));
    t.match(us, [{ username: 'qa', start_time: Number }]);
    t.ok(us[0].start_time >= before);
    t.match(ta.json(await ta.inject('GET', '/api/v2/quotas/folders/scans', { token })), [{ name: 'shared', start_time: Number }]);
  } finally {
    gate.release();
  }
  await scans.idle();
  t.same(ta.json(await ta.inject('GET', '/api/v2/quotas/users/scans', { token })), []);
  t.same(ta.json(await ta.inject('GET', '/api/v2/quotas/folders/scans', { token })), []);
  t.match(await usage('folders', 'shared'), { size: 1000, files: 1 });
  t.equal((await put('/api/v2/quotas/users/qa/usage', { used_quota_size: 1 })).statusCode, 200);
});

t.test('concurrent usage updates lose no increment', async (t) => {
  const eff = await users.effectiveUser('qa');
  await quotas.setUserUsage(eff.id, 0, 0);
  t.equal((await put('/api/v2/quotas/users/qa/transfer-usage', {})).statusCode, 200);
  const shared = eff.virtual_folders.find((v) => v.name === 'shared')!;
  const ownF = eff.virtual_folders.find((v) => v.name === 'own')!;
  await quotas.setFolderUsage(shared.folder_id, 0, 0);
  await quotas.setFolderUsage(ownF.folder_id, 0, 0);
  const N = 100;
  await Promise.all([
    ...Array.from({ length: N }, () => quotas.addUserUsage(eff.id, 10, 1)),
    ...Array.from({ length: N }, () => quotas.addTransfer(eff.id, 3, 7)),
    ...Array.from({ length: N }, () => quotas.addUsage(eff, shared, 2, 1)),
    ...Array.from({ length: N }, () => quotas.addUsage(eff, ownF, 5, 1)),
    ...Array.from({ length: 20 }, () => put('/api/v2/quotas/users/qa/usage?mode=add', { used_quota_size: 1 })),
  ]);
  const u = await usage('users', 'qa');
  t.equal(u.size, N * 10 + N * 2 + 20, 'user: own + the -1 folder + API adds');
  t.equal(u.files, N + N);
  t.equal(u.up, N * 3);
  t.equal(u.down, N * 7);
  t.match(await usage('folders', 'shared'), { size: N * 2, files: N });
  t.match(await usage('folders', 'own'), { size: N * 5, files: N }, 'a folder with its own quota does not count for the user');
  await Promise.all(Array.from({ length: N }, () => quotas.addUserUsage(eff.id, -20, -3)));
  t.match(await usage('users', 'qa'), { size: 0, files: 0 }, 'concurrent decrements stop at 0');
  await t.rejects(quotas.addUserUsage(eff.id, 0.5, 0), RangeError);
});

t.test('permissions: quota_scans; role admins only reach their users', async (t) => {
  t.equal((await ta.inject('GET', '/api/v2/quotas/users/scans')).statusCode, 401);
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'noq', password: 'noq-pw', permissions: ['view_users', 'edit_users'] } });
  const noq = await ta.adminToken('noq', 'noq-pw');
  for (const [m, u] of [
    ['GET', '/api/v2/quotas/users/scans'],
    ['GET', '/api/v2/quotas/folders/scans'],
    ['POST', '/api/v2/quotas/users/qa/scan'],
    ['POST', '/api/v2/quotas/folders/own/scan'],
    ['PUT', '/api/v2/quotas/users/qa/usage'],
    ['PUT', '/api/v2/quotas/users/qa/transfer-usage'],
    ['PUT', '/api/v2/quotas/folders/own/usage'],
  ] as const) {
    t.equal((await ta.inject(m, u, { token: noq, payload: m === 'PUT' ? {} : undefined })).statusCode, 403, `${m} ${u}`);
  }
  await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'rq' } });
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'rqa', password: 'rqa-pw', permissions: ['quota_scans'], role: 'rq' } });
  t.equal((await ta.inject('POST', '/api/v2/users', { token, payload: user('rq-user', { role: 'rq', home_dir: own }) })).statusCode, 201);
  const rq = await ta.adminToken('rqa', 'rqa-pw');
  t.equal((await put('/api/v2/quotas/users/qa/usage', {}, rq)).statusCode, 404, 'a user of another role is not found');
  t.equal((await ta.inject('POST', '/api/v2/quotas/users/qa/scan', { token: rq })).statusCode, 404);
  t.equal((await put('/api/v2/quotas/users/rq-user/usage', { used_quota_size: 4 }, rq)).statusCode, 200);
  const gate = holdScans();
  t.equal((await ta.inject('POST', '/api/v2/quotas/users/rq-user/scan', { token: rq })).statusCode, 202);
  t.equal((await ta.inject('POST', '/api/v2/quotas/users/qa/scan', { token })).statusCode, 202);
  t.same(
    ta.json(await ta.inject('GET', '/api/v2/quotas/users/scans', { token: rq })).map((x: { username: string }) => x.username),
    ['rq-user'],
    'a role admin lists the scans of its users',
  );
  t.equal(ta.json(await ta.inject('GET', '/api/v2/quotas/users/scans', { token })).length, 2);
  gate.release();
  await scans.idle();
  t.match(await usage('users', 'rq-user'), { size: 5000, files: 1 });
});

t.test('stopping the app aborts running scans', async (t) => {
  const other = await createTestApp({ plugins: [{ name: 'fixture-fs-accounts', path: 'core/test/fixtures/plugins/fs-accounts' }] });
  const tok = await other.adminToken();
  t.equal((await other.inject('POST', '/api/v2/folders', { token: tok, payload: { name: 'slow', mapped_path: shared } })).statusCode, 201);
  const gate = holdScans();
  t.equal((await other.inject('POST', '/api/v2/quotas/folders/slow/scan', { token: tok })).statusCode, 202);
  const s = other.app.container.resolve(QuotaScanService);
  t.ok(s.isScanningFolder('slow'));
  const closing = other.close();
  gate.release();
  await closing;
  t.notOk(s.isScanningFolder('slow'), 'the scan ended with the app');
});
