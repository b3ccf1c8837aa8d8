/**
 * The web admin's security and maintenance pages in chromium against a real
 * Ferry (defender enabled): a host banned by failed logins through the REST
 * API, unbanned from the page (the REST no longer knows it); an IP list
 * entry added (after the API refused its address, shown at the field),
 * edited and deleted, each checked through the REST; a backup downloaded
 * and restored (after the user it holds was deleted) with the server's
 * answer shown; an admin without these permissions (no menu entries, the
 * REST refuses its session). axe-core on each page, screenshots.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { en as admin } from '../app/src/admin/strings.js';
import { en as strings } from '../app/src/strings.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';
import { openFromNav, restAs, signInAdmin } from './admin-helpers.js';
import { passwordOf } from './helpers.js';

let h: Harness;
t.before(async () => {
  h = await harness(t, { config: { defender: { enabled: true, threshold: 4, score_invalid: 2, ban_time: 30 } } });
});
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);

const ATTACKER = '203.0.113.7';
const hostId = (ip: string) => Buffer.from(ip).toString('hex');

t.test('defender: a host banned by failed logins through the REST, unbanned from the page', async (t) => {
  // logins of an account that does not exist, from another address than the browser's
  for (let i = 0; i < 3; i++) {
    const r = await h.f.ta.server.inject({
      method: 'GET',
      url: '/api/v2/token',
      headers: { authorization: `Basic ${Buffer.from('nobody:wrong').toString('base64')}` },
      remoteAddress: ATTACKER,
    });
    t.not(r.statusCode, 200, 'the login is refused');
  }
  const banned = await rest('GET', `/api/v2/defender/hosts/${hostId(ATTACKER)}`);
  t.equal(banned.status, 200);
  t.ok(banned.body.ban_time, 'the host is banned');

  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('heading', { name: admin.dashboard }).waitFor();
  await openFromNav(page, admin.security);
  const hostRow = page
    .getByTestId('defender-hosts')
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name: ATTACKER }) });
  await hostRow.waitFor();
  t.notMatch(await hostRow.textContent(), admin.notBanned, 'shown with the end of its ban');
  await checkA11y(t, page, 'security page');
  await screenshot(page, 'admin-security');

  await hostRow.getByRole('button', { name: admin.unbanHost(ATTACKER) }).click();
  await page.getByRole('dialog').getByRole('button', { name: admin.unban }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.hostUnbanned(ATTACKER) })
    .waitFor();
  t.equal(await hostRow.count(), 0, 'no longer listed');
  t.equal((await rest('GET', `/api/v2/defender/hosts/${hostId(ATTACKER)}`)).status, 404, 'the defender no longer knows the host');
});

t.test('IP lists: add (a refused address first), edit, delete, checked through the REST', async (t) => {
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('heading', { name: admin.dashboard }).waitFor();
  await openFromNav(page, admin.security);
  await page.getByLabel(admin.ipListType, { exact: true }).selectOption({ label: admin.ipListName(2) });
  await page.getByText(admin.noEntries).waitFor();

  await page.getByRole('button', { name: admin.addEntry }).click();
  await page.getByRole('heading', { name: admin.newEntry }).waitFor();
  const ip = page.getByLabel(admin.ipOrNet);
  await ip.fill('10.0.0.300');
  await page.getByLabel(admin.mode).selectOption({ label: admin.modeDeny });
  await page.getByRole('checkbox', { name: 'HTTP' }).check();
  await page.getByLabel(admin.description).fill('scanner');
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('alert').waitFor();
  t.equal(await ip.getAttribute('aria-invalid'), 'true', 'the refused address is marked');
  t.match(await page.locator('#ip-ipornet-error').textContent(), /"ipornet" must be an IPv4 or IPv6 address/, "the API's message at the field");
  t.ok(await ip.evaluate((el) => el === document.activeElement), 'the refused field has the focus');
  await checkA11y(t, page, 'IP list entry form with an error');
  await screenshot(page, 'admin-iplist-error');

  await ip.fill('10.9.0.0/16');
  await page.getByRole('button', { name: admin.create }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.entryAdded('10.9.0.0/16') })
    .waitFor();
  const added = await rest('GET', '/api/v2/iplists/2/10.9.0.0%2F16');
  t.equal(added.status, 200);
  t.match(added.body, { ipornet: '10.9.0.0/16', mode: 2, protocols: 8, description: 'scanner' }, 'stored as entered');
  const entryRow = page
    .getByTestId('ip-list')
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name: '10.9.0.0/16' }) });
  t.match(await entryRow.textContent(), `10.9.0.0/16${admin.modeDeny}HTTPscanner`);
  await checkA11y(t, page, 'IP lists');
  await screenshot(page, 'admin-iplists');

  await entryRow.getByRole('button', { name: admin.editEntry('10.9.0.0/16') }).click();
  await page.getByRole('heading', { name: admin.editEntry('10.9.0.0/16') }).waitFor();
  await page.getByLabel(admin.description).fill('known scanner');
  await page.getByRole('checkbox', { name: 'FTP' }).check();
  await page.getByRole('button', { name: admin.save }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.entrySaved('10.9.0.0/16') })
    .waitFor();
  t.match((await rest('GET', '/api/v2/iplists/2/10.9.0.0%2F16')).body, { mode: 2, protocols: 10, description: 'known scanner' }, 'edited on the server');

  await entryRow.getByRole('button', { name: admin.deleteEntry('10.9.0.0/16') }).click();
  await page.getByRole('dialog').getByRole('button', { name: admin.delete }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.entryDeleted('10.9.0.0/16') })
    .waitFor();
  t.equal((await rest('GET', '/api/v2/iplists/2/10.9.0.0%2F16')).status, 404, 'deleted on the server');
});

t.test('IP lists: paged by the server, next and previous pages, the filter', async (t) => {
  for (let i = 1; i <= 30; i++) t.equal((await rest('POST', '/api/v2/iplists/3', { ipornet: `192.0.2.${i}` })).status, 201);
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('heading', { name: admin.dashboard }).waitFor();
  await openFromNav(page, admin.security);
  await page.getByLabel(admin.ipListType, { exact: true }).selectOption({ label: admin.ipListName(3) });
  const list = page.getByTestId('ip-list');
  const shown = async () => (await list.getByRole('rowheader').allTextContents()).map((ip) => ip.replace(/^192\.0\.2\.|\/32$/g, ''));
  await list.getByRole('rowheader', { name: '192.0.2.1/32', exact: true }).waitFor();
  // the server's order is the addresses' bytes: 192.0.2.1, 192.0.2.10 … 192.0.2.19, 192.0.2.2, …
  const byBytes = Array.from({ length: 30 }, (_, i) => String(i + 1)).sort();
  const first = await shown();
  t.same(first, byBytes.slice(0, 25), 'a page of 25, in the order of the server');
  await page.getByRole('button', { name: admin.next }).click();
  await list.getByRole('rowheader', { name: '192.0.2.9/32', exact: true }).waitFor();
  t.same(await shown(), byBytes.slice(25), 'the 5 others on the next page');
  t.ok(await page.getByRole('button', { name: admin.next }).isDisabled(), 'no page after the last');
  await page.getByRole('button', { name: admin.previous }).click();
  await list.getByRole('rowheader', { name: '192.0.2.1/32', exact: true }).waitFor();
  t.same(await shown(), first, 'back to the first page');

  await page.getByLabel(admin.findIp).fill('192.0.2.2');
  await page.getByRole('button', { name: admin.find }).click();
  await list.getByRole('rowheader', { name: '192.0.2.1/32', exact: true }).waitFor({ state: 'detached' });
  t.same((await shown()).sort(), ['2', '20', '21', '22', '23', '24', '25', '26', '27', '28', '29'], 'the addresses starting so');
});

t.test('maintenance: a backup downloaded, then restored after its user was deleted', async (t) => {
  await h.f.addUser('rita', { description: 'kept in the backup' });
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('heading', { name: admin.dashboard }).waitFor();
  await openFromNav(page, admin.maintenance);
  await checkA11y(t, page, 'maintenance page');
  await screenshot(page, 'admin-maintenance');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: admin.downloadBackup }).click()]);
  const file = await download.path();
  const backup = JSON.parse(readFileSync(file, 'utf8')) as { users: { username: string }[] };
  t.ok(
    backup.users.some((u) => u.username === 'rita'),
    'the backup holds the user',
  );

  t.equal((await rest('DELETE', '/api/v2/users/rita')).status, 200);
  t.equal((await rest('GET', '/api/v2/users/rita')).status, 404, 'gone before the restore');

  // a file that is no backup: the server refuses it, saying why
  await page.getByLabel(admin.backupFile).setInputFiles({ name: 'wrong.json', mimeType: 'application/json', buffer: Buffer.from('{"users": 5}') });
  await page.getByRole('button', { name: admin.restoreButton }).click();
  await page.getByRole('dialog').getByText(admin.confirmRestore('wrong.json')).waitFor();
  await page.getByRole('dialog').getByRole('button', { name: admin.restoreButton }).click();
  await page.getByRole('alert').waitFor();
  t.match(await page.getByTestId('restore-answer').textContent(), admin.restoreRefused, 'the refusal is shown');

  await page.getByLabel(admin.backupFile).setInputFiles(file);
  await page.getByLabel(admin.restoreMode).selectOption({ label: admin.restoreMode1 });
  await page.getByRole('button', { name: admin.restoreButton }).click();
  await page.getByRole('dialog').getByRole('button', { name: admin.restoreButton }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.restored('data restored') })
    .waitFor();
  await screenshot(page, 'admin-restored');
  const back = await rest('GET', '/api/v2/users/rita');
  t.equal(back.status, 200, 'the user is back');
  t.equal(back.body.description, 'kept in the backup');
});

t.test('an admin without these permissions: no security or maintenance page, the REST refuses', async (t) => {
  const made = await rest('POST', '/api/v2/admins', { username: 'clerk', password: 'clerk-pass-1', permissions: ['view_users'] });
  t.equal(made.status, 201);
  const { ctx, page } = await h.openPage(t);
  await signInAdmin(page, h.f, 'clerk', 'clerk-pass-1');
  await page.getByRole('heading', { name: admin.users, level: 1 }).waitFor();
  const nav = page.getByRole('navigation', { name: admin.mainNav });
  for (const title of [admin.security, admin.events, admin.maintenance]) t.equal(await nav.getByRole('link', { name: title }).count(), 0, `no ${title} link`);
  await page.goto(`${h.f.origin}/web/admin/security`);
  await page.getByRole('heading', { name: admin.users, level: 1 }).waitFor();
  t.equal(await page.getByRole('heading', { name: admin.security }).count(), 0, 'the security URL shows an allowed page');
  for (const url of ['/api/v2/defender/hosts', '/api/v2/iplists/1', '/api/v2/dumpdata?output-data=1', '/api/v2/events/fs']) {
    const refused = await ctx.request.get(`${h.f.origin}${url}`, { failOnStatusCode: false });
    t.equal(refused.status(), 403, `the REST refuses ${url} to its session`);
  }
  const session = (await (await ctx.request.get(`${h.f.origin}/api/v2/admin/web-session`)).json()) as { csrf_token: string };
  const load = await ctx.request.post(`${h.f.origin}/api/v2/loaddata`, { data: {}, headers: { 'X-CSRF-Token': session.csrf_token }, failOnStatusCode: false });
  t.equal(load.status(), 403, 'the REST refuses a restore to its session');
  t.match(((await load.json()) as { message: string }).message, /requires the "\*" permission/);
});

t.test('an admin with a role: the IP lists without the defender, which is server-wide', async (t) => {
  t.equal((await rest('POST', '/api/v2/roles', { name: 'branch' })).status, 201);
  const made = await rest('POST', '/api/v2/admins', {
    username: 'warden',
    password: 'warden-pass-1',
    role: 'branch',
    permissions: ['view_defender', 'manage_defender', 'manage_ip_lists'],
  });
  t.equal(made.status, 201);
  const { ctx, page } = await h.openPage(t);
  await signInAdmin(page, h.f, 'warden', 'warden-pass-1');
  await page.getByRole('heading', { name: admin.security, level: 1 }).waitFor();
  await page.getByRole('heading', { name: admin.ipLists }).waitFor();
  t.equal(await page.getByRole('heading', { name: admin.defenderHosts }).count(), 0, 'no defender section');
  const refused = await ctx.request.get(`${h.f.origin}/api/v2/defender/hosts`, { failOnStatusCode: false });
  t.equal(refused.status(), 403, 'the REST refuses the defender to an admin with a role');
  await checkA11y(t, page, 'security page of an admin with a role');
});

t.test("the user web client: the browser's address banned by its failed sign-ins, told so", async (t) => {
  await h.f.addUser('bert');
  const browserHost = hostId('127.0.0.1');
  // the page's address is the one banned: the REST calls of this test come from another one
  t.teardown(async () => {
    await h.f.ta.server.inject({
      method: 'DELETE',
      url: `/api/v2/defender/hosts/${browserHost}`,
      headers: { authorization: `Bearer ${h.f.token}` },
      remoteAddress: '198.51.100.9',
    });
  });
  const { page } = await h.openPage(t);
  await page.goto(h.f.url);
  await page.getByRole('heading', { name: strings.loginTitle }).waitFor();
  // the page stays loaded (a banned host is refused every request, the page's own files included)
  /** One sign-in from the page: the status of its request. */
  const attempt = async (username: string, password: string) => {
    await page.getByLabel(strings.username).fill(username);
    await page.getByLabel(strings.password).fill(password);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/v2/user/web-session') && r.request().method() === 'POST'),
      page.getByRole('button', { name: strings.signIn }).click(),
    ]);
    return answer.status();
  };
  // threshold 4, score_invalid 2: two sign-ins of an account that does not exist ban the address
  t.equal(await attempt('nobody-here', 'guess-1'), 401, 'an unknown account');
  await page.getByRole('alert').filter({ hasText: strings.wrongCredentials }).waitFor();
  t.equal(await attempt('nobody-here', 'guess-2'), 401, 'a second time');
  t.equal(await attempt('bert', passwordOf('bert')), 403, "then bert's right password is refused: the address is banned");
  await page.getByRole('alert').filter({ hasText: strings.banned }).waitFor();
  t.pass('the right password from a banned address: told the address is blocked');
  const listed = await h.f.ta.server.inject({
    method: 'GET',
    url: `/api/v2/defender/hosts/${browserHost}`,
    headers: { authorization: `Bearer ${h.f.token}` },
    remoteAddress: '198.51.100.9',
  });
  t.equal(listed.statusCode, 200, 'the defender has banned the address');
  t.ok((JSON.parse(listed.payload) as { ban_time?: string }).ban_time, 'with a ban time');
  t.equal(await page.getByRole('heading', { name: strings.home }).count(), 0, 'not signed in');
});
