import t from 'tap';
import { createTestApp } from '../../src/testing.js';

const FIXTURE = { name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions' };
const ta = await createTestApp({ plugins: [FIXTURE] });
t.teardown(() => ta.close());
const token = await ta.adminToken();
const provider: { action: string; object_type: string; object_name: string }[] = [];
const bus = ta.app.container.resolve<import('../../src/events/event-bus.js').EventBus>(Symbol.for('ferry.EventBus'));
bus.on('provider', (e) => {
  provider.push({ action: e.action, object_type: e.object_type, object_name: e.object_name });
});

const post = (url: string, payload: unknown) => ta.inject('POST', url, { token, payload });
const msg = (r: { payload: string }) => (JSON.parse(r.payload) as { message: string }).message;

t.test('event actions: create, read, update, delete, validation', async (t) => {
  const c = await post('/api/v2/eventactions', {
    name: 'notify',
    description: 'd',
    type: 101,
    options: {
      test_config: { message: 'hello {{.Name}}', list: ['{{.Event}}'], token: { status: 'Plain', payload: 'sekret' } },
      http_config: { endpoint: 'http://x' },
    },
  });
  t.equal(c.statusCode, 201, c.payload);
  t.equal(c.headers.location, '/api/v2/eventactions/notify');
  const body = c.result as { options: Record<string, Record<string, unknown>> };
  t.same(Object.keys(body.options), ['test_config'], 'other sub-objects cleared');
  t.same(body.options.test_config!.token, { status: 'AES-256-GCM' }, 'secret redacted on read');
  t.notOk(c.payload.includes('sekret'));
  const raw = JSON.stringify(await ta.app.orm.em.fork().getConnection().execute('select options from event_actions'));
  t.notOk(raw.includes('sekret'), 'secret encrypted at rest');
  const conf = await ta.inject('GET', '/api/v2/eventactions/notify?confidential_data=1', { token });
  const tok = (conf.result as typeof body).options.test_config!.token as Record<string, string>;
  t.equal(tok.status, 'AES-256-GCM');
  t.ok(tok.payload && tok.key, 'confidential read shows the encrypted form');
  t.notOk(conf.payload.includes('sekret'));

  // update with the redacted secret keeps it
  const up = await ta.inject('PUT', '/api/v2/eventactions/notify', {
    token,
    payload: { name: 'notify', type: 101, options: { test_config: { message: 'bye', token: { status: 'AES-256-GCM' } } } },
  });
  t.equal(up.statusCode, 200, up.payload);
  const after = await ta.inject('GET', '/api/v2/eventactions/notify?confidential_data=1', { token });
  t.same((after.result as typeof body).options.test_config!.token, tok, 'stored secret kept');
  t.equal((after.result as typeof body).options.test_config!.message, 'bye');

  // refusals
  const unreg = await post('/api/v2/eventactions', { name: 'x1', type: 77 });
  t.equal(unreg.statusCode, 400);
  t.match(msg(unreg), /type 77 is not available/);
  const reserved = await post('/api/v2/eventactions', { name: 'x2', type: 10 });
  t.equal(reserved.statusCode, 400);
  t.match(msg(reserved), /type 10 is reserved/);
  const bad = await post('/api/v2/eventactions', { name: 'x3', type: 101, options: { test_config: { delay: -1 } } });
  t.equal(bad.statusCode, 400);
  t.match(msg(bad), /options\.test_config: "delay" must be greater than or equal to 0/);
  const tpl = await post('/api/v2/eventactions', { name: 'x4', type: 101, options: { test_config: { list: ['ok', '{{.Name'] } } });
  t.equal(tpl.statusCode, 400);
  t.match(msg(tpl), /options\.test_config\.list\[1\]: invalid template: template: /);
  t.equal((await post('/api/v2/eventactions', { name: 'a/b', type: 101 })).statusCode, 400);
  t.equal((await post('/api/v2/eventactions', { name: 'notify', type: 101 })).statusCode, 400, 'duplicate');
  t.equal((await ta.inject('PUT', '/api/v2/eventactions/notify', { token, payload: { name: 'other', type: 101 } })).statusCode, 400, 'rename');
  t.equal((await ta.inject('GET', '/api/v2/eventactions/ghost', { token })).statusCode, 404);
  t.equal((await ta.inject('DELETE', '/api/v2/eventactions/ghost', { token })).statusCode, 404);

  // list order
  await post('/api/v2/eventactions', { name: 'another', type: 102 });
  const list = await ta.inject('GET', '/api/v2/eventactions?order=DESC', { token });
  t.same(
    (list.result as { name: string }[]).map((a) => a.name),
    ['notify', 'another'],
  );
  t.same((await ta.inject('GET', '/api/v2/eventactions/another', { token })).result, {
    id: (list.result as { id: number }[])[1]!.id,
    name: 'another',
    description: '',
    type: 102,
    options: {},
    rules: [],
  });
});

t.test('event rules: create, read with actions expanded, references, validation', async (t) => {
  const c = await post('/api/v2/eventrules', {
    name: 'on-upload',
    description: 'uploads',
    trigger: 1,
    conditions: { fs_events: ['upload'], provider_events: ['add'], options: { names: [{ pattern: 'u*' }] } },
    actions: [{ name: 'notify', order: 2, relation_options: { stop_on_failure: true } }],
  });
  t.equal(c.statusCode, 201, c.payload);
  t.equal(c.headers.location, '/api/v2/eventrules/on-upload');
  const r = c.result as Record<string, any>;
  t.equal(r.status, 1);
  t.same(r.conditions.provider_events, [], 'conditions of other triggers cleared');
  t.same(r.conditions.options.names, [{ pattern: 'u*', inverse_match: false }]);
  t.match(r.actions[0], { name: 'notify', type: 101, order: 2, relation_options: { stop_on_failure: true, execute_sync: false, is_failure_action: false } });
  t.same(r.actions[0].options.test_config.token, { status: 'AES-256-GCM' });

  // confidential_data on a rule: its expanded actions hold secrets
  const plain = await ta.inject('GET', '/api/v2/eventrules/on-upload', { token });
  t.equal(plain.statusCode, 200);
  t.same((plain.result as Record<string, any>).actions[0].options.test_config.token, { status: 'AES-256-GCM' }, 'secrets of expanded actions redacted');
  const stored = ((await ta.inject('GET', '/api/v2/eventactions/notify?confidential_data=1', { token })).result as Record<string, any>).options.test_config
    .token as Record<string, string>;
  const conf = await ta.inject('GET', '/api/v2/eventrules/on-upload?confidential_data=1', { token });
  t.equal(conf.statusCode, 200, conf.payload);
  const confTok = (conf.result as Record<string, any>).actions[0].options.test_config.token as Record<string, string>;
  t.equal(confTok.status, 'AES-256-GCM');
  t.ok(confTok.payload && confTok.key, 'confidential read of a rule shows the encrypted secret');
  t.same(confTok, stored, 'the same encrypted form as the action itself');
  t.notOk(conf.payload.includes('sekret'), 'never the cleartext');
  const zero = await ta.inject('GET', '/api/v2/eventrules/on-upload?confidential_data=0', { token });
  t.same((zero.result as Record<string, any>).actions[0].options.test_config.token, { status: 'AES-256-GCM' });
  const listed = await ta.inject('GET', '/api/v2/eventrules', { token });
  t.notOk(listed.payload.includes(confTok.payload!), 'the list never carries encrypted payloads');
  const badConf = await ta.inject('GET', '/api/v2/eventrules/on-upload?confidential_data=2', { token });
  t.equal(badConf.statusCode, 400);
  t.match(msg(badConf), /confidential_data/);
  t.same(((await ta.inject('GET', '/api/v2/eventactions/notify', { token })).result as { rules: string[] }).rules, ['on-upload']);

  const del = await ta.inject('DELETE', '/api/v2/eventactions/notify', { token });
  t.equal(del.statusCode, 400);
  t.match(msg(del), /event action "notify" is still used by rule "on-upload"/);

  const bad = async (payload: Record<string, unknown>, re: RegExp, what: string) => {
    const res = await post('/api/v2/eventrules', { name: 'bad', ...payload });
    t.equal(res.statusCode, 400, what);
    t.match(msg(res), re, what);
  };
  const act = [{ name: 'notify' }];
  await bad({ trigger: 1, conditions: {}, actions: act }, /needs at least one of conditions.fs_events/, 'no fs events');
  await bad({ trigger: 2, actions: act }, /provider_events/, 'no provider events');
  await bad(
    { trigger: 3, conditions: { schedules: [{ hour: '25', day_of_week: '*', day_of_month: '*', month: '*' }] }, actions: act },
    /schedules\[0\]: hour: 25 is out of range/,
    'bad cron',
  );
  await bad({ trigger: 3, actions: act }, /schedules/, 'no schedules');
  await bad({ trigger: 9, actions: act }, /"trigger" must be one of/, 'bad trigger');
  await bad({ trigger: 6, actions: [] }, /at least one action/, 'no actions');
  await bad({ trigger: 6, actions: [{ name: 'ghost' }] }, /event action "ghost" does not exist/, 'unknown action');
  await bad({ trigger: 6, actions: [{ name: 'notify' }, { name: 'notify' }] }, /listed twice/, 'duplicate');
  await bad({ trigger: 6, actions: [{ name: 'notify', relation_options: { is_failure_action: true } }] }, /not a failure action/, 'only failure');
  await bad(
    { trigger: 1, conditions: { fs_events: ['upload'] }, actions: [{ name: 'another' }] },
    /action "another" \(type 102, test-scheduled-only\) cannot run on trigger 1/,
    'trigger mismatch',
  );
  await bad({ trigger: 6, actions: [{ name: 'notify', relation_options: { execute_sync: true } }] }, /execute_sync is only supported/, 'sync on demand');
  await bad(
    { trigger: 1, conditions: { fs_events: ['download'] }, actions: [{ name: 'notify', relation_options: { execute_sync: true } }] },
    /execute_sync is only supported for the fs_events/,
    'sync download',
  );
  await bad(
    {
      trigger: 1,
      conditions: { fs_events: ['upload'] },
      actions: [{ name: 'notify', relation_options: { execute_sync: true, execute_before_file_publish: true } }],
    },
    /mutually exclusive/,
    'sync and before publish',
  );
  await bad(
    { trigger: 1, conditions: { fs_events: ['upload', 'delete'] }, actions: [{ name: 'notify', relation_options: { execute_before_file_publish: true } }] },
    /only supported for rules on the upload filesystem event only/,
    'before publish on delete',
  );
  await bad({ trigger: 1, conditions: { fs_events: ['upload'], options: { names: [{ pattern: '[a' }] } }, actions: act }, /malformed pattern/, 'pattern');
  await bad(
    { trigger: 6, actions: [{ name: 'notify', relation_options: { is_failure_action: true, execute_sync: true } }, { name: 'another' }] },
    /failure action cannot be executed synchronously/,
    'sync failure',
  );

  // update, disable, list, delete
  const up = await ta.inject('PUT', '/api/v2/eventrules/on-upload', {
    token,
    payload: {
      name: 'on-upload',
      status: 0,
      trigger: 6,
      actions: [
        { name: 'another', order: 1 },
        { name: 'notify', order: 0 },
      ],
    },
  });
  t.equal(up.statusCode, 200, up.payload);
  const g = (await ta.inject('GET', '/api/v2/eventrules/on-upload', { token })).result as Record<string, any>;
  t.equal(g.status, 0);
  t.same(g.conditions.fs_events, []);
  t.same(
    g.actions.map((a: { name: string }) => a.name),
    ['notify', 'another'],
    'ordered by order',
  );
  t.equal((await ta.inject('GET', '/api/v2/eventrules', { token })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/eventrules/ghost', { token })).statusCode, 404);
  t.equal((await ta.inject('DELETE', '/api/v2/eventrules/on-upload', { token })).statusCode, 200);
  t.equal((await ta.inject('DELETE', '/api/v2/eventactions/notify', { token })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/eventrules/on-upload', { token })).statusCode, 404);
});

t.test('provider events for actions and rules', async (t) => {
  const mine = provider
    .filter((p) => p.object_type === 'event_action' || p.object_type === 'event_rule')
    .map((p) => `${p.action} ${p.object_type} ${p.object_name}`);
  t.same(mine, [
    'add event_action notify',
    'update event_action notify',
    'add event_action another',
    'add event_rule on-upload',
    'update event_rule on-upload',
    'delete event_rule on-upload',
    'delete event_action notify',
  ]);
});

t.test('before-publish needs atomic uploads', async (t) => {
  const t2 = await createTestApp({ plugins: [FIXTURE], config: { common: { upload_mode: 0 } } });
  t.teardown(() => t2.close());
  const tk = await t2.adminToken();
  await t2.inject('POST', '/api/v2/eventactions', { token: tk, payload: { name: 'n', type: 101 } });
  const r = await t2.inject('POST', '/api/v2/eventrules', {
    token: tk,
    payload: {
      name: 'r',
      trigger: 1,
      conditions: { fs_events: ['upload'] },
      actions: [{ name: 'n', relation_options: { execute_before_file_publish: true } }],
    },
  });
  t.equal(r.statusCode, 400);
  t.match(msg(r), /requires atomic uploads \(common.upload_mode 1\)/);
});

t.test('permission "*" required', async (t) => {
  await post('/api/v2/admins', { username: 'viewer', password: 'viewer-pass', permissions: ['view_users'] });
  const vt = await ta.adminToken('viewer', 'viewer-pass');
  t.equal((await ta.inject('GET', '/api/v2/eventrules', { token: vt })).statusCode, 403);
  t.equal((await ta.inject('GET', '/api/v2/eventactions', { token: vt })).statusCode, 403);
  t.equal((await ta.inject('POST', '/api/v2/eventrules/run/x', { token: vt })).statusCode, 403);
  t.equal((await ta.inject('GET', '/api/v2/eventrules')).statusCode, 401);
});
