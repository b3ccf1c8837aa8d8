/**
 * The web admin's event search in chromium against a real Ferry recording
 * events (@ferry/events-search): a file uploaded through the REST API found
 * among the file events (time in the browser's locale), the user's creation
 * among the provider events, a refused filter shown at its field, the
 * search exported as CSV; an admin without view_events (no menu entry, the
 * REST refuses). axe-core, screenshots.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { en as admin } from '../app/src/admin/strings.js';
import { passwordOf } from './helpers.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';
import { openFromNav, restAs, signInAdmin } from './admin-helpers.js';

let h: Harness;
t.before(async () => {
  h = await harness(t, { plugins: [{ name: '@ferry/events-search', config: { flush_interval: 20 } }] });
});
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);

/** The events of a search once the recorder wrote them (it writes in batches). */
async function eventsOnceRecorded(url: string): Promise<Record<string, any>[]> {
  for (;;) {
    const got = await rest('GET', url);
    if (got.status !== 200) throw new Error(got.raw);
    const events = got.body as unknown as Record<string, any>[];
    if (events.length) return events;
    await sleep(50);
  }
}

t.test('event search: an upload and a user creation found, a refused filter, the CSV export', async (t) => {
  await h.f.addUser('uma');
  const token = await h.f.ta.userToken('uma', passwordOf('uma'));
  const up = await h.f.ta.inject('POST', '/api/v2/user/files/upload?path=%2Freport.txt', { token, payload: 'quarterly numbers' });
  t.equal(up.statusCode, 201, 'uploaded through the REST API');
  const [upload] = await eventsOnceRecorded('/api/v2/events/fs?username=uma&actions=upload');
  await eventsOnceRecorded('/api/v2/events/provider?object_name=uma&actions=add');

  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('heading', { name: admin.dashboard }).waitFor();
  await openFromNav(page, admin.events);
  await page.getByLabel(admin.username).fill('uma');
  await page.getByLabel(admin.action).selectOption('upload');
  await page.getByRole('button', { name: admin.search }).click();
  const uploadRow = page
    .getByTestId('events')
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name: '/report.txt' }) });
  await uploadRow.waitFor();
  const when = await page.evaluate((ns) => new Date(Math.floor(ns / 1e6)).toLocaleString(), upload!.timestamp as number);
  t.equal(await uploadRow.getByRole('rowheader').textContent(), when, "the time in the browser's locale");
  t.match(await uploadRow.textContent(), `uploaduma/report.txtHTTP${admin.fsStatus(1)}`, 'action, user, path, protocol, status');
  await checkA11y(t, page, 'event search');
  await screenshot(page, 'admin-events');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: admin.exportCsv }).click()]);
  const csv = readFileSync(await download.path(), 'utf8').split('\r\n');
  t.match(csv[0], /^id,timestamp,action,username,fs_path/, 'the CSV header');
  t.equal(csv.filter((l) => l.includes(',upload,uma,')).length, 1, 'the upload, and only the search');

  // the time range: nothing before 2020
  await page.getByLabel(admin.to, { exact: true }).fill('2020-01-01T00:00:00');
  await page.getByRole('button', { name: admin.search }).click();
  await page.getByRole('status').filter({ hasText: admin.noEvents }).waitFor();
  await page.getByLabel(admin.from, { exact: true }).fill('2020-01-01T00:00:00');
  await page.getByLabel(admin.to, { exact: true }).fill('');
  await page.getByRole('button', { name: admin.search }).click();
  await uploadRow.waitFor();
  t.pass('the upload is found from 2020 on, not before');

  // a filter the API refuses: its message at the field
  const ip = page.getByLabel(admin.ip);
  await ip.fill('1'.repeat(65));
  await page.getByRole('button', { name: admin.search }).click();
  await page.getByRole('alert').waitFor();
  t.equal(await ip.getAttribute('aria-invalid'), 'true', 'the refused filter is marked');
  t.match(await page.locator('#ev-ip-error').textContent(), /"ip" length must be less than or equal to 64/, "the API's message at the field");
  await ip.fill('');

  await page.getByRole('radio', { name: admin.providerEvents }).check();
  await page.getByLabel(admin.action).selectOption('add');
  await page.getByLabel(admin.username).fill('');
  await page.getByLabel(admin.objectType).selectOption('user');
  await page.getByLabel(admin.objectName).fill('uma');
  await page.getByRole('button', { name: admin.search }).click();
  const addRow = page
    .getByTestId('events')
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name: 'uma', exact: true }) });
  await addRow.waitFor();
  t.match(await addRow.textContent(), /add.*uma.*user/, 'the creation of the user');
  await checkA11y(t, page, 'provider event search');
});

t.test('an admin without view_events: no event search, the REST refuses', async (t) => {
  t.equal((await rest('POST', '/api/v2/admins', { username: 'auditor', password: 'auditor-pass-1', permissions: ['view_status'] })).status, 201);
  const { ctx, page } = await h.openPage(t);
  await signInAdmin(page, h.f, 'auditor', 'auditor-pass-1');
  await page.getByRole('heading', { name: admin.dashboard }).waitFor();
  t.equal(await page.getByRole('navigation', { name: admin.mainNav }).getByRole('link', { name: admin.events }).count(), 0, 'no event search link');
  const refused = await ctx.request.get(`${h.f.origin}/api/v2/events/fs`, { failOnStatusCode: false });
  t.equal(refused.status(), 403, 'the REST refuses the events to its session');
});
