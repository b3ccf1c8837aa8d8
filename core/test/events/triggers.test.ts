import t from 'tap';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createTestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { FsHooks } from '../../src/events/fs-hooks.js';
import type { FsEvent } from '../../src/events/event-types.js';
import { EventManager } from '../../src/event-manager/event-manager.js';

const FIXTURE = { name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app: 'triggers' } };
const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, FIXTURE], config: { event_manager: { rules_cache_ttl: 0 } } });
t.teardown(() => ta.close());
const token = await ta.adminToken();
const bus = ta.app.container.resolve<EventBus>(TOKENS.EventBus);
const hooks = ta.app.container.resolve<FsHooks>(TOKENS.FsHooks);
const mgr = ta.app.container.resolve(EventManager);

type Entry = {
  app: string;
  rule: string;
  action: string;
  trigger: number;
  options: Record<string, any>;
  username?: string;
  params: Record<string, any>;
  failedActions?: string[];
  hasPending: boolean;
};
const LOG = ((globalThis as any).__ferryActionLog ??= []) as Entry[];
const mine = () => LOG.filter((e) => e.app === 'triggers');
const take = () => {
  const out = mine();
  for (const e of out) LOG.splice(LOG.indexOf(e), 1);
  return out;
};
const settle = async () => {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setImmediate(r));
    await mgr.idle();
  }
};

async function action(name: string, test_config: Record<string, unknown> = {}, type = 101) {
  const r = await ta.inject('POST', '/api/v2/eventactions', { token, payload: { name, type, options: type === 101 ? { test_config } : {} } });
  if (r.statusCode !== 201) throw new Error(r.payload);
}
async function rule(
  name: string,
  trigger: number,
  conditions: Record<string, unknown>,
  actions: { name: string; order?: number; relation_options?: Record<string, boolean> }[],
) {
  const r = await ta.inject('POST', '/api/v2/eventrules', { token, payload: { name, trigger, conditions, actions } });
  if (r.statusCode !== 201) throw new Error(r.payload);
}
const fsEvent = (o: Partial<FsEvent> = {}): FsEvent => ({
  timestamp: Date.now() * 1e6,
  action: 'upload',
  username: 'alice',
  fs_path: '/srv/alice/a.txt',
  virtual_path: '/docs/a.txt',
  file_size: 100,
  elapsed: 5,
  status: 1,
  protocol: 'HTTP',
  ip: '10.0.0.1',
  session_id: 's1',
  fs_provider: 0,
  instance_id: 'n1',
  groups: ['staff'],
  ...o,
});

await action('rec', {
  message:
    '{{.Event}} {{.Name}} {{.VirtualPath}} {{.ExtName}} {{.FileSize}} {{.Protocol}} {{.IP}} {{if .Initiator.User}}u:{{.Initiator.User.Username}}{{end}}{{if .Initiator.Admin}}a:{{.Initiator.Admin.Username}}{{end}}',
  list: ['{{.Status}}'],
  token: { status: 'Plain', payload: 'tok-1' },
});
await action('rec2', { message: 'second' });
await action('failing', { fail: true });
await action('on-failure', { message: 'failed: {{.ErrorString}}' });
await action('out', { output: 'x1' });
await action('reader', { message: '{{range .TestOutputs}}{{.}}{{end}}' });
await action('bad-render', { message: '{{.Initiator.User.Username}}' });

t.test('trigger 1: filesystem events match on fs_events, names, groups, paths, sizes, protocols, statuses', async (t) => {
  await rule(
    'fs-upload',
    1,
    {
      fs_events: ['upload'],
      options: {
        names: [{ pattern: 'al*' }],
        group_names: [{ pattern: 'staff' }],
        fs_paths: [{ pattern: '/docs/**' }],
        min_size: 10,
        max_size: 1000,
        protocols: ['HTTP', 'SFTP'],
        event_statuses: [1],
      },
    },
    [{ name: 'rec' }],
  );
  await rule('fs-not-tmp', 1, { fs_events: ['upload', 'delete'], options: { names: [{ pattern: 'tmp*', inverse_match: true }] } }, [{ name: 'rec2' }]);
  bus.publish('fs', fsEvent());
  await settle();
  const got = take();
  t.same(got.map((e) => e.rule).sort(), ['fs-not-tmp', 'fs-upload']);
  const e = got.find((x) => x.rule === 'fs-upload')!;
  t.equal(e.options.message, 'upload alice /docs/a.txt .txt 100 HTTP 10.0.0.1 u:alice', 'templates rendered against the context');
  t.same(e.options.list, ['1']);
  t.equal(e.options.token, 'tok-1', 'secret decrypted for the runner');
  t.equal(e.username, 'alice');
  t.equal(e.params.Name, 'alice');

  const cases: [string, Partial<FsEvent>, string[]][] = [
    ['other event', { action: 'download' }, []],
    ['delete', { action: 'delete' }, ['fs-not-tmp']],
    ['name', { username: 'bob' }, ['fs-not-tmp']],
    ['inverse name', { username: 'tmpuser' }, []],
    ['group', { groups: ['other'] }, ['fs-not-tmp']],
    ['path', { virtual_path: '/x/a.txt' }, ['fs-not-tmp']],
    ['small', { file_size: 5 }, ['fs-not-tmp']],
    ['big', { file_size: 5000 }, ['fs-not-tmp']],
    ['protocol', { protocol: 'FTP' }, ['fs-not-tmp']],
    ['status', { status: 2 }, ['fs-not-tmp']],
  ];
  for (const [what, ev, rules] of cases) {
    bus.publish('fs', fsEvent(ev));
    await settle();
    t.same(
      take()
        .map((x) => x.rule)
        .sort(),
      rules,
      what,
    );
  }
  // disabled rules do not run
  await ta.inject('PUT', '/api/v2/eventrules/fs-not-tmp', {
    token,
    payload: { name: 'fs-not-tmp', status: 0, trigger: 1, conditions: { fs_events: ['delete'] }, actions: [{ name: 'rec2' }] },
  });
  bus.publish('fs', fsEvent({ action: 'delete' }));
  await settle();
  t.same(take(), [], 'disabled');
  await ta.inject('DELETE', '/api/v2/eventrules/fs-not-tmp', { token });
  await ta.inject('DELETE', '/api/v2/eventrules/fs-upload', { token });
});

t.test('trigger 2: provider events on provider_events, provider_objects and names', async (t) => {
  await rule('prov', 2, { provider_events: ['add', 'delete'], options: { provider_objects: ['user', 'folder'], names: [{ pattern: 'team-*' }] } }, [
    { name: 'rec' },
  ]);
  const pub = (action: 'add' | 'update' | 'delete', object_type: 'user' | 'group' | 'folder', object_name: string) =>
    bus.publish('provider', {
      timestamp: Date.now() * 1e6,
      action,
      username: 'root',
      ip: '10.1.1.1',
      object_type,
      object_name,
      object_data: { username: object_name, email: 'x@y.z' },
      role: '',
      instance_id: 'n1',
    });
  pub('add', 'user', 'team-a');
  pub('update', 'user', 'team-b');
  pub('add', 'group', 'team-c');
  pub('delete', 'folder', 'team-d');
  pub('add', 'user', 'solo');
  await settle();
  const got = take();
  t.same(got.map((e) => e.params.Name).sort(), ['team-a', 'team-d']);
  const a = got.find((e) => e.params.Name === 'team-a')!;
  t.equal(a.username, 'team-a', 'the affected user');
  t.equal(a.options.message, 'add team-a   0  10.1.1.1 a:root');
  t.same(a.params.Object.User, { username: 'team-a', email: 'x@y.z' });
  t.equal(a.params.Object.JSON, '{"username":"team-a","email":"x@y.z"}');
  t.equal(a.params.Object.Group, null);
  t.equal(got.find((e) => e.params.Name === 'team-d')!.username, undefined, 'no user for a folder');
  await ta.inject('DELETE', '/api/v2/eventrules/prov', { token });
});

t.test('trigger 2 through HTTP: POST/PUT/DELETE of /users and /folders fire the matching rules only', async (t) => {
  await action('prov-rec', { message: '{{.Event}} {{.ObjectType}} {{.Name}} by {{.Initiator.Admin.Username}}' });
  await rule('users-add-delete', 2, { provider_events: ['add', 'delete'], options: { provider_objects: ['user'], names: [{ pattern: 'team-*' }] } }, [
    { name: 'prov-rec' },
  ]);
  await rule('users-update', 2, { provider_events: ['update'], options: { provider_objects: ['user'] } }, [{ name: 'prov-rec' }]);
  await rule(
    'folders-all',
    2,
    { provider_events: ['add', 'update', 'delete'], options: { provider_objects: ['folder'], names: [{ pattern: 'tmp-*', inverse_match: true }] } },
    [{ name: 'prov-rec' }],
  );
  // a rule on another object type never fires for users or folders
  await rule('groups-add', 2, { provider_events: ['add'], options: { provider_objects: ['group'] } }, [{ name: 'prov-rec' }]);
  const api = async (method: string, url: string, payload?: unknown) => {
    const r = await ta.inject(method, url, { token, payload });
    t.ok(r.statusCode < 300, `${method} ${url}: ${r.statusCode} ${r.statusCode < 300 ? '' : r.payload}`);
    return r.payload ? (JSON.parse(r.payload) as Record<string, unknown>) : {};
  };
  const fired = async () => {
    await settle();
    return take()
      .map((e) => `${e.rule}: ${e.options.message}`)
      .sort();
  };
  const newUser = (username: string) => ({
    username,
    password: 'user-password-1',
    home_dir: path.join(ta.dataDir, 'homes', username),
    permissions: { '/': ['*'] },
    email: `${username}@example.com`,
  });

  await api('POST', '/api/v2/users', newUser('team-a'));
  t.same(await fired(), ['users-add-delete: add user team-a by admin'], 'POST /users: only the add rule on users with a matching name');
  await api('POST', '/api/v2/users', newUser('solo'));
  t.same(await fired(), [], 'a user the names do not match: nothing');

  const current = await api('GET', '/api/v2/users/team-a');
  await api('PUT', '/api/v2/users/team-a', { ...current, email: 'new@example.com' });
  await settle();
  const all = take();
  t.same(
    all.map((e) => `${e.rule}: ${e.options.message}`),
    ['users-update: update user team-a by admin'],
    'PUT /users: the update rule',
  );
  const obj = all[0]!.params.Object.User as Record<string, unknown>;
  t.equal(obj.username, 'team-a');
  t.equal(obj.email, 'new@example.com', 'the object data is the updated user');
  t.notOk(JSON.stringify(all[0]!.params.Object.JSON).includes('user-password-1'), 'no password in the object data');
  t.equal(all[0]!.username, 'team-a', 'the affected user');

  await api('POST', '/api/v2/folders', { name: 'shared', mapped_path: path.join(ta.dataDir, 'folders', 'shared') });
  await api('POST', '/api/v2/folders', { name: 'tmp-x', mapped_path: path.join(ta.dataDir, 'folders', 'tmp-x') });
  t.same(await fired(), ['folders-all: add folder shared by admin'], 'POST /folders: the folder rule, inverse_match excludes tmp-*');
  const folder = await api('GET', '/api/v2/folders/shared');
  await api('PUT', '/api/v2/folders/shared', { ...folder, description: 'changed' });
  t.same(await fired(), ['folders-all: update folder shared by admin'], 'PUT /folders');
  await api('DELETE', '/api/v2/folders/shared');
  await api('DELETE', '/api/v2/folders/tmp-x');
  t.same(await fired(), ['folders-all: delete folder shared by admin'], 'DELETE /folders');

  await api('DELETE', '/api/v2/users/team-a');
  await api('DELETE', '/api/v2/users/solo');
  t.same(await fired(), ['users-add-delete: delete user team-a by admin'], 'DELETE /users: the delete rule, not the update one');
  for (const r of ['users-add-delete', 'users-update', 'folders-all', 'groups-add']) await ta.inject('DELETE', `/api/v2/eventrules/${r}`, { token });
});

t.test('triggers 4, 5 and 7: IP blocked, certificate, IDP login', async (t) => {
  await rule('ipb', 4, {}, [{ name: 'rec2' }]);
  await rule('cert', 5, { options: { names: [{ pattern: '*.example.com' }] } }, [{ name: 'rec2' }]);
  await rule('idp-users', 7, { idp_login_event: 1 }, [{ name: 'rec' }]);
  await rule('idp-admins', 7, { idp_login_event: 2 }, [{ name: 'rec2' }]);
  await rule('idp-any', 7, { idp_login_event: 0 }, [{ name: 'rec2' }]);
  bus.publish('ip-blocked', { timestamp: Date.now() * 1e6, ip: '6.6.6.6', protocol: 'SFTP', instance_id: 'n1' });
  await settle();
  t.same(
    take().map((e) => `${e.rule} ${e.params.IP}`),
    ['ipb 6.6.6.6'],
  );
  bus.publish('certificate', { timestamp: Date.now() * 1e6, names: ['www.example.com'], status: 'renewed', instance_id: 'n1' });
  bus.publish('certificate', { timestamp: Date.now() * 1e6, names: ['other.org'], status: 'failed', instance_id: 'n1' });
  await settle();
  t.same(
    take().map((e) => `${e.rule} ${e.params.Name} ${e.params.Status}`),
    ['cert www.example.com 1'],
  );
  bus.publish('idp-login', {
    timestamp: Date.now() * 1e6,
    kind: 'user',
    username: 'carol',
    email: 'c@x.y',
    role: 'r1',
    ip: '1.2.3.4',
    fields: { dept: 'it' },
    instance_id: 'n1',
  });
  await settle();
  const users = take();
  t.same(users.map((e) => e.rule).sort(), ['idp-any', 'idp-users']);
  const u = users.find((e) => e.rule === 'idp-users')!;
  t.equal(u.username, 'carol');
  t.same(u.params.IDPFields, { dept: 'it' });
  t.equal(u.params.Email, 'c@x.y');
  bus.publish('idp-login', { timestamp: Date.now() * 1e6, kind: 'admin', username: 'root', role: '', ip: '1.2.3.4', fields: {}, instance_id: 'n1' });
  await settle();
  t.same(
    take()
      .map((e) => e.rule)
      .sort(),
    ['idp-admins', 'idp-any'],
  );
  for (const r of ['ipb', 'cert', 'idp-users', 'idp-admins', 'idp-any']) await ta.inject('DELETE', `/api/v2/eventrules/${r}`, { token });
});

t.test('trigger 6: on demand answers 202 and runs asynchronously; ordering, outputs, failure actions', async (t) => {
  await rule('demand', 6, { options: { names: [{ pattern: 'x*' }] } }, [
    { name: 'reader', order: 3 },
    { name: 'failing', order: 2 },
    { name: 'out', order: 1 },
    { name: 'on-failure', order: 9, relation_options: { is_failure_action: true } },
  ]);
  const r = await ta.inject('POST', '/api/v2/eventrules/run/demand', { token });
  t.equal(r.statusCode, 202, r.payload);
  t.same(r.result, { message: 'event rule started' });
  await settle();
  const got = take();
  t.same(
    got.map((e) => e.action),
    ['out', 'failing', 'reader', 'on-failure'],
    'ascending order, failure action last',
  );
  t.equal(got[2]!.options.message, 'x1', 'outputs of earlier actions reach later ones');
  t.equal(got[3]!.options.message, 'failed: failing: test action failing failed');
  t.same(got[3]!.failedActions, ['failing']);
  t.equal(got[0]!.params.Initiator.Admin.Username, 'admin');
  t.equal(got[0]!.params.Event, 'On-Demand');

  // stop_on_failure stops the ordinary actions; no failure → no failure action
  await rule('demand2', 6, {}, [
    { name: 'failing', order: 1, relation_options: { stop_on_failure: true } },
    { name: 'rec2', order: 2 },
    { name: 'on-failure', order: 3, relation_options: { is_failure_action: true } },
  ]);
  await rule('demand3', 6, {}, [{ name: 'rec2' }, { name: 'on-failure', relation_options: { is_failure_action: true } }]);
  await ta.inject('POST', '/api/v2/eventrules/run/demand2', { token });
  await ta.inject('POST', '/api/v2/eventrules/run/demand3', { token });
  await settle();
  const g2 = take();
  t.same(
    g2.filter((e) => e.rule === 'demand2').map((e) => e.action),
    ['failing', 'on-failure'],
  );
  t.same(
    g2.filter((e) => e.rule === 'demand3').map((e) => e.action),
    ['rec2'],
  );

  // a render error is an action failure
  await rule('demand4', 6, {}, [{ name: 'bad-render' }, { name: 'on-failure', relation_options: { is_failure_action: true } }]);
  const execs: string[] = [];
  const off = mgr.onExecution((x) => execs.push(`${x.action}:${x.ok}:${x.error ?? ''}`));
  await ta.inject('POST', '/api/v2/eventrules/run/demand4', { token });
  await settle();
  off();
  t.match(execs[0], /^bad-render:false:cannot render test_config.message: template: .*nil pointer evaluating/);
  t.match(
    take().map((e) => e.action),
    ['on-failure'],
  );

  t.equal((await ta.inject('POST', '/api/v2/eventrules/run/ghost', { token })).statusCode, 404);
  await rule('not-demand', 4, {}, [{ name: 'rec2' }]);
  const nd = await ta.inject('POST', '/api/v2/eventrules/run/not-demand', { token });
  t.equal(nd.statusCode, 400);
  t.match(nd.payload, /not an on-demand rule/);
  for (const n of ['demand', 'demand2', 'demand3', 'demand4', 'not-demand']) await ta.inject('DELETE', `/api/v2/eventrules/${n}`, { token });
});

t.test('sync actions: run inline through FsHooks.runSync; stop_on_failure aborts; the bus does not run them again', async (t) => {
  await rule('sync-ok', 1, { fs_events: ['upload'] }, [
    { name: 'rec', order: 1, relation_options: { execute_sync: true } },
    { name: 'rec2', order: 2 },
  ]);
  const ev = fsEvent();
  await hooks.runSync({ event: ev });
  t.same(
    take().map((e) => e.action),
    ['rec'],
    'sync action done before runSync returns',
  );
  await settle();
  t.same(
    take().map((e) => e.action),
    ['rec2'],
    'the rest queued',
  );
  bus.publish('fs', ev);
  await settle();
  t.same(take(), [], 'bus event does not run rules with sync actions again');

  await rule('sync-stop', 1, { fs_events: ['upload'], options: { names: [{ pattern: 'bob' }] } }, [
    { name: 'failing', order: 1, relation_options: { execute_sync: true, stop_on_failure: true } },
    { name: 'rec2', order: 2 },
    { name: 'on-failure', order: 3, relation_options: { is_failure_action: true } },
  ]);
  await t.rejects(
    hooks.runSync({ event: fsEvent({ username: 'bob' }) }),
    /operation aborted by event rule "sync-stop", action "failing": test action failing failed/,
  );
  await settle();
  t.same(
    take()
      .map((e) => `${e.rule}:${e.action}`)
      .sort(),
    ['sync-ok:rec', 'sync-ok:rec2', 'sync-stop:failing', 'sync-stop:on-failure'],
    'aborted: no further ordinary actions, failure action runs',
  );

  // without stop_on_failure the operation goes on
  await ta.inject('PUT', '/api/v2/eventrules/sync-stop', {
    token,
    payload: {
      name: 'sync-stop',
      trigger: 1,
      conditions: { fs_events: ['upload'], options: { names: [{ pattern: 'bob' }] } },
      actions: [
        { name: 'failing', relation_options: { execute_sync: true } },
        { name: 'rec2', order: 2 },
      ],
    },
  });
  await hooks.runSync({ event: fsEvent({ username: 'bob' }) });
  await settle();
  t.same(
    take()
      .map((e) => `${e.rule}:${e.action}`)
      .sort(),
    ['sync-ok:rec', 'sync-ok:rec2', 'sync-stop:failing', 'sync-stop:rec2'],
  );
  await ta.inject('DELETE', '/api/v2/eventrules/sync-ok', { token });
  await ta.inject('DELETE', '/api/v2/eventrules/sync-stop', { token });
});

t.test('before publish: runs while the upload is pending; a failure rejects it', async (t) => {
  await rule('bp', 1, { fs_events: ['upload'], options: { fs_paths: [{ pattern: '/in/*' }] } }, [
    { name: 'rec', order: 1, relation_options: { execute_before_file_publish: true } },
    { name: 'rec2', order: 2 },
  ]);
  const pending = { size: 3, openRead: async () => Readable.from([Buffer.from('abc')]) };
  await hooks.runBeforePublish({ event: fsEvent({ virtual_path: '/in/f.bin' }), pending });
  const got = take();
  t.same(
    got.map((e) => e.action),
    ['rec'],
  );
  t.ok(got[0]!.hasPending, 'the action sees the pending upload');
  bus.publish('fs', fsEvent({ virtual_path: '/in/f.bin' }));
  await settle();
  t.same(take(), [], 'the bus event does not run a rule with before-publish actions');
  await hooks.runSync({ event: fsEvent({ virtual_path: '/in/f.bin' }) });
  await settle();
  t.same(
    take().map((e) => e.action),
    ['rec2'],
    'the other actions run once the upload is published (sync hook)',
  );

  await rule('bp-fail', 1, { fs_events: ['upload'], options: { fs_paths: [{ pattern: '/scan/*' }] } }, [
    { name: 'failing', relation_options: { execute_before_file_publish: true } },
    { name: 'on-failure', relation_options: { is_failure_action: true } },
  ]);
  await t.rejects(hooks.runBeforePublish({ event: fsEvent({ virtual_path: '/scan/v.exe' }), pending }), /upload rejected by event rule "bp-fail"/);
  await settle();
  t.same(
    take().map((e) => e.action),
    ['failing', 'on-failure'],
  );
  await hooks.runBeforePublish({ event: fsEvent({ virtual_path: '/elsewhere/v.exe' }), pending });
  t.same(take(), [], 'not matching: nothing runs');
});

t.test('bounded queue: a burst beyond max_pending is dropped, not queued without limit', async (t) => {
  const t2 = await createTestApp({ plugins: [{ ...FIXTURE, config: { app: 'burst' } }], config: { event_manager: { concurrency: 1, max_pending: 2 } } });
  t.teardown(() => t2.close());
  const tk = await t2.adminToken();
  await t2.inject('POST', '/api/v2/eventactions', { token: tk, payload: { name: 'slow', type: 101, options: { test_config: { delay: 50 } } } });
  await t2.inject('POST', '/api/v2/eventrules', {
    token: tk,
    payload: { name: 'r', trigger: 1, conditions: { fs_events: ['upload'] }, actions: [{ name: 'slow' }] },
  });
  const m2 = t2.app.container.resolve(EventManager);
  await m2.rules();
  const b2 = t2.app.container.resolve<EventBus>(TOKENS.EventBus);
  for (let i = 0; i < 10; i++) b2.publish('fs', fsEvent());
  await new Promise((r) => setImmediate(r));
  await m2.idle();
  const ran = LOG.filter((e) => e.app === 'burst').length;
  t.equal(ran, 3, '1 running + 2 pending, the rest dropped');
});
