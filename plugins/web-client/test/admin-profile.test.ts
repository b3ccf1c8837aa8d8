/**
 * The web admin's Profile page (every admin, here one with the status
 * permission only) in chromium against a real Ferry: the details edited and
 * read back by REST, the password changed then used to sign in, two-factor
 * setup from the QR code's secret (a wrong code refused), the recovery codes
 * shown once and downloaded, a sign-in with the TOTP step, a recovery code
 * used, new codes (the old ones stop working), then 2FA turned off. axe-core
 * on the page and the setup, screenshots (FERRY_SCREENSHOT_DIR, e.g.
 * docs/images/web-admin for docs/web-admin.md).
 */
import { readFileSync } from 'node:fs';
import * as OTPAuth from 'otpauth';
import t from 'tap';
import type { Page } from 'playwright-core';
import { en as strings } from '../app/src/strings.js';
import { en as admin } from '../app/src/admin/strings.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';
import { openFromNav, restAs, signInAdmin } from './admin-helpers.js';

let h: Harness;
t.before(async () => {
  h = await harness(t);
});
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);
const section = (page: Page, title: string) => page.getByRole('region', { name: title });
/** The admin's profile as its own token reads it. */
async function profileOf(username: string, password: string) {
  const token = await h.f.ta.adminToken(username, password);
  return JSON.parse((await h.f.ta.inject('GET', '/api/v2/admin/profile', { token })).payload) as Record<string, any>;
}
const webLogin = (username: string, password: string, passcode?: string) =>
  h.f.ta.inject('POST', '/api/v2/admin/web-session', { payload: { username, password, ...(passcode ? { passcode } : {}) } });

t.test("the admin's profile: details, password, two-factor setup and sign-in, recovery codes, turned off", async (t) => {
  const first = 'Pat-first-Pass-1';
  const second = 'Pat-second-Pass-2';
  t.equal((await rest('POST', '/api/v2/admins', { username: 'pat', password: first, permissions: ['view_status'] })).status, 201);
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f, 'pat', first);
  await page.getByRole('heading', { name: admin.dashboard, level: 1 }).waitFor();
  await openFromNav(page, admin.profile);
  t.match(page.url(), /\/web\/admin\/profile$/, 'the profile has its URL');

  // details, read back by REST
  const details = section(page, admin.profileDetails);
  await details.getByLabel(admin.email).fill('pat@example.com');
  await details.getByLabel(admin.description).fill('on call on Mondays');
  await details.getByRole('checkbox', { name: admin.allowApiKeyAuth }).check();
  await details.getByRole('button', { name: admin.save }).click();
  await details.getByRole('status').filter({ hasText: admin.profileSaved }).waitFor();
  t.match(await profileOf('pat', first), {
    email: 'pat@example.com',
    description: 'on call on Mondays',
    allow_api_key_auth: true,
    two_factor: { enabled: false },
  });
  await checkA11y(t, page, 'admin profile page');
  await screenshot(page, 'admin-profile');

  // password: a wrong current one refused, then changed; the new one signs in
  const pw = section(page, admin.passwordSection);
  await pw.getByLabel(strings.currentPassword).fill('not-the-password');
  await pw.getByLabel(strings.newPassword, { exact: true }).fill(second);
  await pw.getByLabel(strings.confirmPassword).fill(second);
  await pw.getByRole('button', { name: strings.changePassword }).click();
  await pw.getByRole('alert').waitFor();
  t.equal((await webLogin('pat', first)).statusCode, 200, 'refused: the old password still works');
  await pw.getByLabel(strings.currentPassword).fill(first);
  await pw.getByLabel(strings.newPassword, { exact: true }).fill(second);
  await pw.getByLabel(strings.confirmPassword).fill(second);
  await pw.getByRole('button', { name: strings.changePassword }).click();
  await pw.getByRole('status').filter({ hasText: admin.passwordChanged }).waitFor();
  t.equal((await webLogin('pat', first)).statusCode, 401, 'the old password no longer signs in');
  await page.getByRole('button', { name: admin.logout }).click();
  await page.getByRole('heading', { name: admin.loginTitle }).waitFor(); // the sign-out has ended the session
  await signInAdmin(page, h.f, 'pat', second);
  await page.getByRole('heading', { name: admin.dashboard, level: 1 }).waitFor();
  t.pass('the new password signs in from the page');
  await openFromNav(page, admin.profile);

  // two-factor setup from the QR code's secret
  const tf = section(page, admin.twoFactorSection);
  await tf.getByText(strings.twoFactorOff).waitFor();
  await tf.getByRole('button', { name: strings.setUp2fa }).click();
  await tf.getByRole('button', { name: strings.continue }).click();
  await tf.getByRole('img', { name: strings.totpQrLabel }).waitFor();
  const secret = (await tf.getByTestId('totp-secret').textContent())!.trim();
  t.match(secret, /^[A-Z2-7]{16,}$/, 'the secret is shown as base32 text');
  t.equal(await tf.getByRole('checkbox').count(), 0, "no protocol choice: an admin's code is asked at its web and REST logins");
  await checkA11y(t, page, 'admin two-factor setup');
  await tf.scrollIntoViewIfNeeded();
  await screenshot(page, 'admin-2fa-setup');
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
  await tf.getByLabel(strings.checkCode).fill(String((Number(totp.generate()) + 1) % 1_000_000).padStart(6, '0'));
  await tf.getByRole('button', { name: strings.enable2fa }).click();
  await tf
    .getByRole('alert')
    .filter({ hasText: /does not match/ })
    .waitFor();
  t.notOk((await profileOf('pat', second)).two_factor.enabled, 'a wrong code enables nothing');
  await tf.getByLabel(strings.checkCode).fill(totp.generate());
  await tf.getByRole('button', { name: strings.enable2fa }).click();

  // the recovery codes, shown once and downloaded
  const codesList = tf.getByRole('list', { name: strings.recoveryList });
  await codesList.waitFor();
  const shown = (await codesList.getByRole('listitem').allTextContents()).map((c) => c.trim());
  t.equal(shown.length, 12, 'twelve recovery codes are shown');
  await checkA11y(t, page, 'admin recovery codes');
  await screenshot(page, 'admin-recovery-codes');
  const [download] = await Promise.all([page.waitForEvent('download'), tf.getByRole('link', { name: strings.downloadRecovery }).click()]);
  t.equal(download.suggestedFilename(), strings.recoveryFile);
  t.same(
    readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\n'),
    shown,
    'the downloaded file holds the codes shown',
  );
  await tf.getByRole('button', { name: strings.recoveryDone }).click();
  await tf.getByText(strings.twoFactorOn('Default', strings.protocolNames.HTTP!)).waitFor();
  t.equal(await codesList.count(), 0, 'the codes are no longer on the page');
  t.match((await webLogin('pat', second)).payload, /two_factor_required/, 'the password alone no longer signs in');

  // sign out, sign in with the TOTP step
  await page.getByRole('button', { name: admin.logout }).click();
  await page.getByRole('heading', { name: admin.loginTitle }).waitFor(); // the sign-out has ended the session
  await signInAdmin(page, h.f, 'pat', second);
  await page.getByRole('heading', { name: strings.passcodeTitle }).waitFor();
  await page.getByLabel(strings.passcode).fill(totp.generate());
  await page.getByRole('button', { name: strings.verify }).click();
  await page.getByRole('heading', { name: admin.dashboard, level: 1 }).waitFor();
  t.pass('the code from the app opens the console');
  t.equal((await webLogin('pat', second, shown[3])).statusCode, 200, 'a downloaded recovery code signs in');
  t.equal((await webLogin('pat', second, shown[3])).statusCode, 401, 'once');

  // new recovery codes: the old ones stop working
  await openFromNav(page, admin.profile);
  const tf2 = section(page, admin.twoFactorSection);
  await tf2.getByRole('button', { name: strings.regenerateRecovery }).click();
  await page.getByRole('dialog').getByRole('button', { name: strings.regenerateRecovery }).click();
  const freshItems = tf2.getByRole('list', { name: strings.recoveryList }).getByRole('listitem');
  await freshItems.first().waitFor();
  const fresh = (await freshItems.allTextContents()).map((c) => c.trim());
  t.equal(fresh.length, 12);
  t.same(
    fresh.filter((c) => shown.includes(c)),
    [],
    'all new codes',
  );
  await tf2.getByRole('button', { name: strings.recoveryDone }).click();
  t.equal((await webLogin('pat', second, shown[4])).statusCode, 401, 'an old recovery code no longer signs in');
  t.equal((await webLogin('pat', second, fresh[0])).statusCode, 200, 'a new one does');

  // turned off
  await tf2.getByRole('button', { name: strings.disable2fa }).click();
  await page.getByRole('dialog').getByRole('button', { name: strings.disable2fa }).click();
  await tf2.getByRole('status').filter({ hasText: strings.twoFactorDisabled }).waitFor();
  await tf2.getByRole('button', { name: strings.setUp2fa }).waitFor();
  t.notOk((await profileOf('pat', second)).two_factor.enabled, 'the server has 2FA off');
  t.equal((await webLogin('pat', second)).statusCode, 200, 'the password alone signs in again');
});
