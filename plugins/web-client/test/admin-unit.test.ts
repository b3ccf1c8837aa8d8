/**
 * The web admin's logic without a browser: its routes (app/src/admin/routes.ts), the field an API message names (field-message.ts),
 * event times (event-time.ts) and the dashboard charts' buckets and series (charts-data.ts).
 */
import t from 'tap';
import { adminRoutePath, pageOfRoute, parseAdminRoute, type AdminRoute } from '../app/src/admin/routes.js';
import { fieldOfMessage, names } from '../app/src/admin/field-message.js';
import { dateOfNanos, nanosOfLocal } from '../app/src/admin/event-time.js';
import { bucketTimes, bucketsOf, chartData, keepTop, peak, perBucket, type FsCount, type LogCount } from '../app/src/admin/charts-data.js';

t.test('routes: each page has its URL, and the URL gives the page back', async (t) => {
  const routes: [AdminRoute, string][] = [
    [{ kind: 'dashboard' }, '/web/admin/'],
    [{ kind: 'users' }, '/web/admin/users'],
    [{ kind: 'user', username: null }, '/web/admin/new-user'],
    [{ kind: 'user', username: 'a b' }, '/web/admin/users/a%20b'],
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

t.test('charts: the top users keep the largest, then by name', async (t) => {
  const u = (username: string, used: number) => ({ username, used, quota: 0 });
  let top = keepTop([], [u('a', 5), u('b', 50), u('c', 7)], 2);
  t.same(
    top.map((x) => x.username),
    ['b', 'c'],
  );
  top = keepTop(top, [u('d', 7), u('e', 100)], 3);
  t.same(
    top.map((x) => x.username),
    ['e', 'b', 'c'],
    'equal sizes: by name',
  );
});
