/**
 * The web admin's sign-in extras in Debian's chromium against a real Ferry:
 * "forgot password" with the code mailed to the admin's address (a real SMTP
 * receiver), then a sign-in with the new password; single sign-on through a
 * real OpenID provider, back on the console with an admin session of the
 * provider's admin, limited to that admin's permissions; a provider account
 * that is a user, not an admin, refused.
 */
import t from 'tap';
import { en as strings } from '../app/src/strings.js';
import { en as admin } from '../app/src/admin/strings.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';
import { restAs, signInAdmin } from './admin-helpers.js';
import { smtpConfig, startSmtp } from './mail.js';
import { ferryWithOidc, signInAtProvider } from './oidc.js';

const smtp = await startSmtp(t);
let h: Harness;
t.before(async () => {
  h = await harness(t, { config: { smtp: smtpConfig(smtp) } });
});

t.test("forgot password: the code mailed to the admin's address, the reset, a sign-in with the new password", async (t) => {
  const first = 'Ada-first-Pass-1';
  const reset = 'Ada-reset-Pass-2';
  const made = await restAs(h.f, 'POST', '/api/v2/admins', { username: 'ada', password: first, email: 'ada@example.com', permissions: ['view_status'] });
  t.equal(made.status, 201, made.raw);
  const { page } = await h.openPage(t);
  await page.goto(`${h.f.origin}/web/admin/`);
  await page.getByRole('heading', { name: admin.loginTitle }).waitFor();
  await page.getByRole('button', { name: strings.forgotPassword }).click();
  await page.getByRole('heading', { name: strings.forgotTitle }).waitFor();
  await page.getByLabel(strings.username).fill('ada');
  const before = smtp.mails.length;
  await page.getByRole('button', { name: strings.sendCode }).click();
  await page.getByLabel(strings.resetCode).waitFor();
  const mail = await smtp.waitFor('ada@example.com', before);
  const code = /Code: ([A-Z0-9]+)/.exec(mail.parsed.text ?? '')?.[1] ?? '';
  t.match(code, /^[2-9A-Z]{12}$/, "a code arrived at the admin's address");
  await checkA11y(t, page, 'admin password reset');
  await screenshot(page, 'admin-reset-password');

  // a wrong code is refused with the API's reason, the right one sets the password
  await page.getByLabel(strings.resetCode).fill('AAAAAAAAAAAA');
  await page.getByLabel(strings.newPassword, { exact: true }).fill(reset);
  await page.getByLabel(strings.confirmPassword).fill(reset);
  await page.getByRole('button', { name: strings.resetPassword }).click();
  await page.getByRole('alert').waitFor();
  t.equal(
    (await h.f.ta.inject('POST', '/api/v2/admin/web-session', { payload: { username: 'ada', password: first } })).statusCode,
    200,
    'a wrong code changes nothing',
  );
  await page.getByLabel(strings.resetCode).fill(code);
  await page.getByLabel(strings.newPassword, { exact: true }).fill(reset);
  await page.getByLabel(strings.confirmPassword).fill(reset);
  await page.getByRole('button', { name: strings.resetPassword }).click();
  await page.getByRole('status').filter({ hasText: strings.passwordReset }).waitFor();
  t.equal(
    (await h.f.ta.inject('POST', '/api/v2/admin/web-session', { payload: { username: 'ada', password: first } })).statusCode,
    401,
    'the old password is gone',
  );
  await signInAdmin(page, h.f, 'ada', reset);
  await page.getByRole('heading', { name: admin.dashboard, level: 1 }).waitFor();
  t.pass('the new password signs in from the page');
});

t.test('single sign-on: the button on the admin sign-in page, the provider, back on the console as that admin', async (t) => {
  const { f, issuer, base } = await ferryWithOidc(t, { ivo: { role: 'admin' }, uma: { role: 'user' } });
  t.equal(
    (await restAs(f, 'POST', '/api/v2/admins', { username: 'ivo', password: 'Ivo-unused-Pass-1', permissions: ['view_status', 'view_users'] })).status,
    201,
  );
  await f.addUser('uma');
  const { page } = await h.openPage(t);
  await page.goto(`${base}/web/admin/`);
  const button = page.getByRole('link', { name: strings.signInOidc });
  await button.waitFor();
  t.equal(await page.getByRole('button', { name: strings.forgotPassword }).count(), 0, 'no "forgot password" without a mail server');
  await checkA11y(t, page, 'admin sign-in page with single sign-on');
  await screenshot(page, 'admin-login-sso');
  await button.click();
  await signInAtProvider(page, issuer, 'ivo');
  await page.getByRole('heading', { name: admin.dashboard, level: 1 }).waitFor();
  t.match(page.url(), new RegExp(`^${base}/web/admin/`), 'back on the web admin');
  const session = await page.evaluate(async () => (await fetch('/api/v2/admin/web-session')).json());
  t.match(session, { username: 'ivo', permissions: ['view_status', 'view_users'] }, "the session is the provider admin's");
  const nav = page.getByRole('navigation', { name: admin.mainNav });
  t.equal(await nav.getByRole('link', { name: admin.users }).count(), 1, 'the pages of its permissions are offered');
  t.equal(await nav.getByRole('link', { name: admin.admins }).count(), 0, 'and only those');

  await page.getByRole('button', { name: admin.logout }).click();
  await page.getByRole('heading', { name: admin.loginTitle }).waitFor();
  t.equal(await page.evaluate(async () => (await fetch('/api/v2/admin/web-session')).status), 401, 'signed out');

  // a provider account whose role is a user's gets no admin session (another browser: the provider remembers ivo in this one)
  const { page: other } = await h.openPage(t);
  await other.goto(`${base}/web/admin/`);
  await other.getByRole('link', { name: strings.signInOidc }).click();
  await signInAtProvider(other, issuer, 'uma');
  await other.getByRole('heading', { name: admin.loginTitle }).waitFor();
  const alert = other.getByRole('alert');
  await alert.waitFor();
  t.match(await alert.innerText(), /Single sign-on did not sign you in: .*"uma" a user, not an admin/, 'back on the sign-in page with the reason');
  t.equal(new URL(other.url()).hash, '', 'the reason is taken out of the address');
  t.equal(await other.evaluate(async () => (await fetch('/api/v2/admin/web-session')).status), 401, 'no admin session');
  await screenshot(other, 'admin-login-sso-refused');
});
