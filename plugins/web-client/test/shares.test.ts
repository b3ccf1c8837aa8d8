/**
 * The Shares screen in Debian's chromium against a real Ferry: a share made
 * from a selection of the file browser (with password, expiry, uses and an
 * allowed network), an API validation message shown next to its field, the
 * list, copy link, QR code, edit, delete (each checked through the REST
 * API), the share policy of the account (password required; scopes locked
 * by the share policy rules of a group; sharing disabled: no Shares screen,
 * and the server refuses), a write share made here then opened in a second
 * browser context by an outside person who uploads into it, axe-core and
 * screenshots (FERRY_SCREENSHOT_DIR).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { en as strings } from '../app/src/strings.js';
import { qrPath } from '../app/src/qr.js';
import { REDACTED_PASSWORD, endOfDay, localDay, shareLink } from '../app/src/shareForm.js';
import { passwordOf } from './helpers.js';
import { checkA11y, harness, row, screenshot, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t);
});

const DAY = 86_400_000;
interface StoredShare {
  id: string;
  name: string;
  description: string;
  scope: number;
  paths: string[];
  password: string;
  expires_at: number;
  max_tokens: number;
  allow_from: string[];
  emails: string[];
}

/** The user's shares, read through the REST API with a token of the user (not the browser's session). */
async function sharesOf(username: string): Promise<StoredShare[]> {
  const token = await h.f.ta.userToken(username, passwordOf(username));
  const r = await h.f.ta.inject('GET', '/api/v2/user/shares', { token });
  if (r.statusCode !== 200) throw new Error(r.payload);
  return JSON.parse(r.payload) as StoredShare[];
}

t.test('a share from a selection: created with password, expiry, uses and network; listed, copied, QR, edited, deleted', async (t) => {
  const home = await h.f.addUser('alice');
  mkdirSync(path.join(home, 'docs'), { recursive: true });
  writeFileSync(path.join(home, 'docs', 'report.txt'), 'the report');
  writeFileSync(path.join(home, 'notes.txt'), 'notes');
  const { ctx, page } = await h.signedIn(t, 'alice');
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.f.origin });

  const nav = page.getByRole('navigation', { name: strings.mainNav });
  t.equal(await nav.getByRole('link', { name: strings.filesTitle }).getAttribute('aria-current'), 'page', 'Files is the current screen');
  await nav.getByRole('link', { name: strings.sharesTitle }).waitFor();
  t.pass('the Shares screen is offered');

  // a selection in the file browser, then Share
  await row(page, 'docs').waitFor();
  t.equal(await page.getByRole('button', { name: strings.shareSelected(0) }).count(), 1, 'nothing selected: share the folder');
  await page.getByLabel(strings.select('docs')).check();
  await page.getByRole('button', { name: strings.shareSelected(1) }).click();
  await page.getByRole('heading', { name: strings.newShare }).waitFor();
  t.match(page.url(), /\/web\/client\/shares$/);
  t.equal(await page.getByLabel(strings.shareName).inputValue(), 'docs', 'named after the shared folder');
  t.equal(await page.getByLabel(strings.sharePaths).inputValue(), '/docs', 'the selection is the share');

  // a path that does not exist: the server's message next to the paths field
  await page.getByLabel(strings.sharePaths).fill('/docs\n/nope');
  await page.getByRole('button', { name: strings.createShare }).click();
  const pathsError = page.locator('#share-paths-error');
  await pathsError.waitFor();
  t.match(await pathsError.textContent(), /"paths": \/nope does not exist/, 'the API message, under its field');
  t.equal(await page.getByLabel(strings.sharePaths).getAttribute('aria-invalid'), 'true');
  t.equal(await page.evaluate(() => document.activeElement?.id), 'share-paths', 'the focus goes to the field');
  t.same(await sharesOf('alice'), [], 'nothing created');
  await page.getByLabel(strings.sharePaths).fill('/docs');
  t.equal(await pathsError.count(), 0, 'a corrected field loses its message');

  const lastDay = localDay(Date.now() + 5 * DAY);
  await page.getByLabel(strings.sharePaths).fill('/docs');
  await page.getByLabel(strings.shareDescription).fill('for the auditors');
  await page.getByLabel(strings.sharePassword, { exact: true }).fill('share-secret-1');
  await page.getByLabel(strings.shareExpires).fill(lastDay);
  await page.getByLabel(strings.shareMaxTokens).fill('3');
  await page.getByLabel(strings.shareAllowFrom).fill('127.0.0.0/8');
  await checkA11y(t, page, 'share form');
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'share-form');
  await page.getByRole('button', { name: strings.createShare }).click();
  await page
    .getByRole('status')
    .filter({ hasText: strings.shareCreated('docs') })
    .waitFor();

  const created = await sharesOf('alice');
  t.equal(created.length, 1, 'one share');
  let stored = created[0];
  t.match(stored, {
    name: 'docs',
    description: 'for the auditors',
    scope: 1,
    paths: ['/docs'],
    password: REDACTED_PASSWORD,
    expires_at: endOfDay(lastDay),
    max_tokens: 3,
    allow_from: ['127.0.0.0/8'],
    emails: [],
  });
  const id = stored!.id;
  const link = shareLink(h.f.origin, id);

  // the list
  const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'docs' }) });
  t.equal(await card.getByRole('textbox', { name: strings.linkOf('docs') }).inputValue(), link, 'the public link');
  t.match(await card.textContent(), strings.usesValue(0, 3));
  await checkA11y(t, page, 'shares list');
  await screenshot(page, 'shares');

  // copy link
  await card.getByRole('button', { name: strings.copyLinkOf('docs') }).click();
  await page.getByRole('status').filter({ hasText: strings.linkCopied }).waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), link, 'the link is in the clipboard');

  // QR code of the link
  const qrButton = card.getByRole('button', { name: strings.showQrOf('docs') });
  t.equal(await qrButton.getAttribute('aria-expanded'), 'false');
  await qrButton.click();
  const qr = card.getByRole('img', { name: strings.qrLabel('docs') });
  await qr.waitFor();
  t.equal(await qrButton.getAttribute('aria-expanded'), 'true');
  t.equal(await qr.locator('path').getAttribute('d'), qrPath(link).d, 'the QR code encodes the link');
  await screenshot(page, 'share-qr');

  // edit: another name and more uses; the password and the expiry are kept
  await card.getByRole('button', { name: strings.editNamed('docs') }).click();
  await page.getByRole('heading', { name: strings.editShare('docs') }).waitFor();
  t.equal(await page.getByLabel(strings.shareExpires).inputValue(), lastDay);
  t.equal(await page.getByLabel(strings.sharePassword, { exact: true }).inputValue(), '', 'the password is never shown');
  await page.getByLabel(strings.shareName).fill('docs for Ann');
  await page.getByLabel(strings.shareMaxTokens).fill('5');
  await page.getByRole('button', { name: strings.saveShare }).click();
  await page
    .getByRole('status')
    .filter({ hasText: strings.shareSaved('docs for Ann') })
    .waitFor();
  [stored] = await sharesOf('alice');
  t.match(stored, { id, name: 'docs for Ann', max_tokens: 5, password: REDACTED_PASSWORD, expires_at: endOfDay(lastDay), paths: ['/docs'] });

  // delete, after a confirmation (cancelled once)
  const renamed = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'docs for Ann' }) });
  await renamed.getByRole('button', { name: strings.deleteShare('docs for Ann') }).click();
  const dialog = page.getByRole('dialog', { name: strings.deleteShare('docs for Ann') });
  await dialog.getByRole('button', { name: strings.cancel }).click();
  await dialog.waitFor({ state: 'detached' });
  t.equal((await sharesOf('alice')).length, 1, 'cancelled: kept');
  await renamed.getByRole('button', { name: strings.deleteShare('docs for Ann') }).click();
  await dialog.getByRole('button', { name: strings.delete }).click();
  await page
    .getByRole('status')
    .filter({ hasText: strings.shareDeleted('docs for Ann') })
    .waitFor();
  t.same(await sharesOf('alice'), [], 'deleted on the server');
  await page.getByText(strings.noShares).waitFor();

  // a share of the current folder, from its toolbar, with a phone's width
  await page.getByRole('navigation', { name: strings.mainNav }).getByRole('link', { name: strings.filesTitle }).click();
  await page.getByRole('heading', { name: strings.home }).waitFor();
  await page.getByRole('button', { name: strings.shareSelected(0) }).click();
  t.equal(await page.getByLabel(strings.sharePaths).inputValue(), '/', 'the folder shown');
});

t.test('a write share made in the UI, opened in a second browser context by an outside person who uploads into it; the owner sees the file', async (t) => {
  const home = await h.f.addUser('olga');
  mkdirSync(path.join(home, 'inbox'), { recursive: true });
  const { page } = await h.signedIn(t, 'olga');
  await row(page, 'inbox').waitFor();
  await page.getByLabel(strings.select('inbox')).check();
  await page.getByRole('button', { name: strings.shareSelected(1) }).click();
  await page.getByRole('heading', { name: strings.newShare }).waitFor();
  await page.getByLabel(strings.scopeLabel(3)).check();
  await page.getByLabel(strings.sharePassword, { exact: true }).fill('drop-box-secret-1');
  await page.getByRole('button', { name: strings.createShare }).click();
  await page
    .getByRole('status')
    .filter({ hasText: strings.shareCreated('inbox') })
    .waitFor();
  const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'inbox' }) });
  const link = await card.getByRole('textbox', { name: strings.linkOf('inbox') }).inputValue();
  const [stored] = await sharesOf('olga');
  t.match(stored, { scope: 3, paths: ['/inbox'] }, 'a read and write share of the folder');

  // the outside person: another browser context (no session of olga), the link alone
  const partner = await h.openPage(t);
  await partner.page.goto(link);
  await partner.page.getByRole('heading', { name: strings.pubPasswordTitle }).waitFor();
  await partner.page.getByLabel(strings.password).fill('drop-box-secret-1');
  await partner.page.getByRole('button', { name: strings.pubOpen }).click();
  await partner.page.getByRole('heading', { name: 'inbox' }).waitFor();
  const content = Buffer.from('sent by the partner');
  await partner.page.getByLabel(strings.pubChooseFiles).setInputFiles([{ name: 'from-partner.txt', mimeType: 'text/plain', buffer: content }]);
  await partner.page.locator('.upload.done').filter({ hasText: 'from-partner.txt' }).waitFor();
  t.ok(readFileSync(path.join(home, 'inbox', 'from-partner.txt')).equals(content), 'the upload is in the shared folder, whole');
  t.equal(
    (await partner.ctx.request.get(`${h.f.origin}/api/v2/user/dirs`, { failOnStatusCode: false })).status(),
    401,
    "the partner's browser has no session of the owner",
  );

  // the owner, in the first context, finds it in the folder
  await page.getByRole('navigation', { name: strings.mainNav }).getByRole('link', { name: strings.filesTitle }).click();
  await row(page, 'inbox').getByRole('button', { name: 'inbox', exact: true }).click();
  await page.getByRole('heading', { name: 'inbox' }).waitFor();
  await row(page, 'from-partner.txt').waitFor();
  t.pass("the owner's file list shows the partner's upload");
});

t.test('the share policy: a password required (told, checked before sending)', async (t) => {
  const home = await h.f.addUser('pia', { filters: { web_client: ['shares-without-password-disabled'], max_shares_expiration: 7 } });
  mkdirSync(path.join(home, 'out'), { recursive: true });
  const { page } = await h.signedIn(t, 'pia', { width: 375, height: 800 });
  await row(page, 'out').waitFor();
  await page.getByLabel(strings.select('out')).check();
  await page.getByRole('button', { name: strings.shareSelected(1) }).click();
  await page.getByRole('heading', { name: strings.newShare }).waitFor();
  t.match(await page.locator('#share-password-help').textContent(), strings.sharePasswordHelpRequired);
  t.equal(await page.getByLabel(strings.shareExpires).getAttribute('max'), localDay(Date.now() + 7 * DAY), 'the last day allowed');
  await page.getByLabel(strings.shareExpires).fill('');
  await page.getByRole('button', { name: strings.createShare }).click();
  t.equal(await page.locator('#share-password-error').textContent(), strings.passwordRequired);
  t.equal(await page.locator('#share-expires_at-error').textContent(), strings.expiryRequired(7));
  await checkA11y(t, page, 'share form with errors, phone width');
  await page.locator('#share-password').scrollIntoViewIfNeeded();
  await screenshot(page, 'share-form-errors');
  t.same(await sharesOf('pia'), [], 'nothing sent');

  await page.getByLabel(strings.sharePassword, { exact: true }).fill('pia-share-1');
  await page.getByLabel(strings.shareExpires).fill(localDay(Date.now() + 2 * DAY));
  await page.getByRole('button', { name: strings.createShare }).click();
  await page
    .getByRole('status')
    .filter({ hasText: strings.shareCreated('out') })
    .waitFor();
  t.match(await sharesOf('pia'), [{ name: 'out', paths: ['/out'], password: REDACTED_PASSWORD }]);
  await screenshot(page, 'shares-phone');
});

t.test('share policy rules of a group, locked: the scope they allow preselected and alone offered; the server still refuses', async (t) => {
  const rules = (inbox: string[]) => ({
    web_client: ['share_policy_change_disabled'],
    default_shares_policies: [
      { path: '/', permissions: ['read'] },
      { path: '/inbox', permissions: inbox },
    ],
  });
  let r = await h.f.ta.inject('POST', '/api/v2/groups', { token: h.f.token, payload: { name: 'drop-boxes', user_settings: { filters: rules(['upload']) } } });
  t.equal(r.statusCode, 201, r.payload);
  const home = await h.f.addUser('lena', { groups: [{ name: 'drop-boxes', type: 3 }] });
  mkdirSync(path.join(home, 'inbox'), { recursive: true });
  mkdirSync(path.join(home, 'reports'), { recursive: true });
  const { page } = await h.signedIn(t, 'lena');
  const scope = (sc: 1 | 2 | 3) => page.getByRole('radio', { name: strings.scopeLabel(sc), exact: true });
  const offered = async () => {
    const out: number[] = [];
    for (const sc of [1, 2, 3] as const) if (await scope(sc).isEnabled()) out.push(sc);
    return out;
  };

  // the inbox: upload only
  await row(page, 'inbox').waitFor();
  await page.getByLabel(strings.select('inbox')).check();
  await page.getByRole('button', { name: strings.shareSelected(1) }).click();
  await page.getByRole('heading', { name: strings.newShare }).waitFor();
  t.ok(await scope(2).isChecked(), 'upload preselected');
  t.same(await offered(), [2], 'only upload offered');
  t.equal(await page.locator('#share-scope-help').textContent(), `${strings.scopeLockedHelp([strings.scopeLabel(2)])} ${strings.scopeHelp}`, 'told why');
  await checkA11y(t, page, 'share form with a locked scope');
  await page.locator('fieldset.scope').scrollIntoViewIfNeeded();
  await screenshot(page, 'share-form-policy');
  await page.getByRole('button', { name: strings.createShare }).click();
  await page
    .getByRole('status')
    .filter({ hasText: strings.shareCreated('inbox') })
    .waitFor();
  t.match(await sharesOf('lena'), [{ name: 'inbox', scope: 2, paths: ['/inbox'] }]);

  // another folder: download only; typing the inbox's path moves the scope to upload
  await page.getByRole('navigation', { name: strings.mainNav }).getByRole('link', { name: strings.filesTitle }).click();
  await row(page, 'reports').waitFor();
  await page.getByLabel(strings.select('reports')).check();
  await page.getByRole('button', { name: strings.shareSelected(1) }).click();
  await page.getByRole('heading', { name: strings.newShare }).waitFor();
  t.ok(await scope(1).isChecked(), 'download preselected');
  t.same(await offered(), [1], 'only download offered');
  await page.getByLabel(strings.sharePaths).fill('/inbox');
  t.ok(await scope(2).isChecked(), 'the paths changed, the scope follows');
  t.same(await offered(), [2]);
  await page.getByLabel(strings.sharePaths).fill('/reports');
  t.ok(await scope(1).isChecked());

  // the policy changes while the form is open: the server refuses, its message under the scope
  r = await h.f.ta.inject('PUT', '/api/v2/groups/drop-boxes', {
    token: h.f.token,
    payload: { name: 'drop-boxes', user_settings: { filters: { ...rules(['upload']), default_shares_policies: [{ path: '/', permissions: ['upload'] }] } } },
  });
  t.equal(r.statusCode, 200, r.payload);
  await page.getByRole('button', { name: strings.createShare }).click();
  const scopeError = page.locator('#share-scope-error');
  await scopeError.waitFor();
  t.match(await scopeError.textContent(), /^"scope": a read share of \/reports goes beyond the share policy of "\/" \(permissions: upload; allows write\)$/);
  t.equal(await page.locator('#share-form-title').isVisible(), true, 'the form stays open');
  t.equal((await sharesOf('lena')).length, 1, 'nothing more created');
});

t.test('sharing disabled: no Shares screen nor Share button, and the server refuses a share', async (t) => {
  const home = await h.f.addUser('carl', { filters: { web_client: ['shares-disabled'] } });
  mkdirSync(path.join(home, 'private'), { recursive: true });
  const { page } = await h.signedIn(t, 'carl');
  // the Shares URL waits for the account's share policy, then shows the files: the policy is known from there on
  await page.goto(`${h.f.url}shares`);
  await row(page, 'private').waitFor();
  t.equal(await page.getByRole('heading', { name: strings.sharesTitle }).count(), 0, 'the Shares URL shows the files');
  const nav = page.getByRole('navigation', { name: strings.mainNav });
  await nav.getByRole('link', { name: strings.filesTitle }).waitFor();
  t.equal(await nav.getByRole('link', { name: strings.sharesTitle }).count(), 0, 'no Shares in the navigation');
  t.equal(await page.getByRole('button', { name: strings.shareSelected(0) }).count(), 0, 'no Share button');
  t.equal(await page.getByRole('checkbox', { name: strings.select('private') }).count(), 1, 'the list is there (with its selection)');

  // the UI is not the guard: the session itself (cookie and CSRF token) is refused
  const refused = await page.evaluate(async () => {
    const s = (await (await fetch('/api/v2/user/web-session')).json()) as { csrf_token: string };
    const r = await fetch('/api/v2/user/shares', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf_token },
      body: JSON.stringify({ name: 'x', scope: 1, paths: ['/private'] }),
    });
    return { status: r.status, body: (await r.json()) as { message: string } };
  });
  t.equal(refused.status, 403);
  t.match(refused.body.message, /sharing is disabled/);
  const token = await h.f.ta.userToken('carl', passwordOf('carl'));
  const r = await h.f.ta.inject('POST', '/api/v2/user/shares', { token, payload: { name: 'x', scope: 1, paths: ['/private'] } });
  t.equal(r.statusCode, 403, 'and with a token');
});
