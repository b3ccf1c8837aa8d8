/**
 * The public share page of a share restricted to email addresses, in
 * chromium, against a real Ferry and a real SMTP server: the address form,
 * the same answer for an address that is not allowed (no mail sent), a code
 * received by mail, a wrong code refused, the right one opening the share;
 * a share with a password and addresses offers both ways; a share restricted
 * to an address made through the form of the signed-in owner, opened by a
 * mailed code in another browser context. axe-core and screenshots.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { en as strings } from '../app/src/strings.js';
import { launchBrowser, newContext } from './browser.js';
import { passwordOf, startFerry } from './helpers.js';
import { smtpConfig, startSmtp } from './mail.js';
import { checkA11y, row, screenshot, signIn } from './page.js';

const smtp = await startSmtp(t);
const f = await startFerry(t, { config: { smtp: smtpConfig(smtp) } });
const browser = await launchBrowser(t);
const home = await f.addUser('sender');
mkdirSync(path.join(home, 'partners'), { recursive: true });
writeFileSync(path.join(home, 'partners', 'contract.txt'), 'the contract');
const token = await f.ta.userToken('sender', passwordOf('sender'));

async function share(payload: Record<string, unknown>): Promise<string> {
  const r = await f.ta.inject('POST', '/api/v2/user/shares', { token, payload });
  if (r.statusCode !== 201) throw new Error(`add share: ${r.statusCode} ${r.payload}`);
  return String(r.headers['x-object-id']);
}
async function stranger(t: Test) {
  const ctx = await newContext(browser);
  t.teardown(() => ctx.close());
  return ctx.newPage();
}
const codeOf = (text: string | undefined) => /Code: ([A-Z0-9]+)/.exec(text ?? '')?.[1] ?? '';

t.test('email codes: an address not allowed gets the same answer and no mail; a mailed code opens the share', async (t) => {
  const id = await share({ name: 'For partners', scope: 1, paths: ['/partners'], emails: ['ext@example.com'] });
  const page = await stranger(t);
  await page.goto(`${f.origin}/web/client/pub/${id}`);
  await page.getByRole('heading', { name: strings.pubPasswordTitle }).waitFor();
  t.ok(await page.getByText(strings.pubEmailHelp).isVisible(), 'asked for an address');
  await checkA11y(t, page, 'share email form');
  await screenshot(page, 'share-email');

  const before = smtp.mails.length;
  await page.getByLabel(strings.pubEmail).fill('stranger@example.com');
  await page.getByRole('button', { name: strings.pubSendCode }).click();
  await page.getByText(strings.pubCodeHelp('stranger@example.com')).waitFor();
  t.pass('the same answer for an address that is not allowed');
  await page.getByLabel(strings.pubCode).fill('ABCDEFGHJKLM');
  await page.getByRole('button', { name: strings.pubOpen }).click();
  await page.getByRole('alert').filter({ hasText: strings.pubWrongCode }).waitFor();
  t.pass('no code opens it for that address');

  await page.getByRole('button', { name: strings.pubOtherAddress }).click();
  await page.getByLabel(strings.pubEmail).fill('ext@example.com');
  await page.getByRole('button', { name: strings.pubSendCode }).click();
  await page.getByText(strings.pubCodeHelp('ext@example.com')).waitFor();
  const mail = await smtp.waitFor('ext@example.com', before);
  const code = codeOf(mail.parsed.text);
  t.match(code, /^[A-Z0-9]{6,}$/, 'a code arrived by mail');
  t.notOk(
    smtp.mails.slice(before).some((m) => m.rcptTo.includes('stranger@example.com')),
    'no mail to the address that is not allowed',
  );
  await checkA11y(t, page, 'share code form');
  await screenshot(page, 'share-code');

  const wrong = code.startsWith('A') ? `B${code.slice(1)}` : `A${code.slice(1)}`;
  await page.getByLabel(strings.pubCode).fill(wrong);
  await page.getByRole('button', { name: strings.pubOpen }).click();
  await page.getByRole('alert').filter({ hasText: strings.pubWrongCode }).waitFor();
  t.pass('a wrong code is refused');
  // a wrong code does not spend the right one
  await page.getByLabel(strings.pubCode).fill(code);
  await page.getByRole('button', { name: strings.pubOpen }).click();
  await page.getByRole('heading', { name: 'For partners' }).waitFor();
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: `${strings.download} contract.txt` }).click()]);
  t.equal(readFileSync((await file.path())!, 'utf8'), 'the contract', 'the share opened and a file downloaded');
});

t.test('a share with a password and addresses: both ways offered', async (t) => {
  const id = await share({ name: 'Both', scope: 1, paths: ['/partners'], password: 'both-ways-1', emails: ['ext@example.com'] });
  const page = await stranger(t);
  await page.goto(`${f.origin}/web/client/pub/${id}`);
  await page.getByLabel(strings.password).waitFor();
  await page.getByRole('button', { name: strings.pubSendCode }).click();
  const before = smtp.mails.length;
  await page.getByLabel(strings.pubEmail).fill('ext@example.com');
  await page.getByRole('button', { name: strings.pubSendCode }).click();
  const code = codeOf((await smtp.waitFor('ext@example.com', before)).parsed.text);
  await page.getByLabel(strings.pubCode).fill(code);
  await page.getByRole('button', { name: strings.pubOpen }).click();
  await page.getByRole('heading', { name: 'Both' }).waitFor();
  t.pass('opened by a mailed code instead of the password');
});

t.test('a share restricted to an address, made through the form by the owner; the partner opens it with a mailed code', async (t) => {
  const ctx = await newContext(browser);
  t.teardown(() => ctx.close());
  const page = await ctx.newPage();
  await signIn(page, f, 'sender');
  await row(page, 'partners').waitFor();
  await page.getByLabel(strings.select('partners')).check();
  await page.getByRole('button', { name: strings.shareSelected(1) }).click();
  await page.getByRole('heading', { name: strings.newShare }).waitFor();
  await page.getByLabel(strings.shareName).fill('Partners by mail');
  await page.getByLabel(strings.shareEmails).fill('partner@example.com\n');
  await page.getByRole('button', { name: strings.createShare }).click();
  await page
    .getByRole('status')
    .filter({ hasText: strings.shareCreated('Partners by mail') })
    .waitFor();
  const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Partners by mail' }) });
  t.match(await card.textContent(), 'partner@example.com', 'the card names the address');
  const link = await card.getByRole('textbox', { name: strings.linkOf('Partners by mail') }).inputValue();

  const partner = await stranger(t);
  await partner.goto(link);
  await partner.getByText(strings.pubEmailHelp).waitFor();
  t.equal(await partner.getByLabel(strings.password).count(), 0, 'no password asked: the share has none');
  const before = smtp.mails.length;
  await partner.getByLabel(strings.pubEmail).fill('partner@example.com');
  await partner.getByRole('button', { name: strings.pubSendCode }).click();
  const code = codeOf((await smtp.waitFor('partner@example.com', before)).parsed.text);
  t.match(code, /^[A-Z0-9]{6,}$/, 'a code arrived by mail');
  await partner.getByLabel(strings.pubCode).fill(code);
  await partner.getByRole('button', { name: strings.pubOpen }).click();
  await partner.getByRole('heading', { name: 'Partners by mail' }).waitFor();
  const [file] = await Promise.all([partner.waitForEvent('download'), partner.getByRole('link', { name: `${strings.download} contract.txt` }).click()]);
  t.equal(readFileSync((await file.path())!, 'utf8'), 'the contract', 'the partner downloaded the shared file');
});
