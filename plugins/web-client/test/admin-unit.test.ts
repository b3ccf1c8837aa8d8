/** The web admin's logic without a browser: its routes (app/src/admin/routes.ts), the field an API message names (field-message.ts), the event manager's forms and template preview (event-model.ts). */
/**
 * The web admin's logic without a browser: its routes (app/src/admin/routes.ts), the field an API message names (field-message.ts),
 * event times (event-time.ts) and the dashboard charts' buckets and series (charts-data.ts).
 */
import t from 'tap';
import { adminRoutePath, pageOfRoute, parseAdminRoute, type AdminRoute } from '../app/src/admin/routes.js';
import { fieldOfMessage, names } from '../app/src/admin/field-message.js';
import { dateOfNanos, nanosOfLocal } from '../app/src/admin/event-time.js';
import {
  actionFieldsOf,
  actionInputOf,
  emptyRule,
  initialValues,
  moved,
  newRuleAction,
  previewTemplate,
  ruleFieldsOf,
  ruleInputOf,
  sampleEventData,
  templateTexts,
} from '../app/src/admin/event-model.js';
import {
  bucketLabel,
  bucketTimes,
  bucketsOf,
  chartData,
  hourGridOf,
  sliceHours,
  topUsersOf,
  peak,
  perBucket,
  rebucket,
  type FsCount,
  type LogCount,
} from '../app/src/admin/charts-data.js';
import {
  certificatesOf,
  filterFieldsOf,
  filtersInputOf,
  groupSettingsOf,
  itemsOf,
  newFolderRow,
  userSettingsOf,
  withGroupSettings,
  withUserSettings,
} from '../app/src/admin/account-settings-model.js';
import type { GroupInput, GroupRow, UserInput, UserRow } from '../app/src/admin/account-types.js';

t.test('routes: each page has its URL, and the URL gives the page back', async (t) => {
  const routes: [AdminRoute, string][] = [
    [{ kind: 'dashboard' }, '/web/admin/'],
    [{ kind: 'users' }, '/web/admin/users'],
    [{ kind: 'user', username: null }, '/web/admin/new-user'],
    [{ kind: 'user', username: 'a b' }, '/web/admin/users/a%20b'],
    [{ kind: 'user', username: null, cloneOf: 'a b&c' }, '/web/admin/new-user?clone=a%20b%26c'],
    [{ kind: 'events', username: 'a b&c' }, '/web/admin/events?username=a%20b%26c'],
    [{ kind: 'groups' }, '/web/admin/groups'],
    [{ kind: 'group', name: null }, '/web/admin/new-group'],
    [{ kind: 'group', name: 'équipe 1' }, '/web/admin/groups/%C3%A9quipe%201'],
  ];
  for (const [route, url] of routes) {
    t.equal(adminRoutePath(route), url);
    t.same(parseAdminRoute(url), route, url);
  }
  t.same(parseAdminRoute('/web/admin/nope'), { kind: 'dashboard' }, 'an unknown URL: the dashboard');
  t.same(parseAdminRoute('/web/admin/groups/%E0'), { kind: 'dashboard' }, 'a malformed URL: the dashboard');
  t.equal(pageOfRoute({ kind: 'group', name: 'x' }), 'groups', "a group's form is on the groups page");
  t.equal(pageOfRoute({ kind: 'user', username: null }), 'users');
});

t.test('routes of the virtual folders, admins and roles', async (t) => {
  const routes: [AdminRoute, string][] = [
    [{ kind: 'folders' }, '/web/admin/folders'],
    [{ kind: 'folder', name: null }, '/web/admin/new-folder'],
    [{ kind: 'folder', name: 'in box' }, '/web/admin/folders/in%20box'],
    [{ kind: 'admins' }, '/web/admin/admins'],
    [{ kind: 'admin', name: null }, '/web/admin/new-admin'],
    [{ kind: 'admin', name: 'ops' }, '/web/admin/admins/ops'],
    [{ kind: 'roles' }, '/web/admin/roles'],
    [{ kind: 'role', name: null }, '/web/admin/new-role'],
    [{ kind: 'role', name: 'équipe' }, '/web/admin/roles/%C3%A9quipe'],
  ];
  for (const [route, url] of routes) {
    t.equal(adminRoutePath(route), url);
    t.same(parseAdminRoute(url), route, url);
  }
  t.equal(pageOfRoute({ kind: 'folder', name: 'x' }), 'folders');
  t.equal(pageOfRoute({ kind: 'admin', name: null }), 'admins');
  t.equal(pageOfRoute({ kind: 'role', name: 'r' }), 'roles');
  t.same(parseAdminRoute('/web/admin/folders/a/b'), { kind: 'dashboard' }, 'a name has no slash');
});

t.test('routes of the security, event search and maintenance pages', async (t) => {
  for (const kind of ['security', 'events', 'maintenance'] as const) {
    t.equal(adminRoutePath({ kind }), `/web/admin/${kind}`);
    t.same(parseAdminRoute(`/web/admin/${kind}`), { kind });
    t.equal(pageOfRoute({ kind }), kind);
  }
  t.same(parseAdminRoute('/web/admin/security/x'), { kind: 'dashboard' }, 'no sub-route');
});

t.test("the field of an API's validation message", async (t) => {
  t.equal(fieldOfMessage('"email" must be a valid email'), 'email');
  t.equal(fieldOfMessage('"user_settings.home_dir" must be an absolute path'), 'user_settings.home_dir');
  t.equal(fieldOfMessage('a group cannot be renamed'), null, 'a message naming no field');
  t.notOk(names('group "staff" is still referenced by user "erin"', 'name'), 'a quoted value names no field of the form');
  t.ok(names('"user_settings.home_dir" must be an absolute path', 'user_settings.home_dir'));
  t.notOk(names('"user_settings.home_dir" must be an absolute path', 'home_dir'), "a group's home_dir is not a user's");
  t.ok(names('"groups[0].name" is not allowed to be empty', 'groups'), 'inside the groups list');
  t.ok(names('"permissions./in[0]" must be one of [list, download]', 'permissions'), 'inside the permissions map');
  t.notOk(names('"permissions_x" is not allowed', 'permissions'), 'another field with the same start');
  t.notOk(names('', 'email'), 'no message');
});

t.test('event times: nanoseconds of the API, local times of the browser', async (t) => {
  t.equal(dateOfNanos(1_700_000_000_123_456_789).getTime(), 1_700_000_000_123, 'to the millisecond');
  t.equal(nanosOfLocal(''), 0, 'an empty bound: none');
  const local = '2026-03-01T10:20:30';
  t.equal(nanosOfLocal(local), new Date(local).getTime() * 1e6, 'a local time as nanoseconds');
  t.equal(dateOfNanos(nanosOfLocal(local)).getTime(), new Date(local).getTime(), 'and back');
});

t.test('event manager: the sample events and the template preview (Go-template in the browser bundle)', async (t) => {
  t.same(previewTemplate('{{.Name}} {{.Event}} {{.VirtualPath}} {{.FileSize}} {{.Initiator.User.Username}}', 1), {
    text: 'alice upload /in/report.csv 1048576 alice',
  });
  t.same(previewTemplate('{{.Name}} {{.Event}} {{.Object.User.email}}', 2), { text: 'bob add bob@example.com' });
  t.same(previewTemplate('{{.Name}} {{.Event}}', 6, 'nightly'), { text: 'nightly On-Demand' });
  t.same(previewTemplate('{{.IP}} {{.Event}}', 4), { text: '198.51.100.7 IP Blocked' });
  t.same(previewTemplate('{{.IDPFields.department}} {{.Protocol}}', 7), { text: 'sales OIDC' });
  t.same(previewTemplate('{{toBase64 "héllo"}} {{toJson .VirtualPath}}', 1), { text: `${Buffer.from('héllo').toString('base64')} "/in/report.csv"` });
  t.same(previewTemplate('{{fromNanos .Timestamp}}', 1), { text: '2026-01-01 00:00:00 +0000 UTC' }, 'the sample time');
  t.same(previewTemplate('{{.Name}', 1), { error: "template: preview:1: bad character U+007D '}'" }, "Go's parse error");
  t.same(
    previewTemplate('{{.Initiator.User.Username}}', 6),
    { error: 'template: preview:1:12: executing "preview" at <.Initiator.User.Username>: nil pointer evaluating interface {}.Username' },
    "Go's execution error",
  );
  for (const trigger of [1, 2, 3, 4, 5, 6, 7]) t.equal(sampleEventData(trigger).Trigger, trigger);
});

t.test('event manager: an action form to the API and back (options of the type only, secrets set/unset/new, lists)', async (t) => {
  const read = {
    name: 'notify',
    description: 'd',
    type: 1,
    options: {
      http_config: {
        endpoint: 'https://x.example/{{.Name}}',
        method: 'PUT',
        timeout: 30,
        headers: [{ key: 'A', value: 'b=c' }],
        query_parameters: [],
        body: '{{toJson .}}',
        parts: [],
        password: { status: 'AES-256-GCM' },
        skip_tls_verify: true,
      },
    },
  };
  const f = actionFieldsOf(read);
  t.equal(f.values.headers, 'A=b=c', 'a key=value line splits at the first =');
  t.same(f.values.password, { stored: { status: 'AES-256-GCM' }, value: '', clear: false }, 'the secret: set, no value');
  t.same(actionInputOf(f), {
    name: 'notify',
    description: 'd',
    type: 1,
    options: {
      http_config: {
        endpoint: 'https://x.example/{{.Name}}',
        method: 'PUT',
        timeout: 30,
        password: { status: 'AES-256-GCM' },
        skip_tls_verify: true,
        headers: [{ key: 'A', value: 'b=c' }],
        query_parameters: [],
        body: '{{toJson .}}',
        parts: [],
      },
    },
  });
  t.same(
    (
      actionInputOf({ ...f, values: { ...f.values, password: { stored: { status: 'AES-256-GCM' }, value: 'new', clear: false } } }).options
        .http_config as Record<string, unknown>
    ).password,
    { status: 'Plain', payload: 'new' },
    'a new value: sent in plain to be encrypted',
  );
  t.notOk(
    'password' in
      (actionInputOf({ ...f, values: { ...f.values, password: { stored: { status: 'x' }, value: '', clear: true } } }).options.http_config as object),
    'cleared: not sent',
  );
  const parts = { key: 'parts', kind: 'json' as const, template: true };
  t.same(
    templateTexts(parts, '[{"name": "a", "body": "{{.Name}}", "headers": [{"key": "k", "value": "v {{.IP}}"}]}]'),
    ['{{.Name}}', 'v {{.IP}}'],
    'the templates inside a JSON option',
  );
  t.same(templateTexts(parts, '[{'), [], 'JSON not (yet) valid: nothing to preview');
  t.same(templateTexts({ key: 'headers', kind: 'kv', template: true }, 'A=b=c\n\nX={{.Name}}'), ['b=c', '{{.Name}}']);
  t.throws(() => actionInputOf({ ...f, values: { ...f.values, parts: '[' } }), {
    name: 'FormValueError',
    message: 'options.http_config: "parts" must be valid JSON',
  });

  const fs = actionInputOf({ name: 'mk', description: '', type: 9, values: { ...initialValues(9, 3), mkdirs: '/a\n\n /b ' } });
  t.same(fs.options, { fs_config: { type: 3, mkdirs: ['/a', '/b'] } }, "a filesystem action: its sub-type's member only");
  const compress = actionFieldsOf({ name: 'c', type: 9, options: { fs_config: { type: 5, compress: { name: '/z.zip', paths: ['/a', '/b'] } } } });
  t.same(actionInputOf(compress).options, { fs_config: { type: 5, compress: { name: '/z.zip', paths: ['/a', '/b'] } } });
  t.same(actionInputOf({ name: 'b', description: '', type: 4, values: {} }).options, {}, 'no options sub-object');
  t.same(actionInputOf({ name: 'r', description: '', type: 19, values: initialValues(19) }).options, {
    event_report_config: { hours: 24, event_types: ['fs', 'provider', 'log'], compress: false },
  });
});

t.test('event manager: a rule form to the API and back (the conditions of the trigger only, the actions in order)', async (t) => {
  const read = {
    name: 'r',
    status: 1,
    trigger: 1,
    conditions: {
      fs_events: ['upload', 'download'],
      options: { names: [{ pattern: 'a*' }, { pattern: 'bob', inverse_match: true }], protocols: ['SFTP'], min_size: 10, max_size: 0 },
    },
    actions: [
      { name: 'second', order: 2, relation_options: { execute_sync: true } },
      { name: 'first', order: 1, relation_options: { stop_on_failure: true } },
    ],
  };
  const f = ruleFieldsOf(read);
  t.equal(f.names, 'a*\n!bob', 'patterns: one a line, ! for an inverse match');
  t.same(
    f.actions.map((a) => a.name),
    ['first', 'second'],
    'sorted by order',
  );
  const input = ruleInputOf(f);
  t.same(input.conditions.options.names, [
    { pattern: 'a*', inverse_match: false },
    { pattern: 'bob', inverse_match: true },
  ]);
  t.equal(input.conditions.options.min_size, 10);
  t.same(
    input.actions.map((a) => [a.name, a.order, a.relation_options.stop_on_failure, a.relation_options.execute_sync]),
    [
      ['first', 1, true, false],
      ['second', 2, false, true],
    ],
  );
  const schedule = ruleInputOf({ ...f, trigger: 3, schedules: [{ minute: '5', hour: '2', day_of_week: '*', day_of_month: '*', month: '*' }] });
  t.same(schedule.conditions.fs_events, [], 'a schedule rule: no filesystem condition sent');
  t.same(schedule.conditions.options.protocols, []);
  t.equal(schedule.conditions.schedules.length, 1);
  t.equal(ruleInputOf({ ...emptyRule(), name: ' x ', enabled: false }).status, 0);
  t.same(moved([1, 2, 3], 2, 0), [3, 1, 2]);
  t.same(moved([1, 2, 3], 0, -1), [1, 2, 3], 'moving past an end: unchanged');
  t.equal(newRuleAction('a').execute_sync, false);
});

t.test('event manager: routes of the actions and rules; the option a template error names', async (t) => {
  const routes: [AdminRoute, string][] = [
    [{ kind: 'event-actions' }, '/web/admin/event-actions'],
    [{ kind: 'event-action', name: null }, '/web/admin/new-event-action'],
    [{ kind: 'event-action', name: 'a b' }, '/web/admin/event-actions/a%20b'],
    [{ kind: 'event-rules' }, '/web/admin/event-rules'],
    [{ kind: 'event-rule', name: null }, '/web/admin/new-event-rule'],
    [{ kind: 'event-rule', name: 'r' }, '/web/admin/event-rules/r'],
  ];
  for (const [route, url] of routes) {
    t.equal(adminRoutePath(route), url);
    t.same(parseAdminRoute(url), route, url);
  }
  t.equal(pageOfRoute({ kind: 'event-rule', name: 'r' }), 'event-rules');
  t.equal(fieldOfMessage('options.http_config.body: invalid template: template: http_config.body:1: unexpected "}" in operand'), 'body');
  t.equal(fieldOfMessage('options.fs_config.compress.name: invalid template: x'), 'compress.name');
  t.equal(fieldOfMessage('options.http_config: "timeout" must be less than or equal to 180'), 'timeout');
  t.ok(names('options.http_config.headers[0].value: invalid template: x', 'headers'));
});

t.test("event manager: the sample event has the server's template data shape (core's buildParams)", async (t) => {
  const { buildParams } = await import('@ferry/core/testing');
  for (const trigger of [3, 6]) {
    const rule = { id: 1, name: 'r', trigger, conditions: {} as never, actions: [] };
    const server = buildParams({ trigger, timestamp: 1, initiator: { admin: { username: 'a', role: '' } } }, rule, { uid: 'u', outputs: {}, errors: [] });
    const sample = sampleEventData(trigger, 'r');
    t.same(Object.keys(sample).sort(), Object.keys(server).sort(), `trigger ${trigger}: the same fields`);
    t.same(Object.keys(sample.Object as object).sort(), Object.keys(server.Object as object).sort());
    t.same(Object.keys(sample.Initiator as object).sort(), Object.keys(server.Initiator as object).sort());
    t.equal(sample.Name, server.Name);
    t.equal(sample.Event, server.Event);
  }
});

t.test('charts: the buckets of a range end with the current hour and day, in local time', async (t) => {
  const now = new Date(2026, 2, 10, 14, 37, 12).getTime();
  const { hourly, daily } = bucketsOf('24h', now);
  t.equal(hourly.count, 24);
  t.equal(hourly.interval, 3600);
  t.equal(new Date((hourly.start + 23 * 3600) * 1000).getTime(), new Date(2026, 2, 10, 14).getTime(), 'the last bucket is the current hour');
  t.equal(daily.count, 2);
  t.equal(daily.start * 1000, new Date(2026, 2, 9).getTime(), 'yesterday and today');
  t.equal(bucketsOf('7d', now).hourly.count, 168);
  t.equal(bucketsOf('30d', now).daily.count, 30);
  t.same(bucketTimes({ start: 100, interval: 10, count: 3 }), [100, 110, 120]);
});

t.test('charts: a day of a daylight saving change keeps its own hours (Europe/Berlin, 29 March 2026 has 23)', async (t) => {
  const tz = process.env.TZ;
  process.env.TZ = 'Europe/Berlin';
  t.teardown(() => {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  });
  const now = new Date(2026, 2, 30, 12, 0, 0).getTime();
  const { daily, dailyHours } = bucketsOf('7d', now);
  const days = bucketTimes(daily).map((s) => new Date(s * 1000));
  t.same(
    days.map((d) => [d.getDate(), d.getHours()]),
    [24, 25, 26, 27, 28, 29, 30].map((n) => [n, 0]),
    'each day starts at local midnight',
  );
  t.equal((daily.times![6]! - daily.times![5]!) / 3600, 23, 'the 29th is 23 hours long');
  t.equal(dailyHours.start, daily.start);
  t.equal(dailyHours.interval, 3600);
  t.equal(dailyHours.count, 7 * 24 - 1, 'the hours counted run to the end of today');
  // an upload at 23:30 on the 29th and one at 00:30 on the 30th, counted per hour then per day
  const hourOf = (d: Date) => (d.getTime() / 1000 - dailyHours.start) / 3600;
  const rows: FsCount[] = [
    { bucket: Math.floor(hourOf(new Date(2026, 2, 29, 23, 30))), action: 'upload', status: 1, count: 1, file_size: 10 },
    { bucket: Math.floor(hourOf(new Date(2026, 2, 30, 0, 30))), action: 'upload', status: 1, count: 1, file_size: 200 },
    { bucket: Math.floor(hourOf(new Date(2026, 2, 24, 0, 10))), action: 'download', status: 1, count: 1, file_size: 3 },
  ];
  const d = chartData({ start: 0, interval: 3600, count: 1 }, daily, [], rebucket(dailyHours, daily, rows), []);
  t.same(d.uploadBytes, [0, 0, 0, 0, 0, 10, 200], 'each upload on its own day');
  t.same(d.downloadBytes, [3, 0, 0, 0, 0, 0, 0]);
  t.match(bucketLabel(daily, 5, 'en-GB'), /29 Mar 2026/, 'the label of a day is its own date');
});

t.test('charts: one hourly count serves the hourly chart and the daily one (one grid of hours)', async (t) => {
  for (const range of ['24h', '7d', '30d'] as const) {
    const now = new Date(2026, 11, 4, 15, 20).getTime();
    const { hourly, dailyHours } = bucketsOf(range, now);
    const grid = hourGridOf(hourly, dailyHours)!;
    t.ok(grid, range);
    t.equal(grid.start, Math.min(hourly.start, dailyHours.start), `${range}: from the earlier start`);
    t.equal(
      grid.start + grid.count * 3600,
      Math.max(hourly.start + hourly.count * 3600, dailyHours.start + dailyHours.count * 3600),
      `${range}: to the later end`,
    );
    t.ok(grid.count <= 1000, `${range}: within the API's 1000 buckets (${grid.count})`);
  }
  t.equal(hourGridOf({ start: 0, interval: 3600, count: 2 }, { start: 1800, interval: 3600, count: 2 }), null, 'half an hour apart: two requests');
  t.equal(hourGridOf({ start: 0, interval: 3600, count: 2 }, { start: 0, interval: 86400, count: 2 }), null, 'not hourly');
  // hours 0..5 counted; the hourly chart covers hours 2..4, the days hours 0..3
  const grid = { start: 0, interval: 3600, count: 6 };
  const rows: FsCount[] = [0, 1, 2, 3, 4, 5].map((h) => ({ bucket: h, action: 'upload', status: 1, count: h + 1, file_size: 10 * h }));
  t.same(
    sliceHours(grid, { start: 2 * 3600, interval: 3600, count: 3 }, rows).map((r) => [r.bucket, r.count]),
    [
      [0, 3],
      [1, 4],
      [2, 5],
    ],
    'the rows of the hours asked, renumbered; those before and after left out',
  );
  t.same(
    sliceHours(grid, { start: 0, interval: 3600, count: 4 }, rows).map((r) => r.bucket),
    [0, 1, 2, 3],
  );
});

t.test('charts: the aggregates spread into one value per bucket', async (t) => {
  const b = { start: 0, interval: 3600, count: 3 };
  const fs: FsCount[] = [
    { bucket: 0, action: 'upload', status: 1, count: 2, file_size: 30 },
    { bucket: 0, action: 'upload', status: 2, count: 1, file_size: 5 },
    { bucket: 2, action: 'download', status: 1, count: 4, file_size: 400 },
    { bucket: 7, action: 'upload', status: 1, count: 9, file_size: 9 }, // outside: ignored
  ];
  const logs: LogCount[] = [
    { bucket: 1, event: 1, count: 3 },
    { bucket: 1, event: 2, count: 1 },
    { bucket: 1, event: 5, count: 8 },
  ];
  const daily: FsCount[] = [
    { bucket: 0, action: 'upload', status: 1, count: 3, file_size: 35 },
    { bucket: 0, action: 'download', status: 2, count: 4, file_size: 400 },
    { bucket: 0, action: 'delete', status: 1, count: 1, file_size: 0 },
  ];
  const d = chartData(b, { start: 0, interval: 86400, count: 1 }, fs, daily, logs);
  t.same(d.uploads, [3, 0, 0], 'uploads of every outcome');
  t.same(d.downloads, [0, 0, 4]);
  t.same(d.uploadBytes, [35]);
  t.same(d.downloadBytes, [400]);
  t.same(d.failedLogins, [0, 4, 0], 'events 1 and 2, not the successful logins');
  t.same(
    perBucket(
      b,
      fs,
      () => false,
      () => 1,
    ),
    [0, 0, 0],
  );
  t.equal(peak([0, 3, 5, 5]), 2, 'the first largest');
  t.equal(peak([0, 0]), -1, 'none');
});

t.test('charts: the top users of a page ordered by used quota size: those using no storage left out', async (t) => {
  t.same(
    topUsersOf([
      { username: 'b', used_quota_size: 50, quota_size: 100 },
      { username: 'c', used_quota_size: 7 },
      { username: 'a', used_quota_size: 0, quota_size: 5 },
      { username: 'd' },
    ]),
    [
      { username: 'b', used: 50, quota: 100 },
      { username: 'c', used: 7, quota: 0 },
    ],
  );
  t.same(topUsersOf([]), []);
});

t.test('account settings: a user read into the forms and written back unchanged, what the form does not show kept', async (t) => {
  const user = {
    id: 7,
    username: 'pat',
    status: 1,
    permissions: { '/': ['*'] },
    quota_size: 1000,
    quota_files: 10,
    max_sessions: 2,
    upload_bandwidth: 100,
    download_data_transfer: 50,
    additional_info: 'kept',
    custom_placeholders: ['x'],
    virtual_folders: [{ name: 'shared', virtual_path: '/shared', quota_size: -1, quota_files: -1, mapped_path: '/srv/shared', id: 3 }],
    filters: {
      allowed_ip: ['10.0.0.0/8', '192.168.1.1'],
      denied_protocols: ['FTP'],
      file_patterns: [{ path: '/in', allowed_patterns: ['*.csv'], denied_patterns: ['*.exe', '*.bat'], deny_policy: 1 }],
      bandwidth_limits: [{ sources: ['10.0.0.0/8'], upload_bandwidth: 5, download_bandwidth: 0 }],
      hooks: { pre_login_disabled: true },
      allow_api_key_auth: false,
      access_time: [{ day_of_week: 1, from: '08:00', to: '18:00' }],
      totp_config: { enabled: true, config_name: 'Default' },
      default_shares_policies: [{ path: '/', permissions: ['read'] }],
      tls_certs: ['-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----'],
      future_filter: { a: 1 },
    },
  } as unknown as UserRow;
  const s = userSettingsOf(user);
  t.equal(s.filters.allowed_ip, '10.0.0.0/8\n192.168.1.1', 'an IP list is a line per entry');
  t.same(s.filters.file_patterns[0], { path: '/in', allowed: '*.csv', denied: '*.exe, *.bat', deny_policy: 1, kept: {} });
  t.same(s.limits, {
    quota_size: '1000',
    quota_files: '10',
    max_sessions: '2',
    upload_bandwidth: '100',
    download_bandwidth: '0',
    upload_data_transfer: '0',
    download_data_transfer: '50',
    total_data_transfer: '0',
  });
  t.same(s.folders[0], { name: 'shared', virtual_path: '/shared', quota_size: '-1', quota_files: '-1', kept: { mapped_path: '/srv/shared', id: 3 } });
  const back = withUserSettings({ ...(user as unknown as UserInput) }, s, user) as Record<string, any>;
  t.same(back.filters, user.filters, 'the filters written back are those read: unshown members (2FA, share policies, certificates, unknown) kept');
  t.same(back.virtual_folders, user.virtual_folders);
  t.equal(back.additional_info, 'kept');
  t.same(back.custom_placeholders, ['x']);
  t.equal(back.download_data_transfer, 50);
  t.equal(back.total_data_transfer, 0);
});

t.test('account settings: edits reach the object; a filter the object lacked is added only when set', async (t) => {
  const s = userSettingsOf(null);
  t.same(
    withUserSettings({ username: 'new' } as UserInput, s, null).filters,
    {},
    'an untouched new user sends no filter (a false flag would stop the primary group)',
  );
  s.filters.allowed_ip = ' 10.0.0.0/8 ,\n\n192.168.0.1 ';
  s.filters.denied_protocols = ['DAV', 'HTTP'];
  s.filters.flags.require_password_change = true;
  s.filters.hooks.check_password_disabled = true;
  s.filters.numbers.password_strength = '60';
  s.filters.additional_emails = 'a@example.com\nb@example.com';
  s.filters.file_patterns = [
    { path: ' /up ', allowed: '', denied: '*.exe,  *.sh', deny_policy: 0 },
    { path: '', allowed: '', denied: '', deny_policy: 0 },
  ];
  s.filters.bandwidth_limits = [{ sources: '127.0.0.1, 10.1.0.0/16', upload: '64', download: '' }];
  s.limits.max_sessions = '3';
  s.limits.quota_size = '';
  s.folders = [{ name: ' shared ', virtual_path: '/s', quota_size: '', quota_files: '' }, newFolderRow()];
  const input = withUserSettings({ username: 'new' } as UserInput, s, null) as Record<string, any>;
  t.same(input.filters, {
    allowed_ip: ['10.0.0.0/8', '192.168.0.1'],
    denied_protocols: ['DAV', 'HTTP'],
    file_patterns: [{ path: '/up', allowed_patterns: [], denied_patterns: ['*.exe', '*.sh'], deny_policy: 0 }],
    bandwidth_limits: [{ sources: ['127.0.0.1', '10.1.0.0/16'], upload_bandwidth: 64, download_bandwidth: 0 }],
    password_strength: 60,
    require_password_change: true,
    hooks: { check_password_disabled: true },
    additional_emails: ['a@example.com', 'b@example.com'],
  });
  t.equal(input.max_sessions, 3);
  t.equal(input.quota_size, 0, 'an empty limit is 0');
  t.same(input.virtual_folders, [{ name: 'shared', virtual_path: '/s', quota_size: -1, quota_files: -1 }], 'empty rows left out, an empty folder quota is -1');

  // a flag the object held is written back when turned off; an IP list emptied stays empty
  const held = filterFieldsOf({ allow_api_key_auth: true, denied_ip: ['1.2.3.4'] });
  held.flags.allow_api_key_auth = false;
  held.denied_ip = '';
  t.same(filtersInputOf(held, { allow_api_key_auth: true, denied_ip: ['1.2.3.4'] }, true), { allow_api_key_auth: false, denied_ip: [] });
  t.same(itemsOf('a,b\n c ,,'), ['a', 'b', 'c']);

  // share policies and certificates (a user's)
  const pem = (n: number) => `-----BEGIN CERTIFICATE-----\nMII${n}\n-----END CERTIFICATE-----`;
  t.same(certificatesOf(`${pem(1)}\n\n${pem(2)}\n`), [pem(1), pem(2)], 'PEM blocks one after the other');
  t.same(certificatesOf(`junk\n${pem(1)}`), ['junk', pem(1)], 'text outside the blocks is not dropped (the server judges it)');
  const certs = filterFieldsOf({ tls_certs: [`${pem(1)}\n`] });
  t.same(filtersInputOf(certs, { tls_certs: [`${pem(1)}\n`] }, true).tls_certs, [`${pem(1)}\n`], 'unchanged certificates are written as read');
  certs.tls_certs += `\n${pem(2)}`;
  certs.default_shares_policies = [{ path: '/pub ', permissions: ['read', 'upload'] }];
  t.same(filtersInputOf(certs, {}, true), { tls_certs: [pem(1), pem(2)], default_shares_policies: [{ path: '/pub', permissions: ['read', 'upload'] }] });
  t.notOk('tls_certs' in filtersInputOf(certs, {}, false), 'no certificates in a group');
});

t.test("account settings: a group's user_settings and virtual folders, its user-only filters left out", async (t) => {
  const group = {
    id: 1,
    name: 'staff',
    user_settings: { home_dir: '/srv/%username%', max_sessions: 1, expires_in: 30, filters: { denied_ip: ['1.1.1.1'], two_factor_protocols: ['SSH'] } },
    virtual_folders: [{ name: 'team', virtual_path: '/team', quota_size: 0, quota_files: 0 }],
    users: ['a'],
  } as unknown as GroupRow;
  const s = groupSettingsOf(group);
  t.equal(s.limits.expires_in, '30');
  t.equal(s.limits.max_sessions, '1');
  const same = withGroupSettings({ ...(group as unknown as GroupInput) }, s, group) as Record<string, any>;
  t.same(same.user_settings.filters, group.user_settings!.filters, 'written back as read');
  t.equal(same.user_settings.home_dir, '/srv/%username%', 'the members the sections do not edit are kept');
  t.same(same.virtual_folders, group.virtual_folders);
  s.filters.flags.require_password_change = true;
  s.filters.additional_emails = 'x@example.com';
  s.filters.denied_protocols = ['SSH'];
  s.limits.expires_in = '7';
  const edited = withGroupSettings({ ...(group as unknown as GroupInput) }, s, group) as Record<string, any>;
  t.same(edited.user_settings.filters, { denied_ip: ['1.1.1.1'], two_factor_protocols: ['SSH'], denied_protocols: ['SSH'] }, 'no user-only filter in a group');
  t.equal(edited.user_settings.expires_in, 7);
  t.equal(edited.user_settings.quota_size, 0);
});
