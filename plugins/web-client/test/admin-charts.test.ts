/**
 * The web admin's dashboard charts in chromium against a real Ferry recording
 * events (@ferry/events-search): uploads, downloads and a failed login made
 * through the REST API, then the charts' data tables (uploads and downloads
 * per hour, bytes per day, failed logins per hour) hold what the event search
 * finds, over the last 24 hours and the last 7 days; the top users by
 * storage in order; no Content-Security-Policy violation (uPlot sets only
 * element.style properties); axe-core in light and dark mode; screenshots.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import t from 'tap';
import { en as admin } from '../app/src/admin/strings.js';
import { passwordOf } from './helpers.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';
import { restAs, signInAdmin } from './admin-helpers.js';

let h: Harness;
t.before(async () => {
  h = await harness(t, { plugins: [{ name: '@ferry/events-search', config: { flush_interval: 20 } }] });
});
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);

/** The events of a search once the recorder wrote at least `n` of them (it writes in batches). */
async function eventsOnceRecorded(url: string, n: number): Promise<Record<string, any>[]> {
  for (;;) {
    const got = await rest('GET', url);
    if (got.status !== 200) throw new Error(got.raw);
    const events = got.body as unknown as Record<string, any>[];
    if (events.length >= n) return events;
    await sleep(50);
  }
}

/** The values of column `col` (1: the first series) of a chart's data table, once it is shown. */
async function column(page: Page, chart: string, col: number): Promise<number[]> {
  const table = page.getByTestId(`${chart}-table`);
  await table.waitFor({ state: 'attached' });
  return table.locator(`tbody tr td:nth-of-type(${col})`).evaluateAll((cells) => cells.map((c) => Number(c.getAttribute('data-value'))));
}
const total = (values: number[]) => values.reduce((a, v) => a + v, 0);

/** Records the page's Content-Security-Policy violations (read with cspViolations). */
async function watchCsp(page: Page): Promise<void> {
  await page.addInitScript(() => {
    (window as unknown as { cspViolations: string[] }).cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      (window as unknown as { cspViolations: string[] }).cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
}
const cspViolations = (page: Page) => page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);

t.test('dashboard charts: transfers, bytes and failed logins as the event search finds them; top users', async (t) => {
  const sizes = [1000, 2500, 40];
  await h.f.addUser('ursa');
  await h.f.addUser('vera');
  const ursa = await h.f.ta.userToken('ursa', passwordOf('ursa'));
  const vera = await h.f.ta.userToken('vera', passwordOf('vera'));
  for (const [i, n] of sizes.entries()) {
    const up = await h.f.ta.inject('POST', `/api/v2/user/files/upload?path=%2Ff${i}.bin`, { token: ursa, payload: Buffer.alloc(n, 1) });
    t.equal(up.statusCode, 201, `upload ${i}`);
  }
  const big = await h.f.ta.inject('POST', '/api/v2/user/files/upload?path=%2Fbig.bin', { token: vera, payload: Buffer.alloc(9000, 2) });
  t.equal(big.statusCode, 201);
  for (const name of ['f0.bin', 'f1.bin']) {
    const down = await h.f.ta.inject('GET', `/api/v2/user/files?path=${name}`, { token: ursa });
    t.equal(down.statusCode, 200, `download ${name}`);
  }
  const refused = await h.f.ta.inject('GET', '/api/v2/user/token', {
    headers: { authorization: `Basic ${Buffer.from('ursa:not-the-password').toString('base64')}` },
  });
  t.equal(refused.statusCode, 401, 'a failed login');

  // what the event search finds: the truth the charts must show
  const uploads = await eventsOnceRecorded('/api/v2/events/fs?actions=upload&limit=1000', 4);
  const downloads = await eventsOnceRecorded('/api/v2/events/fs?actions=download&limit=1000', 2);
  const failed = await eventsOnceRecorded('/api/v2/events/logs?events=1,2&limit=1000', 1);
  t.equal(uploads.length, 4);
  t.equal(downloads.length, 2);
  t.same(
    failed.map((e) => e.username),
    ['ursa'],
    'one failed login',
  );
  const users = (await rest('GET', '/api/v2/users')).body as unknown as { username: string; used_quota_size: number }[];
  const used = (name: string) => users.find((u) => u.username === name)!.used_quota_size;
  t.equal(used('vera'), 9000, 'the quota counts the upload');

  const { page } = await h.openPage(t);
  await watchCsp(page);
  await signInAdmin(page, h.f);
  await page.getByRole('heading', { name: admin.dashboard }).waitFor();
  await page.getByTestId('chart-transfers').waitFor();

  const ups = await column(page, 'chart-transfers', 1);
  const downs = await column(page, 'chart-transfers', 2);
  t.equal(ups.length, 24, '24 hours');
  t.equal(total(ups), uploads.length, 'uploads per hour: as many as the search finds');
  t.equal(total(downs), downloads.length, 'downloads per hour');
  t.equal(ups.at(-1)! + ups.at(-2)!, 4, 'in the last hour (or the two last, when the hour turned meanwhile)');
  t.match(await page.getByTestId('chart-transfers-summary').textContent(), admin.transfersSummary(admin.ranges['24h'], 4, 2));

  const upBytes = await column(page, 'chart-bytes', 1);
  const downBytes = await column(page, 'chart-bytes', 2);
  t.equal(upBytes.length, 2, 'two days: yesterday and today');
  t.equal(total(upBytes), total(uploads.map((e) => e.file_size)), 'bytes uploaded');
  t.equal(total(upBytes), 1000 + 2500 + 40 + 9000);
  t.equal(total(downBytes), 1000 + 2500, 'bytes downloaded');

  const logins = await column(page, 'chart-logins', 1);
  t.equal(total(logins), 1, 'failed logins per hour');
  t.match(await page.getByTestId('chart-logins-summary').textContent(), admin.failedLoginsSummary(admin.ranges['24h'], 1));
  t.equal(await page.getByTestId('chart-transfers').locator('canvas').count(), 1, 'uPlot drew the chart on a canvas');

  const top = page.getByTestId('top-users');
  await top.waitFor();
  t.same(await top.locator('tbody th').allTextContents(), ['vera', 'ursa'], 'top users by storage, largest first');
  t.same(await top.locator('tbody td[data-value]').evaluateAll((cells) => cells.map((c) => Number(c.getAttribute('data-value')))), [
    used('vera'),
    used('ursa'),
  ]);

  // a longer range: hourly buckets of 7 days, the same totals
  await page.getByLabel(admin.timeRange).selectOption('7d');
  await page.getByTestId('chart-transfers-table').locator('tbody tr').nth(167).waitFor({ state: 'attached' });
  t.equal((await column(page, 'chart-transfers', 1)).length, 168, '7 days of hours');
  t.equal(total(await column(page, 'chart-transfers', 1)), 4);
  t.equal((await column(page, 'chart-bytes', 1)).length, 7, '7 days');
  t.equal(total(await column(page, 'chart-bytes', 2)), 3500);
  t.equal(total(await column(page, 'chart-logins', 1)), 1);
  await page.getByLabel(admin.timeRange).selectOption('24h');
  await page.getByTestId('chart-transfers-table').locator('tbody tr').nth(23).waitFor({ state: 'attached' });

  await page.getByTestId('chart-transfers').getByText(admin.chartTable).click();
  await checkA11y(t, page, 'dashboard charts');
  t.same(await cspViolations(page), [], 'no Content-Security-Policy violation');
  await page.getByTestId('chart-transfers').getByText(admin.chartTable).click();
  await page.getByRole('heading', { name: admin.activity }).evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await screenshot(page, 'admin-dashboard-charts');
});

t.test('dashboard charts in dark mode at tablet width: the colours of the dark theme, no overflow, axe, no CSP violation', async (t) => {
  const { page } = await h.openPage(t, { colorScheme: 'dark', width: 768, height: 1024 });
  await watchCsp(page);
  await signInAdmin(page, h.f);
  await page.getByTestId('chart-transfers').locator('canvas').waitFor();
  const stroke = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--chart-1').trim());
  t.equal(stroke, '#6cb0ff', "the series take the dark theme's colour");
  const canvas = await page.getByTestId('chart-transfers').locator('canvas').boundingBox();
  t.ok(canvas && canvas.x >= 0 && canvas.x + canvas.width <= 768, 'the chart fits the width');
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scrolling');
  await checkA11y(t, page, 'dashboard charts in dark mode');
  t.same(await cspViolations(page), [], 'no Content-Security-Policy violation');
  await page.getByRole('heading', { name: admin.activity }).evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await screenshot(page, 'admin-dashboard-charts-dark');
});

t.test('an admin without view_events sees no charts; the REST refuses the aggregates', async (t) => {
  const c = await rest('POST', '/api/v2/admins', { username: 'statsless', password: 'statsless-pass-1', status: 1, permissions: ['view_status'] });
  t.equal(c.status, 201, c.raw);
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f, 'statsless', 'statsless-pass-1');
  await page.getByTestId('database-status').waitFor();
  t.equal(await page.getByRole('heading', { name: admin.activity }).count(), 0, 'no charts offered');
  t.equal(await page.getByRole('heading', { name: admin.topUsers }).count(), 0, 'no top users without view_users');
  const token = await h.f.ta.adminToken('statsless', 'statsless-pass-1');
  const r = await h.f.ta.inject('GET', `/api/v2/events/fs/aggregate?start_timestamp=${Date.now() * 1e6}&interval=3600&buckets=1`, { token });
  t.equal(r.statusCode, 403);
});
