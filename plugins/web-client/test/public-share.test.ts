/**
 * The public share page (/web/client/pub/<id>) in chromium, opened by an
 * external party in a browser context without any session: the password
 * prompt (wrong, then right), the share's description and limits, folders,
 * a file and a zip downloaded, uploads by drag and drop and by the file
 * button over TUS (files on disk), a read-only and a write-only share, an
 * expired and a used-up share; axe-core and screenshots.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { en as strings } from '../app/src/strings.js';
import { launchBrowser, newContext } from './browser.js';
import { passwordOf, startFerry } from './helpers.js';
import { checkA11y, delayRequests, screenshot } from './page.js';

// TUS on (1 MB chunks), as uploads from a share page use it
const f = await startFerry(t, { config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] } } });
const browser = await launchBrowser(t);
const home = await f.addUser('owner');
mkdirSync(path.join(home, 'project', 'drafts'), { recursive: true });
mkdirSync(path.join(home, 'inbox'));
writeFileSync(path.join(home, 'project', 'report.txt'), 'the report');
writeFileSync(path.join(home, 'project', 'drafts', 'draft-1.txt'), 'a draft');
const ownerToken = await f.ta.userToken('owner', passwordOf('owner'));

/** A share of the owner, created over REST; its id. */
async function share(payload: Record<string, unknown>): Promise<string> {
  const r = await f.ta.inject('POST', '/api/v2/user/shares', { token: ownerToken, payload });
  if (r.statusCode !== 201) throw new Error(`add share: ${r.statusCode} ${r.payload}`);
  return String(r.headers['x-object-id']);
}
const sql = (q: string, params: unknown[]) =>
  (f.ta.app.orm.em.getConnection() as unknown as { execute(q: string, p: unknown[], m: 'run'): Promise<unknown> }).execute(q, params, 'run');

/** A page in a fresh context: no user session, no share cookie. */
async function stranger(t: Test, o: Parameters<typeof newContext>[1] = {}) {
  const ctx = await newContext(browser, o);
  t.teardown(() => ctx.close());
  return { ctx, page: await ctx.newPage() };
}
const pubUrl = (id: string) => `${f.origin}/web/client/pub/${id}`;
const uploaded = (page: Page, name: string) => page.locator('.upload.done').filter({ hasText: name }).waitFor();

t.test('a password share: prompt, browse, downloads, uploads by drop and by button', async (t) => {
  const expires = Date.now() + 7 * 86_400_000;
  const id = await share({
    name: 'Project files',
    description: 'The report and its drafts, for the review.',
    scope: 3,
    paths: ['/project'],
    password: 'open-sesame-1',
    expires_at: expires,
    max_tokens: 20,
  });
  const { ctx, page } = await stranger(t);
  await page.goto(pubUrl(id));
  await page.getByRole('heading', { name: strings.pubPasswordTitle }).waitFor();
  t.notOk(await page.getByLabel(strings.username).count(), 'no user sign-in form');
  await checkA11y(t, page, 'share password prompt');
  await screenshot(page, 'pub-password');

  await page.getByLabel(strings.password).fill('wrong-password');
  await page.getByRole('button', { name: strings.pubOpen }).click();
  await page.getByRole('alert').filter({ hasText: strings.pubWrongPassword }).waitFor();
  t.pass('a wrong password is told so');
  t.same(
    (await ctx.cookies()).map((c) => c.name),
    [],
    'no cookie for a wrong password',
  );

  await page.getByLabel(strings.password).fill('open-sesame-1');
  await page.getByRole('button', { name: strings.pubOpen }).click();
  await page.getByRole('heading', { name: 'Project files' }).waitFor();
  t.ok(await page.getByText('The report and its drafts, for the review.').isVisible(), 'the description');
  const limits = await page.getByRole('list', { name: strings.pubLimits }).textContent();
  t.match(limits, /Available until/, 'the expiry');
  t.match(limits, strings.pubUsesLeft(20, 20), 'the uses left');
  const cookie = (await ctx.cookies()).find((c) => c.name === `ferry_share_${id}`);
  t.ok(cookie?.httpOnly, 'the share session cookie is HttpOnly');
  t.equal(cookie?.sameSite, 'Strict');
  t.equal(cookie?.path, '/api/v2/', 'sent to the API only');
  t.equal(await page.evaluate(() => document.cookie), '', 'scripts see no cookie');
  t.notOk(
    await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage)).then((s) => s.includes('open-sesame')),
    'the password is not stored',
  );
  await checkA11y(t, page, 'share page');
  await screenshot(page, 'pub-share');

  // a reload keeps the session (the cookie)
  await page.reload();
  await page.getByRole('heading', { name: 'Project files' }).waitFor();
  t.pass('a reload keeps the share open');

  // a file
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: `${strings.download} report.txt` }).click()]);
  t.equal(readFileSync((await file.path())!, 'utf8'), 'the report', 'a file downloaded');
  // the zip of the share
  const [zip] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: strings.pubDownloadAll }).click()]);
  const zipped = readFileSync((await zip.path())!);
  t.equal(zipped.subarray(0, 2).toString(), 'PK', 'a zip downloaded');
  t.ok(zipped.includes('drafts/draft-1.txt'), 'it holds the subfolder');

  // the keyboard: arrows, Home and End move between the entries; Enter opens a folder, Backspace goes back up
  const focused = (name: string) => page.getByRole('link', { name, exact: true }).evaluate((el) => el === document.activeElement);
  await page.getByRole('link', { name: 'drafts', exact: true }).focus();
  await page.keyboard.press('ArrowDown');
  t.ok(await focused(`${strings.download} report.txt`), 'Down: the next entry has the focus');
  await page.keyboard.press('ArrowDown');
  t.ok(await focused(`${strings.download} report.txt`), 'Down on the last entry: it keeps the focus');
  await page.keyboard.press('Home');
  t.ok(await focused('drafts'), 'Home: the first entry');
  await page.keyboard.press('End');
  t.ok(await focused(`${strings.download} report.txt`), 'End: the last entry');
  await page.keyboard.press('ArrowUp');
  t.ok(await focused('drafts'), 'Up: the entry before');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'drafts' }).waitFor();
  await page.getByRole('link', { name: `${strings.download} draft-1.txt` }).focus();
  await page.keyboard.press('Backspace');
  await page.getByRole('heading', { name: 'Project files' }).waitFor();
  t.match(page.url(), new RegExp(`/web/client/pub/${id}$`), 'Backspace: up to the share');

  // a folder, and back by the breadcrumbs
  await page.getByRole('link', { name: 'drafts' }).click();
  await page.getByRole('heading', { name: 'drafts' }).waitFor();
  t.match(page.url(), new RegExp(`/web/client/pub/${id}/drafts$`));
  await page.getByRole('link', { name: `${strings.download} draft-1.txt` }).waitFor();
  t.pass('the subfolder lists its file');
  const [folderZip] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: strings.pubDownloadFolder }).click()]);
  t.equal(folderZip.suggestedFilename(), 'drafts.zip');
  const folderBytes = readFileSync((await folderZip.path())!);
  t.equal(folderBytes.subarray(0, 2).toString(), 'PK', 'this folder as a zip');
  t.ok(folderBytes.includes('drafts/draft-1.txt') && !folderBytes.includes('report.txt'), 'this folder only');

  // drop a file into the subfolder
  const dt = await page.evaluateHandle(() => {
    const d = new DataTransfer();
    d.items.add(new File(['dropped by a partner'], 'dropped.txt', { type: 'text/plain' }));
    return d;
  });
  await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: dt });
  await uploaded(page, 'dropped.txt');
  t.equal(readFileSync(path.join(home, 'project', 'drafts', 'dropped.txt'), 'utf8'), 'dropped by a partner', 'the dropped file is on disk');
  await page.getByRole('link', { name: `${strings.download} dropped.txt` }).waitFor();
  t.pass('and listed');

  await page.getByRole('navigation', { name: strings.breadcrumbs }).getByRole('link', { name: 'Project files' }).click();
  await page.getByRole('heading', { name: 'Project files' }).waitFor();
  // the file button: a file of several TUS chunks (1 MB each)
  const big = Buffer.alloc(2.5 * 1024 * 1024, 7);
  await page.getByLabel(strings.pubChooseFiles).setInputFiles([{ name: 'picked.bin', mimeType: 'application/octet-stream', buffer: big }]);
  await uploaded(page, 'picked.bin');
  t.ok(readFileSync(path.join(home, 'project', 'picked.bin')).equals(big), 'the picked file is on disk, whole');
  await checkA11y(t, page, 'share page with uploads');
  await screenshot(page, 'pub-upload');

  // the session is the share's alone: the owner's files are not reachable with it
  const other = await ctx.request.get(`${f.origin}/api/v2/user/dirs`, { failOnStatusCode: false });
  t.equal(other.status(), 401, 'no user session');
});

t.test('a folder left before its listing came: that late listing is not shown', async (t) => {
  const id = await share({ name: 'Late listing', scope: 1, paths: ['/project'] });
  const { page } = await stranger(t);
  await page.goto(pubUrl(id));
  await page.getByRole('heading', { name: 'Late listing' }).waitFor();
  const late = await delayRequests(page, /\/dirs\?path=%2Fdrafts$/, 800);
  await page.getByRole('link', { name: 'drafts' }).click();
  await page.getByRole('heading', { name: 'drafts' }).waitFor();
  await page.getByRole('navigation', { name: strings.breadcrumbs }).getByRole('link', { name: 'Late listing' }).click();
  await page.getByRole('link', { name: `${strings.download} report.txt` }).waitFor();
  await late.answered;
  await late.remove();
  await new Promise((r) => setTimeout(r, 200));
  t.equal(await page.getByRole('link', { name: `${strings.download} draft-1.txt` }).count(), 0, "the subfolder's late listing is not shown");
  t.ok(await page.getByRole('link', { name: `${strings.download} report.txt` }).isVisible(), "the share's own entries stay");
});

t.test('a read-only share: no upload offered, and the server refuses one', async (t) => {
  const id = await share({ name: 'Read only', scope: 1, paths: ['/project'] });
  const { ctx, page } = await stranger(t);
  await page.goto(pubUrl(id));
  await page.getByRole('heading', { name: 'Read only' }).waitFor();
  await page.getByRole('link', { name: `${strings.download} report.txt` }).waitFor();
  t.equal(await page.getByTestId('dropzone').count(), 0, 'no drop zone');
  t.equal(await page.getByLabel(strings.pubChooseFiles).count(), 0, 'no file button');
  t.ok(await page.getByRole('list', { name: strings.pubLimits }).getByText(strings.pubUnlimited).isVisible(), 'no limit on uses');
  const refused = await ctx.request.post(`${f.origin}/api/v2/shares/${id}/files/sneaky.txt`, {
    data: 'nope',
    headers: { 'content-type': 'application/octet-stream' },
    failOnStatusCode: false,
  });
  t.equal(refused.status(), 403, 'the upload is refused by the server');
  const tus = await ctx.request.post(`${f.origin}/api/v2/shares-chunked-uploads`, {
    headers: {
      'tus-resumable': '1.0.0',
      'upload-length': '4',
      'upload-metadata': `share_id ${Buffer.from(id).toString('base64')},path ${Buffer.from('sneaky.txt').toString('base64')}`,
    },
    failOnStatusCode: false,
  });
  t.equal(tus.status(), 403, 'over TUS too');
});

t.test('a write-only share: upload only, at phone width', async (t) => {
  const id = await share({ name: 'Drop box', scope: 2, paths: ['/inbox'], password: 'drop-it-1' });
  const { page } = await stranger(t, { width: 375, height: 740 });
  await page.goto(pubUrl(id));
  await page.getByLabel(strings.password).fill('drop-it-1');
  await page.getByRole('button', { name: strings.pubOpen }).click();
  await page.getByRole('heading', { name: 'Drop box' }).waitFor();
  t.ok(await page.getByText(strings.pubUploadOnly).isVisible(), 'told that only uploads are possible');
  t.equal(await page.getByRole('link', { name: strings.pubDownloadAll }).count(), 0, 'no download');
  t.equal(await page.getByRole('table').count(), 0, 'no listing');
  await page.getByLabel(strings.pubChooseFiles).setInputFiles([
    { name: 'one.txt', mimeType: 'text/plain', buffer: Buffer.from('first') },
    { name: 'two.txt', mimeType: 'text/plain', buffer: Buffer.from('second') },
  ]);
  await uploaded(page, 'one.txt');
  await uploaded(page, 'two.txt');
  t.equal(readFileSync(path.join(home, 'inbox', 'one.txt'), 'utf8'), 'first');
  t.equal(readFileSync(path.join(home, 'inbox', 'two.txt'), 'utf8'), 'second');
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'nothing wider than the phone');
  await checkA11y(t, page, 'write-only share at 375 px');
});

t.test("uploads to a share over TUS: a cancel terminates on the server, an interrupted one resumes from the server's offset", async (t) => {
  const id = await share({ name: 'Big drop', scope: 2, paths: ['/inbox'], password: 'big-drop-1' });
  const store = path.join(f.ta.config.common.temp_dir, 'chunked-uploads');
  const pending = () => (existsSync(store) ? readdirSync(store) : []);
  const local = path.join(f.ta.dataDir, 'pub-big.bin');
  const data = Buffer.alloc(5 * 1024 * 1024);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 253;
  writeFileSync(local, data);
  const { page } = await stranger(t);
  await page.goto(pubUrl(id));
  await page.getByLabel(strings.password).fill('big-drop-1');
  await page.getByRole('button', { name: strings.pubOpen }).click();
  await page.getByRole('heading', { name: 'Big drop' }).waitFor();
  // slow chunks: the upload is still running when it is cancelled
  await page.route('**/api/v2/shares-chunked-uploads/*', async (route) => {
    if (route.request().method() === 'PATCH') await new Promise((r) => setTimeout(r, 400));
    await route.continue().catch(() => undefined);
  });
  let firstChunk = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.status() === 204);
  await page.getByLabel(strings.pubChooseFiles).setInputFiles(local);
  await firstChunk;
  t.equal(pending().length, 2, 'the upload exists on the server (bytes and description)');
  const deleted = page.waitForResponse((r) => r.request().method() === 'DELETE');
  await page.getByRole('button', { name: strings.cancelUpload('pub-big.bin') }).click();
  t.equal((await deleted).status(), 204, 'terminated on the server');
  await page.locator('.upload').filter({ hasText: strings.uploadCancelled }).waitFor();
  t.same(pending(), [], 'no temporary data left');
  t.notOk(existsSync(path.join(home, 'inbox', 'pub-big.bin')));

  // interrupted by a reload after the first chunk: picking the file again goes on from the server's offset
  firstChunk = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.status() === 204);
  await page.getByLabel(strings.pubChooseFiles).setInputFiles(local);
  await firstChunk;
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  // the share's web session holds across the reload: no password asked
  await page.goto(pubUrl(id));
  await page.getByRole('heading', { name: 'Big drop' }).waitFor();
  const offsets: number[] = [];
  page.on('request', (r) => {
    if (r.method() === 'PATCH') offsets.push(Number(r.headers()['upload-offset']));
  });
  const asked = page.waitForResponse((r) => r.request().method() === 'HEAD' && r.status() === 200);
  await page.getByLabel(strings.pubChooseFiles).setInputFiles(local);
  await asked;
  await uploaded(page, 'pub-big.bin');
  t.ok(offsets.length > 0 && offsets[0]! >= 1024 * 1024, `resumed at ${offsets[0]}, not from 0`);
  t.same(readFileSync(path.join(home, 'inbox', 'pub-big.bin')), data, 'byte-identical');
  t.same(pending(), [], 'nothing left on the server');
});

t.test('an expired share, a used-up share, a share that does not exist', async (t) => {
  const expired = await share({ name: 'Old', scope: 1, paths: ['/project'], expires_at: Date.now() + 86_400_000 });
  await sql('update shares set expires_at = ? where share_id = ?', [Date.now() - 1000, expired]);
  const used = await share({ name: 'Once', scope: 1, paths: ['/project'], max_tokens: 1 });
  const taken = await f.ta.inject('GET', `/api/v2/shares/${used}/files?path=report.txt`);
  t.equal(taken.statusCode, 200, 'its only use');

  const { page } = await stranger(t, { colorScheme: 'dark' });
  await page.goto(pubUrl(expired));
  await page.getByRole('alert').filter({ hasText: strings.pubExpired }).waitFor();
  t.pass('the expired share says so');
  await checkA11y(t, page, 'expired share (dark)');
  await screenshot(page, 'pub-expired');

  await page.goto(pubUrl(used));
  await page.getByRole('alert').filter({ hasText: strings.pubExhausted }).waitFor();
  t.ok(await page.getByText(strings.pubUsesLeft(0, 1)).isVisible(), 'no use left');
  t.equal(await page.getByRole('link', { name: strings.pubDownloadAll }).count(), 0, 'nothing to download');

  await page.goto(pubUrl('no-such-share'));
  await page.getByRole('alert').filter({ hasText: strings.pubNotFound }).waitFor();
  t.pass('an unknown share says so');
});
