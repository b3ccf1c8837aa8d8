import t from 'tap';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TOKENS, type EventBus, type EventManager, type ProviderEvent } from '@ferry/core';
import { createTestApp } from '@ferry/core/testing';

// The built-in actions reach accounts through the EventAccounts port; its
// default implementation delegates to core's account services. These
// effects follow from that: storage roots of the effective user (group
// virtual folders included), quota rescans as quota scans, user status
// changes and deletions as the admin API does them.
const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/actions-builtin' }], config: { log: { file: '' } } });
t.teardown(() => ta.close());
const token = await ta.adminToken();
const mgr = ta.app.container.resolve<EventManager>(TOKENS.EventManager);
const json = (r: { payload: string }) => JSON.parse(r.payload);
async function api(method: string, url: string, payload?: unknown) {
  const r = await ta.inject(method, url, { token, payload });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.payload}`);
  return r.payload ? json(r) : undefined;
}
const execs: { rule: string; action: string; ok: boolean; error?: string }[] = [];
mgr.onExecution((e) => execs.push(e));
const providerEvents: ProviderEvent[] = [];
ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('provider', (e) => void providerEvents.push(e));
let n = 0;
/** Runs one action on demand for the users matching `names` and returns its outcome. */
async function runFor(action: string, names: string[]): Promise<string[]> {
  const rule = `run-${++n}`;
  await api('POST', '/api/v2/eventrules', {
    name: rule,
    trigger: 6,
    conditions: { options: { names: names.map((pattern) => ({ pattern })) } },
    actions: [{ name: action }],
  });
  const r = await ta.inject('POST', `/api/v2/eventrules/run/${rule}`, { token });
  if (r.statusCode !== 202) throw new Error(r.payload);
  await mgr.idle();
  return execs.filter((e) => e.rule === rule).map((e) => (e.ok ? 'ok' : String(e.error)));
}

const root = path.join(ta.dataDir, 'accounts');
const groupFolder = path.join(root, 'team-folder');
mkdirSync(groupFolder, { recursive: true });
await api('POST', '/api/v2/folders', { name: 'team', mapped_path: groupFolder });
await api('POST', '/api/v2/groups', { name: 'team-group', virtual_folders: [{ name: 'team', virtual_path: '/team', quota_size: -1, quota_files: -1 }] });
const homeOf = async (username: string, groups: { name: string; type: number }[] = []) => {
  const home = path.join(root, username);
  mkdirSync(home, { recursive: true });
  await api('POST', '/api/v2/users', { username, password: `${username}-pw-1`, home_dir: home, permissions: { '/': ['*'] }, groups });
  return home;
};

t.test('user quota reset (5) rescans the effective user: its home and the virtual folders of its groups counted in its quota', async (t) => {
  const home = await homeOf('member', [{ name: 'team-group', type: 2 }]);
  writeFileSync(path.join(home, 'own.bin'), Buffer.alloc(100));
  writeFileSync(path.join(groupFolder, 'shared.bin'), Buffer.alloc(40));
  await api('POST', '/api/v2/eventactions', { name: 'user-quota', type: 5 });
  t.same(await runFor('user-quota', ['member']), ['ok']);
  t.match(await api('GET', '/api/v2/users/member'), { used_quota_size: 140, used_quota_files: 2 }, 'the group folder mapped with quota -1 counts');
});

t.test('retention (8) reaches the virtual folders a user gets from its groups', async (t) => {
  const old = (Date.now() - 72 * 3_600_000) / 1000;
  writeFileSync(path.join(groupFolder, 'stale.log'), 'old');
  utimesSync(path.join(groupFolder, 'stale.log'), old, old);
  await api('POST', '/api/v2/eventactions', {
    name: 'team-retention',
    type: 8,
    options: { retention_config: { folders: [{ path: '/team', retention: 24 }] } },
  });
  t.same(await runFor('team-retention', ['member']), ['ok']);
  t.notOk(existsSync(path.join(groupFolder, 'stale.log')), 'old file of the group folder deleted');
  t.ok(existsSync(path.join(groupFolder, 'shared.bin')), 'recent file kept');
});

t.test('folder quota reset (6) is a folder quota scan', async (t) => {
  await api('PUT', '/api/v2/quotas/folders/team/usage', { used_quota_size: 1, used_quota_files: 9 });
  await api('POST', '/api/v2/eventactions', { name: 'folder-quota', type: 6 });
  t.same(await runFor('folder-quota', ['team']), ['ok']);
  t.match(await api('GET', '/api/v2/folders/team'), { used_quota_size: 40, used_quota_files: 1 });
});

t.test('transfer quota reset (7) goes through the quota service', async (t) => {
  await api('PUT', '/api/v2/quotas/users/member/transfer-usage', { used_upload_data_transfer: 77, used_download_data_transfer: 88 });
  await api('POST', '/api/v2/eventactions', { name: 'transfer-quota', type: 7 });
  t.same(await runFor('transfer-quota', ['member']), ['ok']);
  t.match(await api('GET', '/api/v2/users/member'), { used_upload_data_transfer: 0, used_download_data_transfer: 0 });
});

t.test('user inactivity (14): disabling and deleting go through the user service (provider events, API keys)', async (t) => {
  await homeOf('sleepy');
  await homeOf('gone');
  const key = (await api('POST', '/api/v2/apikeys', { name: 'gone-key', scope: 2, user: 'gone' })).key as string;
  const hasKey = async () => (await api('GET', '/api/v2/apikeys')).some((k: { id: string }) => k.id === key.split('.')[0]);
  t.ok(await hasKey());
  const sql = ta.app.orm.em.fork().getConnection();
  const long = Date.now() - 100 * 86_400_000;
  await sql.execute('update users set created_at = ? where username = ?', [long, 'sleepy']);
  await sql.execute('update users set created_at = ? where username = ?', [long - 100 * 86_400_000, 'gone']);
  await api('POST', '/api/v2/eventactions', {
    name: 'inactivity',
    type: 14,
    options: { user_inactivity_config: { disable_threshold: 50, delete_threshold: 150 } },
  });
  providerEvents.length = 0;
  t.same(await runFor('inactivity', ['sleepy', 'gone']), ['ok']);
  t.equal((await api('GET', '/api/v2/users/sleepy')).status, 0, 'disabled');
  const upd = providerEvents.find((e) => e.action === 'update' && e.object_name === 'sleepy')!;
  t.match(upd.object_data, { username: 'sleepy', status: 0, home_dir: String }, 'the provider event carries the user as the API renders it');
  t.notOk('password' in upd.object_data);
  t.equal((await ta.inject('GET', '/api/v2/users/gone', { token })).statusCode, 404, 'deleted');
  t.ok(providerEvents.some((e) => e.action === 'delete' && e.object_type === 'user' && e.object_name === 'gone'));
  t.notOk(await hasKey(), 'its API key is gone with it');
});
