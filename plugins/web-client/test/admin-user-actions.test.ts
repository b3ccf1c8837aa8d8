/**
 * The web admin's actions on users in Debian's chromium against a real Ferry:
 * several users disabled at once from the list (the rest of each user kept);
 * a quota scan (from the user's page and from the list) after files were
 * written to the home directory on disk; the used transfer reset; a user
 * cloned; the link from a user to their events.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { en as admin } from '../app/src/admin/strings.js';
import { formatSize } from '../app/src/format.js';
import { openFromNav, restAs, signInAdmin } from './admin-helpers.js';
import { checkA11y, harness, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t);
});
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);
/** A user as the REST API reads it, without what a status change or a read moves by itself. */
const settingsOf = (u: Record<string, any>) => {
  const { status: _status, updated_at: _updated, last_login: _login, ...rest } = u;
  return rest;
};

t.test('bulk disable: the users selected are disabled, every other field kept', async (t) => {
  await h.f.addUser('bulk-a', { email: 'a@example.com', description: 'first', quota_size: 1048576, permissions: { '/': ['list', 'download'] } });
  await h.f.addUser('bulk-b', { email: 'b@example.com', max_sessions: 3, expiration_date: Date.parse('2031-01-01T00:00:00Z') });
  await h.f.addUser('bulk-c', { description: 'left alone' });
  const before = await Promise.all(['bulk-a', 'bulk-b'].map(async (u) => (await rest('GET', `/api/v2/users/${u}`)).body));
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await openFromNav(page, admin.users);
  await page.getByRole('checkbox', { name: admin.selectRow('bulk-a') }).check();
  await page.getByRole('checkbox', { name: admin.selectRow('bulk-b') }).check();
  await page.getByText(admin.selectedRows(2)).waitFor();
  await checkA11y(t, page, 'users page with rows checked');
  await page.getByRole('button', { name: admin.disableSelected }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.usersDisabled(['bulk-a', 'bulk-b']) })
    .waitFor();
  for (const [i, u] of ['bulk-a', 'bulk-b'].entries()) {
    const now = (await rest('GET', `/api/v2/users/${u}`)).body;
    t.equal(now.status, 0, `${u} disabled`);
    t.same(settingsOf(now), settingsOf(before[i]!), `${u}: every other field unchanged`);
  }
  t.equal((await rest('GET', '/api/v2/users/bulk-c')).body.status, 1, 'the user not selected is still enabled');

  // select all of the page, then a user deleted meanwhile: its failure shown with the API's message, the others enabled
  await page.getByRole('checkbox', { name: admin.selectPage }).check();
  t.equal((await rest('DELETE', '/api/v2/users/bulk-c')).status, 200);
  await page.getByRole('button', { name: admin.enableSelected }).click();
  const alert = page.getByRole('alert').filter({ hasText: 'bulk-c: ' });
  await alert.waitFor();
  t.match(await alert.textContent(), /bulk-c: .*not found.*\(done for bulk-a, bulk-b\)/i, "the refused user with the API's message, the others done");
  t.equal((await rest('GET', '/api/v2/users/bulk-a')).body.status, 1, 'bulk-a enabled again');
  t.equal((await rest('GET', '/api/v2/users/bulk-b')).body.status, 1, 'bulk-b enabled again');
});

t.test("quota scan: the used quota read from the disk, on the user's page and in the list", async (t) => {
  const home = await h.f.addUser('scan-u');
  await mkdir(path.join(home, 'sub'), { recursive: true });
  await writeFile(path.join(home, 'a.bin'), Buffer.alloc(5000));
  await writeFile(path.join(home, 'sub', 'b.bin'), Buffer.alloc(3000));
  t.equal((await rest('GET', '/api/v2/users/scan-u')).body.used_quota_size ?? 0, 0, 'nothing counted before the scan');
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.goto(`${h.f.origin}/web/admin/users/scan-u`);
  const used = page.getByTestId('user-used-quota');
  await used.filter({ hasText: admin.folderUsed('0 bytes', 0) }).waitFor();
  // the server's list of running scans held on the user (a scan of 2 files ends before it could be seen): "scanning…" until it no longer holds it
  let running = true;
  await page.route('**/api/v2/quotas/users/scans', (route) =>
    running ? route.fulfill({ json: [{ username: 'scan-u', start_time: Date.now() }] }) : route.continue(),
  );
  await page.getByRole('button', { name: admin.scanQuota, exact: true }).click();
  await used.filter({ hasText: admin.scanning }).waitFor();
  t.ok(await page.getByRole('button', { name: admin.scanQuota, exact: true }).isDisabled(), 'no second scan while one runs');
  await page.waitForTimeout(1500);
  t.equal(await used.textContent(), admin.scanning, 'still scanning while the list holds the user');
  running = false;
  await used.filter({ hasText: admin.folderUsed(formatSize(8000), 2) }).waitFor();
  await page
    .getByRole('status')
    .filter({ hasText: admin.userScanDone('scan-u') })
    .waitFor();
  t.equal((await rest('GET', '/api/v2/users/scan-u')).body.used_quota_size, 8000, 'the REST API counts the files scanned');

  await writeFile(path.join(home, 'c.bin'), Buffer.alloc(2000));
  await openFromNav(page, admin.users);
  const row = page
    .getByTestId('users')
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name: 'scan-u' }) });
  t.match(await row.textContent(), admin.folderUsed(formatSize(8000), 2), 'the list shows the used quota');
  await row.getByRole('button', { name: admin.scanUser('scan-u') }).click();
  await row.filter({ hasText: admin.folderUsed(formatSize(10000), 3) }).waitFor();
  t.pass('the list shows the used quota after its scan');
});

t.test('transfer reset: the used upload and download set back to 0', async (t) => {
  await h.f.addUser('xfer-u');
  const set = await rest('PUT', '/api/v2/quotas/users/xfer-u/transfer-usage?mode=add', { used_upload_data_transfer: 2048, used_download_data_transfer: 4096 });
  t.equal(set.status, 200, set.raw);
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.goto(`${h.f.origin}/web/admin/users/xfer-u`);
  const used = page.getByTestId('user-used-transfer');
  await used.filter({ hasText: admin.usedTransferIs(formatSize(2048), formatSize(4096)) }).waitFor();
  await checkA11y(t, page, "user's page with its usage");
  await page.getByRole('button', { name: admin.resetTransfer }).click();
  await page.getByRole('dialog').getByRole('button', { name: admin.resetTransfer }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.transferReset('xfer-u') })
    .waitFor();
  await used.filter({ hasText: admin.usedTransferIs('0 bytes', '0 bytes') }).waitFor();
  const now = (await rest('GET', '/api/v2/users/xfer-u')).body;
  t.equal(now.used_upload_data_transfer, 0, 'upload reset');
  t.equal(now.used_download_data_transfer, 0, 'download reset');
});

t.test('clone: a new user with the settings of another, its password and username typed', async (t) => {
  await h.f.addUser('clone-a', {
    email: 'a@example.com',
    description: 'the model',
    quota_size: 5242880,
    quota_files: 100,
    max_sessions: 2,
    upload_bandwidth: 512,
    expiration_date: Date.parse('2032-06-01T00:00:00Z'),
    permissions: { '/': ['list', 'download'], '/inbox': ['*'] },
    filters: { denied_protocols: ['FTP'], denied_ip: ['10.0.0.0/8'] },
    additional_info: 'team blue',
  });
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  // from the list
  await openFromNav(page, admin.users);
  await page.getByRole('button', { name: admin.cloneUser('clone-a') }).click();
  await page.getByRole('heading', { name: admin.cloneOfUser('clone-a') }).waitFor();
  // from the user's page
  await page.goto(`${h.f.origin}/web/admin/users/clone-a`);
  await page.getByRole('heading', { name: admin.editUser('clone-a') }).waitFor();
  await page.getByRole('button', { name: admin.clone, exact: true }).click();
  await page.getByRole('heading', { name: admin.cloneOfUser('clone-a') }).waitFor();
  t.equal(new URL(page.url()).search, '?clone=clone-a', 'the clone has its URL');
  t.equal(await page.getByTestId('clone-note').textContent(), admin.cloneNote('clone-a'), 'the admin is told to type the secrets again');
  await checkA11y(t, page, 'clone form');
  t.equal(await page.getByLabel(admin.username, { exact: true }).inputValue(), '', 'no username copied');
  t.equal(await page.getByLabel(admin.password, { exact: true }).inputValue(), '', 'no password copied');
  t.equal(await page.getByLabel(admin.email).inputValue(), 'a@example.com', 'the form is filled from the user');
  t.equal(await page.getByLabel(admin.homeDir, { exact: true }).inputValue(), '', 'no home directory copied: the clone does not share its files');
  const home = path.join(h.f.ta.dataDir, 'homes', 'clone-b');
  await page.getByLabel(admin.homeDir, { exact: true }).fill(home);
  await page.getByLabel(admin.username, { exact: true }).fill('clone-b');
  await page.getByLabel(admin.password, { exact: true }).fill('Clone-b-password-1');
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('heading', { name: admin.editUser('clone-b') }).waitFor();

  const a = (await rest('GET', '/api/v2/users/clone-a')).body;
  const b = (await rest('GET', '/api/v2/users/clone-b')).body;
  t.equal(b.username, 'clone-b');
  t.equal(b.home_dir, home, 'the home directory typed');
  t.not(b.home_dir, a.home_dir);
  const own = ['id', 'username', 'home_dir', 'created_at', 'updated_at', 'last_login', 'last_password_change', 'has_password'];
  const settings = (u: Record<string, any>) => Object.fromEntries(Object.entries(u).filter(([k]) => !own.includes(k)));
  t.same(settings(b), settings(a), 'every setting the same as the model');
  t.equal(b.permissions['/inbox']?.[0], '*', 'a setting checked by hand: the permissions of a sub-directory');
  const login = await h.f.ta.inject('GET', '/api/v2/user/token', { basic: { username: 'clone-b', password: 'Clone-b-password-1' } });
  t.equal(login.statusCode, 200, 'the clone signs in with the password typed');
});

t.test("a user's events: the event search filtered by the username", async (t) => {
  await h.f.addUser('ev-u');
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.goto(`${h.f.origin}/web/admin/users/ev-u`);
  const searched = page.waitForRequest((r) => r.url().includes('/api/v2/events/fs') && new URL(r.url()).searchParams.get('username') === 'ev-u');
  await page.getByRole('link', { name: admin.userEvents }).click();
  await page.getByRole('heading', { name: admin.events, level: 1 }).waitFor();
  t.equal(new URL(page.url()).pathname + new URL(page.url()).search, '/web/admin/events?username=ev-u', "the page's URL holds the filter");
  t.equal(await page.getByLabel(admin.username).inputValue(), 'ev-u', 'the username filter filled');
  await searched;
  t.pass("the search of the user's events was sent at once");
  await page.reload();
  await page.getByRole('heading', { name: admin.events, level: 1 }).waitFor();
  t.equal(await page.getByLabel(admin.username).inputValue(), 'ev-u', 'the filter read from the URL after a reload');
});
