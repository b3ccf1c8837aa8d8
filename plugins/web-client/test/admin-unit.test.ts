/** The web admin's logic without a browser: its routes (app/src/admin/routes.ts) and the field an API message names (field-message.ts). */
import t from 'tap';
import { adminRoutePath, pageOfRoute, parseAdminRoute, type AdminRoute } from '../app/src/admin/routes.js';
import { fieldOfMessage, names } from '../app/src/admin/field-message.js';
import { dateOfNanos, nanosOfLocal } from '../app/src/admin/event-time.js';

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
