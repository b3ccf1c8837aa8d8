/**
 * The web admin's admins and roles in Debian's chromium against a real
 * Ferry: the admins (listed, created from the form with the groups its new
 * users get after the API refused a field, edited, the signed-in admin's own
 * deletion refused, deleted), the roles (created after a refused name,
 * edited, deletion refused while an admin has the role, deleted), admins without "*" (no admins or roles
 * page, the REST refuses) and with a role (no roles page), axe-core on each
 * page, screenshots (FERRY_SCREENSHOT_DIR, e.g. docs/images/web-admin).
 */
import t from 'tap';
import { TEST_ADMIN } from '@ferry/core/testing';
import { en as admin } from '../app/src/admin/strings.js';
import { restAs, signInAdmin } from './admin-helpers.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t);
});
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);

t.test('admins: list, create (a refused field first), edit, own deletion refused, delete', async (t) => {
  t.equal((await rest('POST', '/api/v2/groups', { name: 'night' })).status, 201);
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('navigation', { name: admin.mainNav }).getByRole('link', { name: admin.admins }).click();
  await page.getByRole('heading', { name: admin.admins, level: 1 }).waitFor();
  const row = (name: string) =>
    page
      .getByTestId('admins')
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name, exact: true }) });
  t.match(await row(TEST_ADMIN.username).textContent(), `${admin.enabled}`, 'the signed-in admin is listed');
  t.match(await row(TEST_ADMIN.username).textContent(), admin.allPermissions);
  await checkA11y(t, page, 'admins page');
  await screenshot(page, 'admin-admins');

  await page.getByRole('button', { name: admin.addAdmin }).click();
  await page.getByRole('heading', { name: admin.newAdmin }).waitFor();
  await page.getByLabel(admin.username).fill('ops');
  await page.getByLabel(admin.password, { exact: true }).fill('ops-pass-1');
  await page.getByLabel(admin.email).fill('ops@example.com');
  await page.getByLabel(admin.description).fill('night shift');
  await page.getByLabel(admin.allowedIps).fill('10.0.0.0/8\nnot-an-address');
  await page.getByRole('checkbox', { name: 'view_status' }).check();
  await page.getByRole('checkbox', { name: 'manage_folders' }).check();
  await page.getByRole('button', { name: admin.addGroupToUser }).click();
  await page.locator('#ug-name-0').fill('night');
  await page.locator('#ug-type-0').selectOption({ label: admin.secondary });
  await page.getByRole('button', { name: admin.create }).click();
  await page.locator('#ad-allow_list[aria-invalid="true"]').waitFor();
  t.match(await page.locator('#ad-allow_list-error').textContent(), /allow_list.*IP address or a CIDR network/, "the API's message at the field it names");
  t.equal(await page.evaluate(() => document.activeElement?.id), 'ad-allow_list', 'the refused field has the focus');
  t.equal((await rest('GET', '/api/v2/admins/ops')).status, 404, 'nothing created');
  await checkA11y(t, page, 'admin form with an error');
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'admin-admin-error');

  await page.getByLabel(admin.allowedIps).fill('10.0.0.0/8\n127.0.0.1');
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('heading', { name: admin.editAdmin('ops') }).waitFor();
  const created = await rest('GET', '/api/v2/admins/ops');
  t.equal(created.status, 200);
  t.match(created.body, {
    username: 'ops',
    email: 'ops@example.com',
    description: 'night shift',
    status: 1,
    filters: { allow_list: ['10.0.0.0/8', '127.0.0.1'] },
  });
  t.same([...(created.body.permissions as string[])].sort(), ['manage_folders', 'view_status']);
  t.same(created.body.groups, [{ name: 'night', options: { add_to_users_as: 2 } }], 'the group its new users get, as secondary');
  t.equal(await page.locator('#ug-type-0').inputValue(), '2', 'read back as secondary');
  t.equal(await page.getByLabel(admin.username).getAttribute('readonly'), '', 'the username is fixed once created');

  await page.getByLabel(admin.description).fill('day shift');
  await page.getByRole('checkbox', { name: 'quota_scans' }).check();
  const save = async () => {
    await page.getByRole('button', { name: admin.save, exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: admin.adminSaved('ops') })
      .waitFor();
  };
  await save();
  const edited = await rest('GET', '/api/v2/admins/ops');
  t.same(edited.body.groups, [{ name: 'night', options: { add_to_users_as: 2 } }], 'the groups kept');
  t.match(
    edited.body,
    { description: 'day shift', status: 1, email: 'ops@example.com', filters: { allow_list: ['10.0.0.0/8', '127.0.0.1'] } },
    'edited, the rest kept',
  );
  t.same([...(edited.body.permissions as string[])].sort(), ['manage_folders', 'quota_scans', 'view_status']);
  const login = await h.f.ta.inject('GET', '/api/v2/token', { basic: { username: 'ops', password: 'ops-pass-1' } });
  t.equal(login.statusCode, 200, 'the password left empty in the form was kept');
  await page.getByLabel(admin.status, { exact: true }).selectOption({ label: admin.disabled });
  await save();
  t.equal((await rest('GET', '/api/v2/admins/ops')).body.status, 0, 'disabled on the server');
  await checkA11y(t, page, 'admin form');
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'admin-admin-form');

  await page.getByRole('button', { name: admin.backToAdmins }).click();
  await row(TEST_ADMIN.username)
    .getByRole('button', { name: admin.deleteAdmin(TEST_ADMIN.username) })
    .click();
  await page.getByRole('dialog').getByText(admin.confirmDeleteAdmin(TEST_ADMIN.username)).waitFor();
  await checkA11y(t, page, 'admin delete confirmation');
  await page.getByRole('dialog').getByRole('button', { name: admin.delete }).click();
  t.match(await page.getByRole('alert').textContent(), /cannot delete yourself/, "the server's refusal is shown");
  t.equal((await rest('GET', `/api/v2/admins/${TEST_ADMIN.username}`)).status, 200, 'not deleted');

  await row('ops')
    .getByRole('button', { name: admin.deleteAdmin('ops') })
    .click();
  await page.getByRole('dialog').getByRole('button', { name: admin.delete }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.adminDeleted('ops') })
    .waitFor();
  t.equal((await rest('GET', '/api/v2/admins/ops')).status, 404, 'deleted on the server');
});

t.test('roles: create (a refused name first), edit, deletion refused while given, delete', async (t) => {
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('navigation', { name: admin.mainNav }).getByRole('link', { name: admin.roles }).click();
  await page.getByRole('heading', { name: admin.roles, level: 1 }).waitFor();
  await page.getByText(admin.noRoles).waitFor();

  await page.getByRole('button', { name: admin.addRole }).click();
  await page.getByRole('heading', { name: admin.newRole }).waitFor();
  await page.getByLabel(admin.name, { exact: true }).fill('north/south');
  await page.getByLabel(admin.description).fill('the northern office');
  await page.getByRole('button', { name: admin.create }).click();
  await page.locator('#ro-name[aria-invalid="true"]').waitFor();
  t.match(await page.locator('#ro-name-error').textContent(), /"name"/, "the API's message at the field it names");
  await checkA11y(t, page, 'role form with an error');

  await page.getByLabel(admin.name, { exact: true }).fill('north');
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('heading', { name: admin.editRole('north') }).waitFor();
  t.match((await rest('GET', '/api/v2/roles/north')).body, { name: 'north', description: 'the northern office' });
  await page.getByLabel(admin.description).fill('the northern offices');
  await page.getByRole('button', { name: admin.save, exact: true }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.roleSaved('north') })
    .waitFor();
  t.match((await rest('GET', '/api/v2/roles/north')).body, { description: 'the northern offices' });
  await checkA11y(t, page, 'role form');

  t.equal((await rest('POST', '/api/v2/admins', { username: 'nadmin', password: 'nadmin-pass-1', permissions: ['*'], role: 'north' })).status, 201);
  await page.getByRole('button', { name: admin.backToRoles }).click();
  const north = page
    .getByTestId('roles')
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name: 'north' }) });
  t.match(await north.textContent(), admin.roleAdminRef('nadmin'), 'the admins having the role are listed');
  await checkA11y(t, page, 'roles page');
  await screenshot(page, 'admin-roles');
  await north.getByRole('button', { name: admin.deleteRole('north') }).click();
  await page.getByRole('dialog').getByRole('button', { name: admin.delete }).click();
  t.match(await page.getByRole('alert').textContent(), /still referenced by admin "nadmin"/, "the server's refusal is shown");

  t.equal((await rest('DELETE', '/api/v2/admins/nadmin')).status, 200);
  await north.getByRole('button', { name: admin.deleteRole('north') }).click();
  await page.getByRole('dialog').getByRole('button', { name: admin.delete }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.roleDeleted('north') })
    .waitFor();
  t.equal((await rest('GET', '/api/v2/roles/north')).status, 404, 'deleted on the server');
});

t.test('an admin without "*" sees no admins or roles page, one with a role no roles page; the REST refuses', async (t) => {
  t.equal((await rest('POST', '/api/v2/admins', { username: 'folderer', password: 'folderer-pass-1', permissions: ['manage_folders'] })).status, 201);
  const { ctx, page } = await h.openPage(t);
  await signInAdmin(page, h.f, 'folderer', 'folderer-pass-1');
  await page.getByRole('heading', { name: admin.folders, level: 1 }).waitFor();
  const nav = page.getByRole('navigation', { name: admin.mainNav });
  t.equal(await nav.getByRole('link', { name: admin.admins }).count(), 0, 'no admins link');
  t.equal(await nav.getByRole('link', { name: admin.roles }).count(), 0, 'no roles link');
  t.equal(await page.getByRole('button', { name: admin.scanQuota }).count(), 0, 'no quota scan without quota_scans');
  await page.goto(`${h.f.origin}/web/admin/admins`);
  await page.getByRole('heading', { name: admin.folders, level: 1 }).waitFor();
  t.equal(await page.getByRole('heading', { name: admin.admins, level: 1 }).count(), 0, 'the admins URL shows the first allowed page');
  t.equal((await ctx.request.get(`${h.f.origin}/api/v2/admins`, { failOnStatusCode: false })).status(), 403, 'the REST refuses the admins');
  t.equal((await ctx.request.get(`${h.f.origin}/api/v2/roles`, { failOnStatusCode: false })).status(), 403, 'the REST refuses the roles');
  await checkA11y(t, page, 'folders page of an admin without "*"');

  t.equal((await rest('POST', '/api/v2/roles', { name: 'south' })).status, 201);
  t.equal((await rest('POST', '/api/v2/admins', { username: 'sadmin', password: 'sadmin-pass-1', permissions: ['*'], role: 'south' })).status, 201);
  const other = await h.openPage(t);
  await signInAdmin(other.page, h.f, 'sadmin', 'sadmin-pass-1');
  await other.page.getByRole('heading', { name: admin.dashboard }).waitFor();
  const nav2 = other.page.getByRole('navigation', { name: admin.mainNav });
  await nav2.getByRole('link', { name: admin.admins }).waitFor();
  t.equal(await nav2.getByRole('link', { name: admin.roles }).count(), 0, 'no roles link for an admin with a role');
  const roles = await other.ctx.request.get(`${h.f.origin}/api/v2/roles`, { failOnStatusCode: false });
  t.equal(roles.status(), 403, 'the REST refuses the roles to an admin with a role');
});
