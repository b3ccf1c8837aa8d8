/**
 * The web client in Debian's chromium (headless, playwright-core) against a
 * real Ferry on 127.0.0.1: sign-in (password, wrong password, disabled
 * or expired account, two-factor), the file browser (list, new folder, upload,
 * download, rename, delete, a refused upload, a 10,000-entry folder),
 * sign-out, axe-core on each page, screenshots (FERRY_SCREENSHOT_DIR keeps
 * them, e.g. docs/images/web-client for docs/web-client.md).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { en as strings } from '../app/src/strings.js';
import { passwordOf } from './helpers.js';
import { checkA11y, harness, row, screenshot, signIn, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t);
});
const openPage: Harness['openPage'] = (t, o) => h.openPage(t, o);
const signedIn: Harness['signedIn'] = (t, u, o) => h.signedIn(t, u, o);

t.test('sign-in: a wrong password, a disabled account, an expired account, then the files page', async (t) => {
  await h.f.addUser('alice');
  await h.f.addUser('dora', { status: 0 });
  await h.f.addUser('edna', { expiration_date: Date.now() - 86_400_000 });
  const { ctx, page } = await openPage(t);

  await page.goto(h.f.url);
  await page.getByRole('heading', { name: strings.loginTitle }).waitFor();
  await checkA11y(t, page, 'sign-in page');
  await screenshot(page, 'login');

  await signIn(page, h.f, 'alice', 'not-her-password');
  t.equal(await page.getByRole('alert').textContent(), strings.wrongCredentials);
  t.equal(await page.getByLabel(strings.password).inputValue(), 'not-her-password', 'the form keeps what was typed');
  await screenshot(page, 'login-error');

  await signIn(page, h.f, 'dora');
  await page.getByRole('alert').filter({ hasText: strings.accountDisabled }).waitFor();
  t.pass('a disabled account is told so');

  await signIn(page, h.f, 'edna');
  await page.getByRole('alert').filter({ hasText: strings.accountExpired }).waitFor();
  t.pass('an expired account is told so');

  await signIn(page, h.f, 'alice');
  await page.getByRole('heading', { name: strings.home }).waitFor();
  await page.getByRole('status').filter({ hasText: strings.emptyFolder }).waitFor();
  t.pass('an empty home');
  t.match(page.url(), /\/web\/client\/files$/);
  const cookies = await ctx.cookies();
  const session = cookies.find((c) => c.name === 'ferry_web');
  t.ok(session?.httpOnly, 'the session cookie is HttpOnly');
  t.equal(session?.sameSite, 'Strict');
  t.equal(await page.evaluate(() => document.cookie), '', 'scripts see no cookie');

  await page.reload();
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.pass('a reload keeps the session');

  await page.getByRole('button', { name: strings.logout }).click();
  await page.getByRole('heading', { name: strings.loginTitle }).waitFor();
  const after = await ctx.request.get(`${h.f.origin}/api/v2/user/web-session`, { failOnStatusCode: false });
  t.equal(after.status(), 401, 'sign-out ends the session on the server');
});

t.test('a new tab on a folder asks for its listing with the session check, not after it; without a session, no "session ended"', async (t) => {
  const home = await h.f.addUser('nina');
  mkdirSync(path.join(home, 'Plans'), { recursive: true });
  writeFileSync(path.join(home, 'Plans', 'a.txt'), 'a\n');

  // not signed in: the early requests are refused, the sign-in page says nothing of an ended session,
  // and after the sign-in the folder is listed (the refused early answer is not used)
  const { ctx, page } = await openPage(t);
  await page.goto(`${h.f.url}files/Plans`);
  await page.getByRole('heading', { name: strings.loginTitle }).waitFor();
  t.equal(await page.getByText(strings.sessionExpired).count(), 0, 'no "session ended" for a visitor who was never signed in');
  await page.getByLabel(strings.username).fill('nina');
  await page.getByLabel(strings.password).fill(passwordOf('nina'));
  await page.getByRole('button', { name: strings.signIn }).click();
  await page.getByRole('heading', { name: 'Plans' }).waitFor();
  await row(page, 'a.txt').waitFor();
  t.pass('signed in on the folder of the address, listed');

  // signed in, a new tab: the session's answer is held until the listing is asked for (5 s at most);
  // a page that asks for the listing only after the session check would wait the 5 s and fail
  const tab = await ctx.newPage();
  let listingAsked = false;
  let seen!: () => void;
  const listingSeen = new Promise<void>((resolve) => (seen = resolve));
  tab.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/v2/user/dirs') {
      listingAsked = true;
      seen();
    }
  });
  let askedBeforeSession: boolean | undefined;
  await tab.route('**/api/v2/user/web-session', async (route) => {
    if (route.request().method() === 'GET' && askedBeforeSession === undefined) {
      await Promise.race([listingSeen, new Promise((resolve) => setTimeout(resolve, 5000))]);
      askedBeforeSession = listingAsked;
    }
    await route.continue();
  });
  await tab.goto(`${h.f.url}files/Plans`);
  await row(tab, 'a.txt').waitFor();
  t.equal(askedBeforeSession, true, 'the listing was asked for before the session check answered');
});

t.test('two-factor sign-in: the passcode step, a wrong code, the right one', async (t) => {
  await h.f.addUser('tom');
  const code = await h.f.enableTotp('tom');
  const { page } = await openPage(t);
  await signIn(page, h.f, 'tom');
  await page.getByRole('heading', { name: strings.passcodeTitle }).waitFor();
  t.equal(await page.evaluate(() => document.activeElement?.id), 'passcode', 'the code field has the focus');
  await checkA11y(t, page, 'passcode step');
  await screenshot(page, 'passcode');
  const good = code();
  const wrong = String((Number(good) + 1) % 1_000_000).padStart(6, '0');
  await page.getByLabel(strings.passcode).fill(wrong);
  await page.getByRole('button', { name: strings.verify }).click();
  await page.getByRole('alert').filter({ hasText: strings.wrongPasscode }).waitFor();
  t.pass('a wrong code is refused with a clear message');
  await page.getByLabel(strings.passcode).fill(good);
  await page.getByRole('button', { name: strings.verify }).click();
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.pass('the right code signs in');
});

t.test('a password the administrator wants changed: the change form first, then a sign-in with the new one', async (t) => {
  await h.f.addUser('paul', { filters: { require_password_change: true } });
  const { page } = await openPage(t);
  await signIn(page, h.f, 'paul');
  await page.getByRole('heading', { name: strings.changePasswordTitle }).waitFor();
  await checkA11y(t, page, 'password change page');
  await screenshot(page, 'change-password');
  await page.getByLabel(strings.currentPassword).fill(passwordOf('paul'));
  await page.getByLabel(strings.newPassword, { exact: true }).fill('a-new-Password-42');
  await page.getByLabel(strings.confirmPassword).fill('a-new-Password-43');
  await page.getByRole('button', { name: strings.changePassword }).click();
  t.equal(await page.getByRole('alert').textContent(), strings.passwordsDiffer, 'two different new passwords are caught');
  await page.getByLabel(strings.confirmPassword).fill('a-new-Password-42');
  await page.getByRole('button', { name: strings.changePassword }).click();
  // the server ends the sessions of a changed password: the sign-in page says so
  await page.getByRole('status').filter({ hasText: strings.passwordChanged }).waitFor();
  t.pass('told to sign in again with the new password');
  await signIn(page, h.f, 'paul');
  t.equal(await page.getByRole('alert').textContent(), strings.wrongCredentials, 'the old password no longer works');
  await signIn(page, h.f, 'paul', 'a-new-Password-42');
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.pass('the new one does, straight to the files');
});

t.test('an expired password (password_expiration days passed): the change form at sign-in, then in with the new one', async (t) => {
  await h.f.addUser('ivy', { filters: { password_expiration: 30 } });
  // the last change 31 days ago (the API does not set it: the database does)
  await h.f.ta.app.orm.em
    .fork()
    .getConnection()
    .execute('update users set last_password_change = ? where username = ?', [Date.now() - 31 * 86_400_000, 'ivy']);
  const { page } = await openPage(t);
  await signIn(page, h.f, 'ivy');
  await page.getByRole('heading', { name: strings.changePasswordTitle }).waitFor();
  t.pass('the sign-in with the expired password leads to the change form');
  await page.getByLabel(strings.currentPassword).fill(passwordOf('ivy'));
  await page.getByLabel(strings.newPassword, { exact: true }).fill('ivy-Fresh-Password-7');
  await page.getByLabel(strings.confirmPassword).fill('ivy-Fresh-Password-7');
  await page.getByRole('button', { name: strings.changePassword }).click();
  await page.getByRole('status').filter({ hasText: strings.passwordChanged }).waitFor();
  await signIn(page, h.f, 'ivy', 'ivy-Fresh-Password-7');
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.pass('the new password signs in, straight to the files (it no longer counts as expired)');
});

t.test('files: new folder, upload, list, download, rename, delete', async (t) => {
  const home = await h.f.addUser('bob');
  const { page } = await signedIn(t, 'bob');

  // new folder, then into it
  await page.getByRole('button', { name: strings.newFolder }).click();
  await page.getByLabel(strings.newFolderName).fill('Reports');
  await page.getByRole('button', { name: strings.create }).click();
  await row(page, 'Reports').waitFor();
  t.ok(existsSync(path.join(home, 'Reports')), 'the folder exists on disk');
  await row(page, 'Reports').getByRole('button', { name: 'Reports', exact: true }).click();
  await page.getByRole('heading', { name: 'Reports' }).waitFor();
  t.match(page.url(), /\/web\/client\/files\/Reports$/, 'the URL follows the folder');

  // upload two files by the button
  const big = Buffer.alloc(3 * 1024 * 1024, 7);
  await page.getByLabel(strings.upload).setInputFiles([
    { name: 'q1.txt', mimeType: 'text/plain', buffer: Buffer.from('first quarter\n') },
    { name: 'data.bin', mimeType: 'application/octet-stream', buffer: big },
  ]);
  await row(page, 'q1.txt').waitFor();
  await row(page, 'data.bin').waitFor();
  await page.locator('.upload.done').nth(1).waitFor();
  t.equal(readFileSync(path.join(home, 'Reports', 'q1.txt'), 'utf8'), 'first quarter\n', 'uploaded as sent');
  t.same(readFileSync(path.join(home, 'Reports', 'data.bin')), big);
  t.equal(
    await page.getByRole('progressbar', { name: strings.uploadProgress('data.bin') }).getAttribute('value'),
    String(big.length),
    'per-file progress at 100%',
  );
  t.match(await row(page, 'data.bin').getByRole('cell').nth(1).textContent(), /^3 MB$/, 'size in the locale');
  await checkA11y(t, page, 'files page');
  await screenshot(page, 'files');
  const cutOnDesktop = await page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('.scroller .col-modified, .scroller .col-size'))
      .filter((el) => el.scrollWidth > el.clientWidth)
      .map((el) => el.textContent),
  );
  t.same(cutOnDesktop, [], 'sizes and dates are shown whole on a desktop');

  // download
  const [download] = await Promise.all([page.waitForEvent('download'), row(page, 'q1.txt').getByRole('link').click()]);
  t.equal(download.suggestedFilename(), 'q1.txt');
  const saved = await download.path();
  t.equal(readFileSync(saved, 'utf8'), 'first quarter\n', 'downloaded as stored');

  // rename
  await row(page, 'q1.txt')
    .getByRole('button', { name: `${strings.rename} q1.txt` })
    .click();
  await page.getByLabel(strings.renameTo('q1.txt')).fill('Q1 report.txt');
  await page.getByRole('button', { name: strings.save }).click();
  await row(page, 'Q1 report.txt').waitFor();
  t.ok(existsSync(path.join(home, 'Reports', 'Q1 report.txt')));
  t.notOk(existsSync(path.join(home, 'Reports', 'q1.txt')), 'renamed on disk');

  // delete, with a confirmation: cancel first, then confirm
  await row(page, 'data.bin')
    .getByRole('button', { name: `${strings.delete} data.bin` })
    .click();
  await page.getByText(strings.confirmDelete('data.bin')).waitFor();
  await page.getByRole('button', { name: strings.cancel }).click();
  t.ok(existsSync(path.join(home, 'Reports', 'data.bin')), 'cancel deletes nothing');
  await row(page, 'data.bin')
    .getByRole('button', { name: `${strings.delete} data.bin` })
    .click();
  await page.getByRole('dialog').getByRole('button', { name: strings.delete }).click();
  await row(page, 'data.bin').waitFor({ state: 'detached' });
  t.notOk(existsSync(path.join(home, 'Reports', 'data.bin')), 'deleted on disk');

  // breadcrumbs back home; sort and filter
  await page.getByRole('navigation', { name: strings.breadcrumbs }).getByRole('link', { name: strings.home }).click();
  await page.getByRole('heading', { name: strings.home }).waitFor();
  await row(page, 'Reports').waitFor();
  await page.goBack();
  await page.getByRole('heading', { name: 'Reports' }).waitFor();
  t.pass('the browser history moves between folders');
});

t.test('the file list by keyboard: arrows, Page and Home/End, Enter opens, Backspace and Alt+Up go up, Delete asks, the focus shown', async (t) => {
  const home = await h.f.addUser('kim');
  mkdirSync(path.join(home, 'Alpha'), { recursive: true });
  writeFileSync(path.join(home, 'Alpha', 'inner.txt'), 'inner\n');
  // more rows than the page draws: End reaches a row that is not drawn yet
  for (let i = 0; i < 60; i++) writeFileSync(path.join(home, `f${String(i).padStart(2, '0')}.txt`), `${i}\n`);
  const { page } = await signedIn(t, 'kim');
  const focused = () => page.evaluate(() => document.activeElement?.textContent ?? '');
  /** Waits for the focus on the row of `name` (a row out of view is drawn after the scroll, then focused). */
  const focusOn = async (name: string, what: string) => {
    const ok = await page
      .waitForFunction((name) => document.activeElement?.textContent === name, name, { timeout: 5000 })
      .then(
        () => true,
        () => false,
      );
    t.ok(ok, what, { focused: ok ? name : await focused() });
  };

  await row(page, 'Alpha').getByRole('button', { name: 'Alpha', exact: true }).focus();
  await page.keyboard.press('ArrowDown');
  await focusOn('f00.txt', 'ArrowDown: the next row');
  t.ok(await page.evaluate(() => document.activeElement?.matches(':focus-visible')), 'the focus is visible');
  t.not(await row(page, 'f00.txt').evaluate((r) => getComputedStyle(r).boxShadow), 'none', 'the row with the focus is marked');
  await screenshot(page, 'keyboard-focus');
  await page.keyboard.press('End');
  await focusOn('f59.txt', 'End: the last row, scrolled into view');
  const pageRows = await page.locator('.scroller').evaluate((el) => Math.floor(el.clientHeight / 48));
  await page.keyboard.press('PageUp');
  await focusOn(`f${String(59 - pageRows).padStart(2, '0')}.txt`, `Page Up: ${pageRows} rows up, a page`);
  await page.keyboard.press('Home');
  await focusOn('Alpha', 'Home: the first row, scrolled into view');
  await page.keyboard.press('ArrowUp');
  await focusOn('Alpha', 'ArrowUp on the first row stays there');

  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Delete');
  const dialog = page.getByRole('dialog');
  await dialog.getByText(strings.confirmDelete('f01.txt')).waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  t.ok(existsSync(path.join(home, 'f01.txt')), 'Escape: nothing deleted');
  await row(page, 'f01.txt').getByRole('link').focus();
  await page.keyboard.press('Delete');
  await dialog.getByRole('button', { name: strings.delete }).click();
  await row(page, 'f01.txt').waitFor({ state: 'detached' });
  t.notOk(existsSync(path.join(home, 'f01.txt')), 'Delete asked, then deleted the entry of the focused row');

  await row(page, 'Alpha').getByRole('button', { name: 'Alpha', exact: true }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Alpha' }).waitFor();
  await row(page, 'inner.txt').waitFor();
  t.pass('Enter opens the folder');
  await page.getByLabel(strings.filter).fill('in');
  await page.keyboard.press('Backspace');
  t.equal(await page.getByLabel(strings.filter).inputValue(), 'i', 'Backspace in the filter field edits it');
  t.match(page.url(), /\/files\/Alpha$/, 'and stays in the folder');
  await row(page, 'inner.txt').getByRole('link').focus();
  await page.keyboard.press('Backspace');
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.pass('Backspace goes up');
  await row(page, 'Alpha').getByRole('button', { name: 'Alpha', exact: true }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Alpha' }).waitFor();
  await page.keyboard.press('Alt+ArrowUp');
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.pass('Alt+Up goes up (with the focus on the heading after the navigation)');
});

t.test('a user without the upload permission: no upload button, and the server refuses the upload', async (t) => {
  const home = await h.f.addUser('rita', { permissions: { '/': ['list', 'download', 'create_dirs', 'rename', 'delete'] } });
  const { ctx, page } = await signedIn(t, 'rita');
  await page.getByRole('button', { name: strings.newFolder }).waitFor();
  t.equal(await page.getByLabel(strings.upload).count(), 0, 'the upload is not offered');
  const s = await (await ctx.request.get(`${h.f.origin}/api/v2/user/web-session`)).json();
  const r = await ctx.request.post(`${h.f.origin}/api/v2/user/files/upload?path=%2Fnope.txt`, {
    headers: { 'X-CSRF-Token': s.csrf_token, 'Content-Type': 'application/octet-stream' },
    data: Buffer.from('x'),
    failOnStatusCode: false,
  });
  t.equal(r.status(), 403);
  t.match(await r.json(), { message: /permission/, error: 'Forbidden' }, 'the server refuses it all the same');
  t.notOk(existsSync(path.join(home, 'nope.txt')), 'nothing written');
});

t.test('an upload cancelled while it is sent: said so, nothing kept, the others go on', async (t) => {
  const home = await h.f.addUser('carl');
  const { page } = await signedIn(t, 'carl');
  // the upload of held.bin is held in the browser (never answered) until it is cancelled
  let held!: () => void;
  const reached = new Promise<void>((resolve) => (held = resolve));
  await page.route(/\/api\/v2\/user\/files\/upload\?path=%2Fheld\.bin$/, () => held());
  await page.getByLabel(strings.upload).setInputFiles([
    { name: 'held.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(1024, 1) },
    { name: 'free.txt', mimeType: 'text/plain', buffer: Buffer.from('free') },
  ]);
  await reached;
  await row(page, 'free.txt').waitFor();
  await page.getByRole('button', { name: strings.cancelUpload('held.bin') }).click();
  await page.locator('.upload.cancelled').filter({ hasText: 'held.bin' }).getByText(strings.uploadCancelled).waitFor();
  t.pass('the cancelled upload says so');
  t.notOk(existsSync(path.join(home, 'held.bin')), 'nothing of it on the server');
  t.equal(readFileSync(path.join(home, 'free.txt'), 'utf8'), 'free', 'the other file was uploaded');
});

t.test('a folder of 10,000 entries: virtualized rows, filter, sort; the phone width; dark mode', async (t) => {
  const home = await h.f.addUser('vera');
  mkdirSync(path.join(home, 'many'), { recursive: true });
  for (let i = 0; i < 10_000; i++) writeFileSync(path.join(home, 'many', `file-${String(i).padStart(5, '0')}.txt`), '');
  const { page } = await signedIn(t, 'vera', { width: 375, height: 740, colorScheme: 'dark', locale: 'de-DE' });
  await page.goto(`${h.f.url}files/many`);
  await page
    .getByRole('status')
    .filter({ hasText: strings.entries(10_000, 10_000) })
    .waitFor();
  const rendered = await page.locator('.scroller [role=row]').count();
  t.ok(rendered > 5 && rendered < 100, `only the rows in view are in the page (${rendered})`);
  t.equal(await page.getByRole('table').getAttribute('aria-rowcount'), '10001');

  await page.locator('.scroller').evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await row(page, 'file-09999.txt').waitFor();
  t.pass('scrolling to the end shows the last entry');

  await page.getByRole('button', { name: strings.sortBy(strings.name, 'descending') }).click();
  await page.locator('.scroller').evaluate((el) => el.scrollTo(0, 0));
  // the list re-renders after the scroll event: wait until its first row is the last name
  const firstName = () => document.querySelector('.scroller [role=row] [role=cell]')?.textContent;
  await page.waitForFunction((want) => document.querySelector('.scroller [role=row] [role=cell]')?.textContent === want, 'file-09999.txt');
  t.equal(await page.evaluate(firstName), 'file-09999.txt', 'sorted by name, descending');

  await page.getByLabel(strings.filter).fill('file-0123');
  await page
    .getByRole('status')
    .filter({ hasText: strings.entries(10, 10_000) })
    .waitFor();
  t.equal(await page.locator('.scroller [role=row]').count(), 10, 'the filter narrows the list');

  const cut = await page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('.scroller .col-modified, .scroller .col-size'))
      .filter((el) => el.scrollWidth > el.clientWidth)
      .map((el) => el.textContent),
  );
  t.same(cut, [], 'sizes and dates are shown whole at 375 px (not cut off)');
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  t.ok(width <= 375, `no horizontal scrolling at 375 px (${width})`);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  t.equal(bg, 'rgb(15, 18, 22)', 'the dark palette follows prefers-color-scheme');
  await checkA11y(t, page, 'files page (phone, dark)');
  await screenshot(page, 'files-phone-dark');
});
