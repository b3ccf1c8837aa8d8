import t from 'tap';
import { createTestApp } from '@ferry/core/testing';

// Which built-in action may run on which trigger: refused at rule save time
// with a 400 rather than skipped at run time. The expected matrix is written
// out here (not derived from the plugin), so a change of the plugin's
// declarations shows up as a failure.
const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/actions-builtin' }] });
t.teardown(() => ta.close());
const token = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload);

const ACTIONS: [string, number, Record<string, unknown>][] = [
  ['backup', 4, {}],
  ['user-quota', 5, {}],
  ['folder-quota', 6, {}],
  ['transfer-quota', 7, {}],
  ['retention', 8, { retention_config: { folders: [{ path: '/', retention: 24 }] } }],
  ['pwd-expiration', 11, { pwd_expiration_config: { threshold: 5 } }],
  ['user-expiration', 12, {}],
  ['inactivity', 14, { user_inactivity_config: { disable_threshold: 30 } }],
  ['rotate-logs', 15, { rotate_logs_config: { keep: 2 } }],
  ['share-expiration', 18, { share_expiration_config: { advance_notice: 3 } }],
  ['event-report', 19, { event_report_config: { hours: 1 } }],
];
const ALL = [1, 2, 3, 4, 5, 6, 7];
const USER = [1, 2, 3, 6, 7];
/** Triggers each type is accepted on (provider rules of the right object type: see PROVIDER_OBJECT). */
const ACCEPTED: Record<number, number[]> = { 4: ALL, 5: USER, 6: [2, 3, 6], 7: USER, 8: USER, 11: USER, 12: USER, 14: [3, 6], 15: ALL, 18: [3, 6], 19: [3, 6] };
/** On provider events, the object the type works on (others: any object, any provider event). */
const PROVIDER_OBJECT: Record<number, string> = { 5: 'user', 6: 'folder', 7: 'user', 8: 'user', 11: 'user', 12: 'user' };

const conditionsFor = (trigger: number, type: number): Record<string, unknown> =>
  ({
    1: { fs_events: ['upload'] },
    2: { provider_events: ['add', 'update'], options: { provider_objects: [PROVIDER_OBJECT[type] ?? 'group'] } },
    3: { schedules: [{ hour: '1', day_of_week: '*', day_of_month: '*', month: '*' }] },
    4: {},
    5: {},
    6: {},
    7: { idp_login_event: 1 },
  })[trigger]!;
let n = 0;
const saveRule = (trigger: number, conditions: Record<string, unknown>, action: string, relation_options: Record<string, boolean> = {}) =>
  ta.inject('POST', '/api/v2/eventrules', { token, payload: { name: `rule-${++n}`, trigger, conditions, actions: [{ name: action, relation_options }] } });

for (const [name, type, options] of ACTIONS) {
  const r = await ta.inject('POST', '/api/v2/eventactions', { token, payload: { name, type, options } });
  if (r.statusCode !== 201) throw new Error(`${name}: ${r.payload}`);
}

t.test('every built-in action on every trigger: accepted where it can run, 400 naming the action elsewhere', async (t) => {
  for (const [name, type] of ACTIONS) {
    for (const trigger of ALL) {
      const r = await saveRule(trigger, conditionsFor(trigger, type), name);
      if (ACCEPTED[type]!.includes(trigger)) {
        t.equal(r.statusCode, 201, `type ${type} on trigger ${trigger}: ${r.payload}`);
      } else {
        t.equal(r.statusCode, 400, `type ${type} on trigger ${trigger} is refused`);
        t.match(json(r), { message: new RegExp(`^action "${name}" \\(type ${type}, [a-z-]+\\) cannot run on trigger ${trigger}$`), error: 'Bad Request' });
      }
    }
  }
});

t.test('provider rules: actions on users or folders need provider_objects limited to that object, never deletes', async (t) => {
  for (const [name, type] of ACTIONS) {
    if (!ACCEPTED[type]!.includes(2)) continue;
    const obj = PROVIDER_OBJECT[type];
    if (!obj) {
      const r = await saveRule(2, { provider_events: ['delete'] }, name);
      t.equal(r.statusCode, 201, `type ${type}: any provider event`);
      continue;
    }
    const other = obj === 'user' ? 'folder' : 'user';
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ provider_events: ['add'] }, new RegExp(`only runs on provider events of ${obj} objects: set conditions.options.provider_objects to ${obj} only`)],
      [{ provider_events: ['add'], options: { provider_objects: [other] } }, /only runs on provider events of/],
      [{ provider_events: ['update'], options: { provider_objects: [obj, 'group'] } }, /only runs on provider events of/],
      [{ provider_events: ['add', 'delete'], options: { provider_objects: [obj] } }, /cannot run on provider "delete" events \(the object no longer exists\)/],
    ];
    for (const [conditions, re] of cases) {
      const r = await saveRule(2, conditions, name);
      t.equal(r.statusCode, 400, `type ${type}: ${JSON.stringify(conditions)}`);
      t.match(json(r).message, re);
    }
    t.equal((await saveRule(2, { provider_events: ['update'], options: { provider_objects: [obj] } }, name)).statusCode, 201, `type ${type} on ${obj} updates`);
  }
});

t.test('changing the type of an action used by rules is checked against those rules', async (t) => {
  await ta.inject('POST', '/api/v2/eventactions', { token, payload: { name: 'changing', type: 7 } });
  t.equal((await saveRule(1, { fs_events: ['upload'] }, 'changing')).statusCode, 201);
  const rule = `rule-${n}`;
  const bad = await ta.inject('PUT', '/api/v2/eventactions/changing', { token, payload: { name: 'changing', type: 6 } });
  t.equal(bad.statusCode, 400);
  t.match(
    json(bad).message,
    new RegExp(`event action "changing" is used by rule "${rule}": action "changing" \\(type 6, folder-quota-reset\\) cannot run on trigger 1`),
  );
  t.equal(json(await ta.inject('GET', '/api/v2/eventactions/changing', { token })).type, 7, 'unchanged');
  t.equal(
    (await ta.inject('PUT', '/api/v2/eventactions/changing', { token, payload: { name: 'changing', type: 5 } })).statusCode,
    200,
    'a compatible type is accepted',
  );
});

t.test('relation options: sync only on filesystem (upload and pre-*) and IDP rules, never with before publish', async (t) => {
  const cases: [number, Record<string, unknown>, Record<string, boolean>, RegExp | null][] = [
    [1, { fs_events: ['upload'] }, { execute_sync: true, stop_on_failure: true }, null],
    [1, { fs_events: ['pre-upload', 'pre-delete'] }, { execute_sync: true }, null],
    [7, { idp_login_event: 0 }, { execute_sync: true }, null],
    [1, { fs_events: ['upload'] }, { execute_before_file_publish: true }, null],
    [
      1,
      { fs_events: ['upload'] },
      { execute_sync: true, execute_before_file_publish: true },
      /execute_sync and execute_before_file_publish are mutually exclusive/,
    ],
    [1, { fs_events: ['download'] }, { execute_sync: true }, /execute_sync is only supported for the fs_events upload, pre-upload, pre-download, pre-delete/],
    [1, { fs_events: ['pre-download'] }, {}, /fs event "pre-download" decides whether the operation goes on: the rule needs at least one execute_sync action/],
    [
      1,
      { fs_events: ['upload', 'mkdir'] },
      { execute_before_file_publish: true },
      /execute_before_file_publish is only supported for rules on the upload filesystem event only/,
    ],
    [3, conditionsFor(3, 15), { execute_sync: true }, /execute_sync is only supported for filesystem events and identity-provider logins/],
    [2, { provider_events: ['add'] }, { execute_before_file_publish: true }, /execute_before_file_publish is only supported/],
  ];
  for (const [trigger, conditions, rel, re] of cases) {
    const r = await saveRule(trigger, conditions, 'rotate-logs', rel);
    const what = `trigger ${trigger} ${JSON.stringify(conditions)} ${JSON.stringify(rel)}`;
    if (!re) t.equal(r.statusCode, 201, `${what}: ${r.payload}`);
    else {
      t.equal(r.statusCode, 400, what);
      t.match(json(r), { message: re, error: 'Bad Request' });
    }
  }
});
