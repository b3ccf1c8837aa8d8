import t from 'tap';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { ProviderEvent } from '../../src/events/event-types.js';
import { EventManager } from '../../src/event-manager/event-manager.js';

// Event actions and rules in dumpdata / loaddata, through HTTP.
const fixture = (app: string) => ({ name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app } });
type Entry = { app: string; rule: string; action: string; options: Record<string, any> };
const LOG = ((globalThis as any).__ferryActionLog ??= []) as Entry[];

interface App extends TestApp {
  token: string;
  events: ProviderEvent[];
}
async function mk(name: string): Promise<App> {
  const ta = await createTestApp({ plugins: [fixture(name)], config: { event_manager: { rules_cache_ttl: 0 } } });
  const events: ProviderEvent[] = [];
  ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('provider', (e) => void events.push(e));
  return Object.assign(ta, { token: await ta.adminToken(), events });
}
const A = await mk('bk-a');
const B = await mk('bk-b');
t.teardown(async () => {
  await A.close();
  await B.close();
});

const json = (r: { payload: string }) => JSON.parse(r.payload);
async function ok(app: App, method: string, url: string, payload?: unknown) {
  const r = await app.inject(method, url, { token: app.token, payload });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.payload}`);
  return r.payload ? json(r) : undefined;
}
const dump = async (app: App, q = '') => {
  const r = await app.inject('GET', `/api/v2/dumpdata?output-data=1${q}`, { token: app.token });
  if (r.statusCode !== 200) throw new Error(`dumpdata: ${r.statusCode} ${r.payload}`);
  return { text: r.payload, data: json(r) };
};
const load = (app: App, data: unknown, q = '') => app.inject('POST', `/api/v2/loaddata${q}`, { token: app.token, payload: data as object });
const SECRET = 'event-token-PLAIN-1';

// a populated instance A
await ok(A, 'POST', '/api/v2/eventactions', {
  name: 'notify',
  description: 'notifies',
  type: 101,
  options: { test_config: { message: 'up {{.VirtualPath}} by {{.Name}}', list: ['{{.Event}}'], token: { status: 'Plain', payload: SECRET } } },
});
await ok(A, 'POST', '/api/v2/eventactions', { name: 'scheduled-only', type: 102 });
await ok(A, 'POST', '/api/v2/eventactions', { name: 'on-error', type: 101, options: { test_config: { message: 'failed: {{.ErrorString}}' } } });
await ok(A, 'POST', '/api/v2/eventrules', {
  name: 'uploads',
  description: 'watch uploads',
  trigger: 1,
  conditions: {
    fs_events: ['upload', 'delete'],
    options: { names: [{ pattern: 'team-*' }], fs_paths: [{ pattern: '/in/**', inverse_match: true }], min_size: 10 },
  },
  actions: [
    { name: 'notify', order: 2, relation_options: { stop_on_failure: true } },
    { name: 'on-error', order: 5, relation_options: { is_failure_action: true } },
  ],
});
await ok(A, 'POST', '/api/v2/eventrules', {
  name: 'nightly',
  status: 0,
  trigger: 3,
  conditions: { schedules: [{ minute: '30', hour: '2', day_of_week: '*', day_of_month: '*', month: '*' }], options: { concurrent_execution: true } },
  actions: [{ name: 'scheduled-only' }],
});
await ok(A, 'POST', '/api/v2/eventrules', {
  name: 'demand',
  trigger: 6,
  actions: [
    { name: 'notify', order: 1 },
    { name: 'scheduled-only', order: 2 },
  ],
});

t.test('dump: event_actions and event_rules, secrets encrypted, scopes actions and rules', async (t) => {
  const { text, data } = await dump(A);
  t.notOk(text.includes(SECRET), 'no plaintext secret in the dump');
  t.same(
    data.event_actions.map((a: { name: string }) => a.name),
    ['notify', 'on-error', 'scheduled-only'],
  );
  const notify = data.event_actions[0];
  t.match(notify, {
    name: 'notify',
    description: 'notifies',
    type: 101,
    options: { test_config: { message: 'up {{.VirtualPath}} by {{.Name}}', token: { status: 'AES-256-GCM', payload: String, key: String } } },
  });
  t.same(Object.keys(notify.options), ['test_config'], 'only the sub-object of the type');
  t.notOk('id' in notify || 'rules' in notify, 'no database ids, no derived fields');
  t.same(
    data.event_rules.map((r: { name: string }) => r.name),
    ['demand', 'nightly', 'uploads'],
  );
  const uploads = data.event_rules[2];
  t.match(uploads, {
    name: 'uploads',
    description: 'watch uploads',
    status: 1,
    trigger: 1,
    conditions: {
      fs_events: ['upload', 'delete'],
      options: { names: [{ pattern: 'team-*', inverse_match: false }], fs_paths: [{ pattern: '/in/**', inverse_match: true }], min_size: 10 },
    },
    created_at: Number,
    updated_at: Number,
  });
  t.same(uploads.actions, [
    {
      name: 'notify',
      order: 2,
      relation_options: { is_failure_action: false, stop_on_failure: true, execute_sync: false, execute_before_file_publish: false },
    },
    {
      name: 'on-error',
      order: 5,
      relation_options: { is_failure_action: true, stop_on_failure: false, execute_sync: false, execute_before_file_publish: false },
    },
  ]);
  t.match(data.event_rules[1], {
    name: 'nightly',
    status: 0,
    trigger: 3,
    conditions: { schedules: [{ minute: '30', hour: '2' }], options: { concurrent_execution: true } },
  });

  const scoped = await dump(A, '&scopes=actions&scopes=rules');
  t.same(Object.keys(scoped.data).sort(), ['event_actions', 'event_rules', 'version']);
  t.same(scoped.data.event_rules, data.event_rules);
  t.same(Object.keys((await dump(A, '&scopes=rules')).data).sort(), ['event_rules', 'version']);
});

t.test('restore into an empty instance: identical dump, secrets still decryptable, rules run', async (t) => {
  const first = await dump(A, '&scopes=actions,rules');
  B.events.length = 0;
  const r = await load(B, first.data);
  t.equal(r.statusCode, 200, r.payload);
  const second = await dump(B, '&scopes=actions,rules');
  t.same(second.data, first.data, 'identical dump');
  t.equal(second.text, first.text, 'byte for byte');
  t.same((await ok(B, 'GET', '/api/v2/eventactions/notify')).rules, ['demand', 'uploads'], 'links restored');
  const kinds = B.events.map((e) => `${e.action} ${e.object_type} ${e.object_name}`);
  t.same(
    kinds,
    [
      'add event_action notify',
      'add event_action on-error',
      'add event_action scheduled-only',
      'add event_rule demand',
      'add event_rule nightly',
      'add event_rule uploads',
    ],
    'actions restored before rules',
  );
  const ev = JSON.stringify(B.events);
  t.notOk(ev.includes(SECRET) || /"payload"/.test(ev), 'no secret in the provider events');

  // the restored rule runs on B with the restored (still encrypted) secret
  const run = await B.inject('POST', '/api/v2/eventrules/run/demand', { token: B.token });
  t.equal(run.statusCode, 202, run.payload);
  await B.app.container.resolve(EventManager).idle();
  const ran = LOG.filter((e) => e.app === 'bk-b' && e.rule === 'demand');
  t.same(
    ran.map((e) => e.action),
    ['notify', 'scheduled-only'],
  );
  t.equal(ran[0]!.options.token, SECRET, 'the restored secret decrypts');
});

t.test('dump, wipe, restore from a file of the backups directory', async (t) => {
  const before = await dump(A, '&scopes=actions,rules');
  const w = await A.inject('GET', '/api/v2/dumpdata?output-file=events.json&scopes=actions,rules', { token: A.token });
  t.equal(w.statusCode, 200, w.payload);
  const backupsDir = A.config.common.backups_dir || path.join(A.dataDir, 'backups');
  t.ok(existsSync(path.join(backupsDir, 'events.json')));
  for (const r of ['demand', 'nightly', 'uploads']) await ok(A, 'DELETE', `/api/v2/eventrules/${r}`);
  for (const a of ['notify', 'on-error', 'scheduled-only']) await ok(A, 'DELETE', `/api/v2/eventactions/${a}`);
  t.same(await ok(A, 'GET', '/api/v2/eventrules'), [], 'wiped');
  t.same(await ok(A, 'GET', '/api/v2/eventactions'), []);
  const r = await A.inject('GET', '/api/v2/loaddata?input-file=events.json', { token: A.token });
  t.equal(r.statusCode, 200, r.payload);
  t.same((await dump(A, '&scopes=actions,rules')).data, before.data, 'everything back as dumped');
  const rule = await ok(A, 'GET', '/api/v2/eventrules/uploads');
  t.same(
    rule.actions.map((a: { name: string; order: number }) => `${a.name}:${a.order}`),
    ['notify:2', 'on-error:5'],
  );
  t.same(rule.actions[0].options.test_config.token, { status: 'AES-256-GCM' }, 'read redacts the restored secret');
});

t.test('modes: 0 replaces, 1 keeps existing actions and rules, new ones are added either way', async (t) => {
  const { data } = await dump(A, '&scopes=actions,rules');
  const changed = {
    event_actions: data.event_actions.map((a: Record<string, unknown>) => (a.name === 'on-error' ? { ...a, description: 'changed' } : a)),
    event_rules: [
      ...data.event_rules.map((r: Record<string, unknown>) =>
        r.name === 'demand' ? { ...r, description: 'changed', actions: [{ name: 'on-error', order: 1 }] } : r,
      ),
      { name: 'fresh', trigger: 6, actions: [{ name: 'on-error' }] },
    ],
  };
  t.equal((await load(B, changed, '?mode=1')).statusCode, 200);
  t.equal((await ok(B, 'GET', '/api/v2/eventactions/on-error')).description, '', 'mode 1 keeps the action');
  const kept = await ok(B, 'GET', '/api/v2/eventrules/demand');
  t.equal(kept.description, '');
  t.same(
    kept.actions.map((a: { name: string }) => a.name),
    ['notify', 'scheduled-only'],
    'and the rule with its actions',
  );
  t.same(
    (await ok(B, 'GET', '/api/v2/eventrules/fresh')).actions.map((a: { name: string }) => a.name),
    ['on-error'],
    'new rules are added',
  );

  t.equal((await load(B, changed, '?mode=0')).statusCode, 200);
  t.equal((await ok(B, 'GET', '/api/v2/eventactions/on-error')).description, 'changed', 'mode 0 replaces');
  const replaced = await ok(B, 'GET', '/api/v2/eventrules/demand');
  t.equal(replaced.description, 'changed');
  t.same(
    replaced.actions.map((a: { name: string }) => a.name),
    ['on-error'],
    'links replaced',
  );
  t.same((await ok(B, 'GET', '/api/v2/eventactions/notify')).rules, ['uploads']);
  t.equal((await load(B, { event_rules: [{ ...replaced, description: 'mode 2' }] }, '?mode=2')).statusCode, 200, 'the read shape of a rule restores too');
  t.equal((await ok(B, 'GET', '/api/v2/eventrules/demand')).description, 'mode 2');
});

t.test('a restore is validated whole: API rules, references resolved over the backup, nothing written on failure', async (t) => {
  const before = await dump(B, '&scopes=actions,rules');
  const act = (name: string, extra: Record<string, unknown> = {}) => ({ name, type: 101, options: { test_config: { message: 'm' } }, ...extra });
  const rule = (name: string, extra: Record<string, unknown> = {}) => ({ name, trigger: 6, actions: [{ name: 'notify' }], ...extra });
  const cases: [unknown, RegExp][] = [
    [{ event_actions: [act('a1', { type: 77 })] }, /event_actions\[0\] "a1": event action type 77 is not available/],
    [{ event_actions: [act('a2', { type: 10 })] }, /event_actions\[0\] "a2": event action type 10 is reserved/],
    [
      { event_actions: [act('a3', { options: { test_config: { delay: -1 } } })] },
      /event_actions\[0\] "a3": options\.test_config: "delay" must be greater than or equal to 0/,
    ],
    [
      { event_actions: [act('a4', { options: { test_config: { message: '{{.Name' } } })] },
      /event_actions\[0\] "a4": options\.test_config\.message: invalid template/,
    ],
    [{ event_actions: [act('bad/name')] }, /event_actions\[0\] "bad\/name": "name"/],
    [{ event_actions: [act('dup'), act('dup')] }, /event_actions\[1\]: "dup" appears more than once/],
    [{ event_rules: [rule('r1', { actions: [{ name: 'ghost' }] })] }, /event_rules\[0\] "r1": actions\[0\]: event action "ghost" does not exist/],
    [
      { event_rules: [rule('r2', { trigger: 1, conditions: { fs_events: ['upload'] }, actions: [{ name: 'scheduled-only' }] })] },
      /event_rules\[0\] "r2": action "scheduled-only" \(type 102, test-scheduled-only\) cannot run on trigger 1/,
    ],
    [
      { event_rules: [rule('r3', { trigger: 3, conditions: { schedules: [{ hour: '25', day_of_week: '*', day_of_month: '*', month: '*' }] } })] },
      /event_rules\[0\] "r3": conditions\.schedules\[0\]: hour: 25 is out of range/,
    ],
    [{ event_rules: [rule('r4', { actions: [] })] }, /event_rules\[0\] "r4": a rule needs at least one action/],
    [{ event_rules: [rule('r5', { trigger: 9 })] }, /event_rules\[0\] "r5": "trigger" must be one of/],
    // the backup's own action of an incompatible type
    [
      { event_actions: [{ name: 'sched2', type: 102 }], event_rules: [rule('r6', { trigger: 4, actions: [{ name: 'sched2' }] })] },
      /event_rules\[0\] "r6": action "sched2" \(type 102, test-scheduled-only\) cannot run on trigger 4/,
    ],
    // a type change that no longer suits a stored rule using the action
    [
      { event_actions: [{ name: 'notify', type: 102 }] },
      /event_actions\[0\] "notify": event action "notify" is used by rule "uploads": action "notify" \(type 102, test-scheduled-only\) cannot run on trigger 1/,
    ],
    [{ event_rules: {} }, /"event_rules" must be an array/],
  ];
  for (const [data, re] of cases) {
    const r = await load(B, data);
    t.equal(r.statusCode, 400, JSON.stringify(data).slice(0, 120));
    t.match(json(r), { message: re, error: 'Bad Request' });
  }
  // a valid action next to an invalid rule: nothing of the backup is written
  t.equal(
    (await load(B, { event_actions: [act('would-be')], event_rules: [rule('r7', { actions: [{ name: 'would-be' }, { name: 'ghost' }] })] })).statusCode,
    400,
  );
  t.same((await dump(B, '&scopes=actions,rules')).data, before.data, 'nothing written');

  // references resolve over the backup, whatever the order of the sections in the body
  const good = await load(B, {
    event_rules: [rule('r8', { actions: [{ name: 'new-act', order: 1 }] })],
    event_actions: [act('new-act')],
    version: 1,
  });
  t.equal(good.statusCode, 200, good.payload);
  t.same(
    (await ok(B, 'GET', '/api/v2/eventrules/r8')).actions.map((a: { name: string }) => a.name),
    ['new-act'],
  );
  // a type change checked against the backup's version of the rule using the action, not the stored one
  const swap = await load(B, {
    event_actions: [{ name: 'new-act', type: 102 }],
    event_rules: [
      rule('r8', { trigger: 3, conditions: { schedules: [{ hour: '*', day_of_week: '*', day_of_month: '*', month: '*' }] }, actions: [{ name: 'new-act' }] }),
    ],
  });
  t.equal(swap.statusCode, 200, swap.payload);
  t.match(await ok(B, 'GET', '/api/v2/eventrules/r8'), { trigger: 3, actions: [{ name: 'new-act', type: 102 }] });
});
