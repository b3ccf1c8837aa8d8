/**
 * The profile screen and the sign-in extras in Debian's chromium against a
 * real Ferry on 127.0.0.1 (with an SMTP receiver for the password reset
 * mails): two-factor setup from the QR code's secret, recovery codes shown
 * and downloaded, a sign-in with the second factor, regeneration and turning
 * it off; a password change; SSH public keys added and removed; API key
 * login; the web client options that hide sections (and the server that
 * refuses them anyway); forgot/reset password with the mailed code. axe-core
 * on each page, screenshots (FERRY_SCREENSHOT_DIR).
 */
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as OTPAuth from 'otpauth';
import type { APIRequestContext, Page } from 'playwright-core';
import t from 'tap';
import { en as strings } from '../app/src/strings.js';
import { passwordOf } from './helpers.js';
import { checkA11y, harness, screenshot, signIn, type Harness } from './page.js';
import { smtpConfig, startSmtp } from './mail.js';
import { ferryWithOidc, signInAtProvider } from './oidc.js';

const smtp = await startSmtp(t);

let h: Harness;
t.before(async () => {
  h = await harness(t, { config: { smtp: smtpConfig(smtp) } });
});

/** Signed in as `username`, on the profile page (through the header's link). */
async function onProfile(t: Parameters<Harness['openPage']>[0], username: string) {
  const opened = await h.signedIn(t, username);
  await opened.page.getByRole('link', { name: strings.profile }).click();
  await opened.page.getByRole('heading', { name: strings.profileTitle, level: 1 }).waitFor();
  return opened;
}

/** The session's REST API as the page's cookie sees it: GET, and writes with the session's CSRF token. */
async function rest(request: APIRequestContext) {
  const base = h.f.origin;
  const session = await request.get(`${base}/api/v2/user/web-session`);
  const csrf = ((await session.json()) as { csrf_token: string }).csrf_token;
  const headers = { 'x-csrf-token': csrf };
  return {
    get: (path: string) => request.get(base + path, { failOnStatusCode: false }),
    post: (path: string, data?: unknown) => request.post(base + path, { headers, data: data ?? {}, failOnStatusCode: false }),
    put: (path: string, data: unknown) => request.put(base + path, { headers, data, failOnStatusCode: false }),
  };
}

type ProfileAnswer = {
  email: string;
  description: string;
  allow_api_key_auth: boolean;
  public_keys: string[];
  web_client: string[];
  two_factor: { enabled: boolean; config_name: string; protocols: string[] };
};
const profileOf = async (request: APIRequestContext) => (await (await rest(request)).get('/api/v2/user/profile')).json() as Promise<ProfileAnswer>;

/** A new ed25519 key's public half in OpenSSH format ("ssh-ed25519 <base64 of the wire blob> comment"). */
function sshEd25519(comment: string): string {
  const raw = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const str = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return Buffer.concat([len, b]);
  };
  return `ssh-ed25519 ${Buffer.concat([str(Buffer.from('ssh-ed25519')), str(raw)]).toString('base64')} ${comment}`;
}

const section = (page: Page, title: string) => page.getByRole('region', { name: title });

t.test('two-factor setup: QR code and secret, code check, recovery codes downloaded, then a sign-in with the second factor', async (t) => {
  await h.f.addUser('zoe');
  const { ctx, page } = await onProfile(t, 'zoe');
  t.match(page.url(), /\/web\/client\/profile$/, 'the profile has its URL');
  await checkA11y(t, page, 'profile page');
  await screenshot(page, 'profile');

  const tf = section(page, strings.twoFactorSection);
  await tf.getByText(strings.twoFactorOff).waitFor();
  await tf.getByRole('button', { name: strings.setUp2fa }).click();
  await tf.getByRole('button', { name: strings.continue }).click();
  await tf.getByRole('img', { name: strings.totpQrLabel }).waitFor();
  const secret = (await tf.getByTestId('totp-secret').textContent())!.trim();
  t.match(secret, /^[A-Z2-7]{16,}$/, 'the secret is shown as base32 text');
  t.ok(await tf.getByRole('checkbox', { name: strings.protocolNames.HTTP }).isChecked(), 'the web and REST API is chosen by default');
  t.notOk(await tf.getByRole('checkbox', { name: strings.protocolNames.FTP, exact: true }).isChecked());
  await tf.getByRole('checkbox', { name: strings.protocolNames.SSH }).check();
  await checkA11y(t, page, 'two-factor setup');
  await tf.scrollIntoViewIfNeeded();
  await screenshot(page, '2fa-setup');

  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
  const good = totp.generate();
  await tf.getByLabel(strings.checkCode).fill(String((Number(good) + 1) % 1_000_000).padStart(6, '0'));
  await tf.getByRole('button', { name: strings.enable2fa }).click();
  await tf
    .getByRole('alert')
    .filter({ hasText: /does not match/ })
    .waitFor();
  t.notOk((await profileOf(ctx.request)).two_factor.enabled, 'a wrong code enables nothing');

  await tf.getByLabel(strings.checkCode).fill(totp.generate());
  await tf.getByRole('button', { name: strings.enable2fa }).click();
  const codesList = tf.getByRole('list', { name: strings.recoveryList });
  await codesList.waitFor();
  const shown = (await codesList.getByRole('listitem').allTextContents()).map((c) => c.trim());
  t.equal(shown.length, 12, 'twelve recovery codes are shown');
  t.match(shown[0], /^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/);
  await checkA11y(t, page, 'recovery codes');
  await screenshot(page, 'recovery-codes');
  const [download] = await Promise.all([page.waitForEvent('download'), tf.getByRole('link', { name: strings.downloadRecovery }).click()]);
  t.equal(download.suggestedFilename(), strings.recoveryFile);
  const file = readFileSync((await download.path())!, 'utf8');
  t.same(file.trim().split('\n'), shown, 'the downloaded file holds the codes shown');
  await tf.getByRole('button', { name: strings.recoveryDone }).click();
  await tf.getByText(strings.twoFactorOn('Default', `${strings.protocolNames.HTTP}, ${strings.protocolNames.SSH}`)).waitFor();
  t.equal(await codesList.count(), 0, 'the codes are no longer on the page');
  const saved = await profileOf(ctx.request);
  t.same([saved.two_factor.enabled, saved.two_factor.protocols.sort()], [true, ['HTTP', 'SSH']], 'the server has 2FA on, for HTTP and SSH');

  // sign out, sign in: the second factor is asked; a downloaded recovery code works
  await page.getByRole('button', { name: strings.logout }).click();
  await page.getByRole('heading', { name: strings.loginTitle }).waitFor(); // the sign-out has ended the session
  await signIn(page, h.f, 'zoe');
  await page.getByRole('heading', { name: strings.passcodeTitle }).waitFor();
  await page.getByLabel(strings.passcode).fill(shown[3]!);
  await page.getByRole('button', { name: strings.verify }).click();
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.pass('signed in with a recovery code from the file');

  // new recovery codes: the old ones stop working
  await page.getByRole('link', { name: strings.profile }).click();
  const tf2 = section(page, strings.twoFactorSection);
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
  const old = await h.f.ta.inject('POST', '/api/v2/user/web-session', { payload: { username: 'zoe', password: passwordOf('zoe'), passcode: shown[4] } });
  t.equal(old.statusCode, 401, 'an old recovery code no longer signs in');
  const neu = await h.f.ta.inject('POST', '/api/v2/user/web-session', { payload: { username: 'zoe', password: passwordOf('zoe'), passcode: fresh[0] } });
  t.equal(neu.statusCode, 200, 'a new one does');

  // turn it off
  await tf2.getByRole('button', { name: strings.disable2fa }).click();
  await page.getByRole('dialog').getByRole('button', { name: strings.disable2fa }).click();
  await tf2.getByRole('status').filter({ hasText: strings.twoFactorDisabled }).waitFor();
  await tf2.getByRole('button', { name: strings.setUp2fa }).waitFor();
  t.notOk((await profileOf(ctx.request)).two_factor.enabled, 'the server has 2FA off');
  const plain = await h.f.ta.inject('POST', '/api/v2/user/web-session', { payload: { username: 'zoe', password: passwordOf('zoe') } });
  t.equal(plain.statusCode, 200, 'the password alone signs in again');
});

t.test('password change from the profile: the session ends, the new password signs in', async (t) => {
  await h.f.addUser('pia');
  const { page } = await onProfile(t, 'pia');
  const pw = section(page, strings.passwordSection);
  await pw.getByLabel(strings.currentPassword).fill('not-her-password');
  await pw.getByLabel(strings.newPassword, { exact: true }).fill('Pia-new-Password-7');
  await pw.getByLabel(strings.confirmPassword).fill('Pia-new-Password-7');
  await pw.getByRole('button', { name: strings.changePassword }).click();
  await pw
    .getByRole('alert')
    .filter({ hasText: /current password does not match/ })
    .waitFor();
  t.pass('a wrong current password is refused by the server and said');
  await pw.getByLabel(strings.currentPassword).fill(passwordOf('pia'));
  await pw.getByRole('button', { name: strings.changePassword }).click();
  await page.getByRole('status').filter({ hasText: strings.passwordChanged }).waitFor();
  t.pass('the sessions of the old password end: sign in again');
  await signIn(page, h.f, 'pia');
  t.equal(await page.getByRole('alert').textContent(), strings.wrongCredentials, 'the old password no longer works');
  await signIn(page, h.f, 'pia', 'Pia-new-Password-7');
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.pass('the new one does');
});

t.test('contact details, SSH public keys (a real ed25519 key) and API key login', async (t) => {
  await h.f.addUser('kai');
  const { ctx, page } = await onProfile(t, 'kai');

  const info = section(page, strings.infoSection);
  await info.getByLabel(strings.email).fill('kai@example.com');
  await info.getByLabel(strings.description).fill('Kai, accounting');
  await info.getByRole('button', { name: strings.saveInfo }).click();
  await info.getByRole('status').filter({ hasText: strings.saved }).waitFor();
  const p1 = await profileOf(ctx.request);
  t.same([p1.email, p1.description], ['kai@example.com', 'Kai, accounting'], 'email and description saved');

  const keys = section(page, strings.publicKeysSection);
  await keys.getByText(strings.noPublicKeys).waitFor();
  await keys.getByLabel(strings.newPublicKey).fill('ssh-ed25519 ***not-base64***');
  await keys.getByRole('button', { name: strings.addKey }).click();
  await keys
    .getByRole('alert')
    .filter({ hasText: /OpenSSH public key/ })
    .waitFor();
  t.same((await profileOf(ctx.request)).public_keys, [], 'the server refuses a malformed key');
  const key = sshEd25519('kai@laptop');
  await keys.getByLabel(strings.newPublicKey).fill(key);
  await keys.getByRole('button', { name: strings.addKey }).click();
  const item = keys.getByRole('list', { name: strings.publicKeysList }).getByRole('listitem');
  await item.first().waitFor();
  t.equal(await item.count(), 1);
  t.match(await item.first().textContent(), /^ssh-ed25519 …\S{8} kai@laptop/);
  t.same((await profileOf(ctx.request)).public_keys, [key], 'the key is stored as given');
  t.equal(await keys.getByLabel(strings.newPublicKey).inputValue(), '', 'the field is emptied');
  await checkA11y(t, page, 'profile with a key');

  await keys.getByRole('button', { name: /^Remove key/ }).click();
  await page.getByRole('dialog').getByRole('button', { name: strings.remove }).click();
  await keys.getByText(strings.noPublicKeys).waitFor();
  t.same((await profileOf(ctx.request)).public_keys, [], 'the key is removed');

  const api = section(page, strings.apiKeySection);
  const box = api.getByRole('checkbox', { name: strings.allowApiKeyAuth });
  t.notOk(await box.isChecked());
  await box.check();
  await api.getByRole('status').filter({ hasText: strings.apiKeyAuthOn }).waitFor();
  t.ok((await profileOf(ctx.request)).allow_api_key_auth, 'API key login on');
  // the user's own keys: one created on the page, shown once, working, then deleted
  const keysList = api.getByRole('list', { name: strings.apiKeysTitle });
  await api.getByText(strings.noApiKeys).waitFor();
  await api.getByLabel(strings.apiKeyName).fill('backup script');
  await api.getByRole('button', { name: strings.createApiKey }).click();
  const shownKey = (await api.getByLabel(strings.newApiKey).textContent())!.trim();
  t.match(shownKey, /^[\w-]{8,64}\.[\w-]{16,128}$/, 'the new key is shown');
  await keysList.getByText('backup script').waitFor();
  await checkA11y(t, page, 'profile with an API key');
  await api.scrollIntoViewIfNeeded();
  await screenshot(page, 'api-keys');
  t.equal((await h.f.ta.inject('GET', '/api/v2/user/dirs', { apiKey: shownKey })).statusCode, 200, 'the key works while API key login is on');
  await api.getByRole('button', { name: strings.deleteApiKey('backup script') }).click();
  await page.getByRole('dialog').getByRole('button', { name: strings.delete }).click();
  await api.getByText(strings.noApiKeys).waitFor();
  t.equal(await api.getByLabel(strings.newApiKey).count(), 0, 'the key is no longer shown');
  t.equal((await h.f.ta.inject('GET', '/api/v2/user/dirs', { apiKey: shownKey })).statusCode, 401, 'a deleted key is refused');

  // an admin's key bound to kai stops working when kai turns API key login off; no key can be made then
  const made = await h.f.ta.inject('POST', '/api/v2/apikeys', { token: h.f.token, payload: { name: 'kai-key', scope: 2, user: 'kai' } });
  t.equal(made.statusCode, 201, made.payload);
  const apiKey = (made.result as { key: string }).key;
  t.equal((await h.f.ta.inject('GET', '/api/v2/user/dirs', { apiKey })).statusCode, 200);
  await box.uncheck();
  await api.getByRole('status').filter({ hasText: strings.apiKeyAuthOff }).waitFor();
  t.notOk((await profileOf(ctx.request)).allow_api_key_auth, 'API key login off');
  t.equal(await api.getByLabel(strings.apiKeyName).count(), 0, 'no key creation offered');
  t.equal((await h.f.ta.inject('GET', '/api/v2/user/dirs', { apiKey })).statusCode, 401, 'and the key is refused');
  const refused = await (await rest(ctx.request)).post('/api/v2/user/apikeys', { name: 'sneaky' });
  t.equal(refused.status(), 403, 'the server refuses a key while API key login is off');
});

t.test('web client options hide what they forbid, and the server refuses it anyway', async (t) => {
  const all = ['password-change-disabled', 'mfa-disabled', 'info-change-disabled', 'publickey-change-disabled', 'api-key-auth-change-disabled'];
  await h.f.addUser('rita', { email: 'rita@example.com', filters: { web_client: all } });
  const { ctx, page } = await onProfile(t, 'rita');
  t.equal(await page.getByRole('region').count(), 0, 'no section is offered');
  for (const title of [strings.passwordSection, strings.twoFactorSection, strings.infoSection, strings.publicKeysSection, strings.apiKeySection]) {
    t.equal(await page.getByRole('heading', { name: title }).count(), 0, `no ${title} section`);
  }
  await checkA11y(t, page, 'profile with every change forbidden');
  const r = await rest(ctx.request);
  const pwd = await r.put('/api/v2/user/changepwd', { current_password: passwordOf('rita'), new_password: 'Rita-new-Password-9' });
  t.equal(pwd.status(), 403, 'password change refused');
  const gen = await r.post('/api/v2/user/totp/generate', { config_name: 'Default' });
  t.equal(gen.status(), 403, '2FA setup refused');
  const prof = await r.put('/api/v2/user/profile', { email: 'other@example.com', public_keys: [sshEd25519('x')], allow_api_key_auth: true });
  t.equal(prof.status(), 403, 'profile change refused');
  t.equal((await r.post('/api/v2/user/apikeys', { name: 'k' })).status(), 403, 'API key creation refused');
  const after = await profileOf(ctx.request);
  t.same([after.email, after.public_keys, after.allow_api_key_auth], ['rita@example.com', [], false], 'nothing changed');

  // one option alone: only its section is hidden, and that field is not changed by the server
  await h.f.addUser('ugo', { filters: { web_client: ['publickey-change-disabled'] } });
  const u = await onProfile(t, 'ugo');
  await section(u.page, strings.infoSection).waitFor();
  t.equal(await section(u.page, strings.publicKeysSection).count(), 0, 'no public key section');
  const ru = await rest(u.ctx.request);
  const put = await ru.put('/api/v2/user/profile', { email: 'ugo@example.com', public_keys: [sshEd25519('ugo')] });
  t.equal(put.status(), 200);
  const ugo = await profileOf(u.ctx.request);
  t.same([ugo.email, ugo.public_keys], ['ugo@example.com', []], 'the email changed, the keys did not');
});

t.test('forgot password: a code by a real mail, then the reset, then a sign-in with the new password', async (t) => {
  await h.f.addUser('nina', { email: 'nina@example.com' });
  const { page, ctx } = await h.openPage(t);
  const options = await (await ctx.request.get(`${h.f.origin}/api/v2/user/web-session/login-options`)).json();
  t.same(options, { password_reset: true, oidc: false }, 'the sign-in options: mail yes, OIDC no');
  await page.goto(h.f.url);
  await page.getByRole('heading', { name: strings.loginTitle }).waitFor();
  t.equal(await page.getByRole('link', { name: strings.signInOidc }).count(), 0, 'no single sign-on button without a provider');
  await page.getByRole('button', { name: strings.forgotPassword }).click();
  await page.getByRole('heading', { name: strings.forgotTitle }).waitFor();
  await page.getByLabel(strings.username).fill('nina');
  await checkA11y(t, page, 'forgot password');
  await screenshot(page, 'forgot-password');
  const before = smtp.mails.length;
  await page.getByRole('button', { name: strings.sendCode }).click();
  await page.getByRole('status').filter({ hasText: strings.codeSent }).waitFor();
  const mail = await smtp.waitFor('nina@example.com', before);
  const code = /Code: ([A-Z0-9]+)/.exec(mail.parsed.text ?? '')?.[1] ?? '';
  t.match(code, /^[2-9A-Z]{12}$/, 'a code arrived by mail');

  await page.getByLabel(strings.resetCode).fill('AAAAAAAAAAAA');
  await page.getByLabel(strings.newPassword, { exact: true }).fill('Nina-reset-Password-3');
  await page.getByLabel(strings.confirmPassword).fill('Nina-reset-Password-3');
  await page.getByRole('button', { name: strings.resetPassword }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: /code is not valid/ })
    .waitFor();
  t.pass('a wrong code is refused');
  await page.getByLabel(strings.resetCode).fill(code);
  await checkA11y(t, page, 'reset password');
  await screenshot(page, 'reset-password');
  await page.getByRole('button', { name: strings.resetPassword }).click();
  await page.getByRole('status').filter({ hasText: strings.passwordReset }).waitFor();
  await signIn(page, h.f, 'nina', 'Nina-reset-Password-3');
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.pass('the new password signs in');
});

t.test('forgot password with the password-reset-disabled option: the same answer, no mail, and the reset refused', async (t) => {
  await h.f.addUser('otto', { email: 'otto@example.com', filters: { web_client: ['password-reset-disabled'] } });
  await h.f.addUser('nora', { email: 'nora@example.com' });
  const { page } = await h.openPage(t);
  const ask = async (username: string) => {
    await page.goto(h.f.url);
    await page.getByRole('button', { name: strings.forgotPassword }).click();
    await page.getByRole('heading', { name: strings.forgotTitle }).waitFor();
    await page.getByLabel(strings.username).fill(username);
    await page.getByRole('button', { name: strings.sendCode }).click();
    await page.getByRole('status').filter({ hasText: strings.codeSent }).waitFor();
  };
  const before = smtp.mails.length;
  await ask('otto');
  t.pass('the restricted account gets the answer any account gets (it tells nothing)');
  // the refused request went first: had it been mailed, its mail would be in when the next one's is
  await ask('nora');
  await smtp.waitFor('nora@example.com', before);
  t.same(
    smtp.mails.slice(before).flatMap((m) => m.rcptTo),
    ['nora@example.com'],
    'no mail for the account with password-reset-disabled',
  );
  await page.goto(h.f.url);
  await page.getByRole('button', { name: strings.forgotPassword }).click();
  await page.getByLabel(strings.username).fill('otto');
  await page.getByRole('button', { name: strings.sendCode }).click();
  await page.getByLabel(strings.resetCode).fill('AAAAAAAAAAAA');
  await page.getByLabel(strings.newPassword, { exact: true }).fill('Otto-reset-Password-3');
  await page.getByLabel(strings.confirmPassword).fill('Otto-reset-Password-3');
  await page.getByRole('button', { name: strings.resetPassword }).click();
  await page.getByRole('alert').waitFor();
  t.equal(await page.getByRole('status').filter({ hasText: strings.passwordReset }).count(), 0, 'no reset');
  await signIn(page, h.f, 'otto', passwordOf('otto'));
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.pass('the old password still signs in');
});

t.test('single sign-on: the button on the sign-in page, the provider, back signed in', async (t) => {
  const { f, issuer, base } = await ferryWithOidc(t, { olga: {} });
  await f.addUser('olga');
  const { page } = await h.openPage(t);
  await page.goto(f.url);
  const button = page.getByRole('link', { name: strings.signInOidc });
  await button.waitFor();
  t.equal(await page.getByRole('button', { name: strings.forgotPassword }).count(), 0, 'no "forgot password" without a mail server');
  await checkA11y(t, page, 'sign-in page with single sign-on');
  await screenshot(page, 'login-sso');
  await button.click();
  await signInAtProvider(page, issuer, 'olga');
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.match(page.url(), new RegExp(`^${base}/web/client/`), 'back on the web client');
  await page.getByText(strings.signedInAs('olga')).waitFor();
  t.pass('signed in as the provider account');
});

t.test('the profile on a phone (375 px) in dark mode: nothing wider than the screen', async (t) => {
  await h.f.addUser('lea');
  const { page } = await h.signedIn(t, 'lea', { width: 375, height: 812, colorScheme: 'dark' });
  await page.getByRole('link', { name: strings.profile }).click();
  await page.getByRole('heading', { name: strings.profileTitle, level: 1 }).waitFor();
  const tf = section(page, strings.twoFactorSection);
  await tf.getByRole('button', { name: strings.setUp2fa }).click();
  await tf.getByRole('button', { name: strings.continue }).click();
  await tf.getByRole('img', { name: strings.totpQrLabel }).waitFor();
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scrolling');
  await checkA11y(t, page, 'profile on a phone, dark mode');
  await tf.scrollIntoViewIfNeeded();
  await screenshot(page, 'profile-phone-dark');
});
