/**
 * A browser whose address the defender bans: the sign-in says so, then a reload of any page of
 * the web client is a readable page in the app's style and words (www/blocked.html, not the
 * API's JSON refusal), while the API and the site's assets still get the JSON 403; unbanned,
 * the site is back.
 */
import t from 'tap';
import { en as strings } from '../app/src/strings.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t, { config: { defender: { enabled: true, threshold: 4, score_invalid: 2, score_valid: 2, ban_time: 30 } } });
});

t.test('a banned browser reloads a page: the blocked page, styled, in the catalogue words; JSON for the API; back once unbanned', async (t) => {
  await h.f.addUser('bea');
  const { ctx, page } = await h.openPage(t);
  const cspViolations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  await page.goto(`${h.f.url}files/reports`);
  /** A sign-in through the form: the status of its answer. */
  const attempt = async (password: string) => {
    await page.getByLabel(strings.username).fill('bea');
    await page.getByLabel(strings.password).fill(password);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v2/user/web-session' && r.request().method() === 'POST'),
      page.getByRole('button', { name: strings.signIn }).click(),
    ]);
    return answer.status();
  };
  // two wrong passwords of an existing account score 2 + 2 (score_valid): banned
  t.equal(await attempt('wrong-password-1'), 401);
  t.equal(await attempt('wrong-password-2'), 401);
  t.equal(await attempt('bea-pass-1'), 403, 'then even the right password is refused');
  t.equal(await page.getByRole('alert').textContent(), strings.banned, 'the sign-in form says the address is blocked');

  const reloaded = await page.reload();
  t.equal(reloaded?.status(), 403, 'a reload is refused');
  t.match(reloaded?.headers()['content-type'], /^text\/html/, 'with a page, not JSON');
  t.match(reloaded?.headers()['content-security-policy'], /default-src 'none'; style-src 'sha256-/, 'its CSP allows its own style only');
  await page.getByRole('heading', { name: strings.blockedTitle }).waitFor();
  t.equal(await page.getByRole('alert').textContent(), strings.banned, 'the words of the catalogue');
  t.equal(await page.title(), `${strings.blockedTitle} · ${strings.appName}`);
  t.equal(await page.locator('html').getAttribute('lang'), strings.lang);
  t.equal(await page.locator('.card').evaluate((el) => getComputedStyle(el).borderRadius), '10px', "the app's stylesheet applies");
  t.same(cspViolations, [], 'no Content-Security-Policy violation');
  await checkA11y(t, page, 'blocked page');
  await screenshot(page, 'blocked');

  const dark = await h.openPage(t, { colorScheme: 'dark', width: 375, height: 700 });
  await dark.page.goto(`${h.f.url}shares`);
  await dark.page.getByRole('heading', { name: strings.blockedTitle }).waitFor();
  t.pass('any page of the site, on a phone in dark mode');
  await screenshot(dark.page, 'blocked-phone-dark');

  const api = await ctx.request.get(`${h.f.origin}/api/v2/user/web-session`, { failOnStatusCode: false });
  t.equal(api.status(), 403);
  t.match(await api.json(), { message: /banned/ }, 'the API still answers JSON');
  const asset = await ctx.request.get(`${h.f.url}files`, { headers: { accept: '*/*' }, failOnStatusCode: false });
  t.equal(asset.status(), 403);
  t.match(asset.headers()['content-type'], /json/, 'a request that asks for no page: JSON');

  // the block is for a while: once the host is unbanned (from another address), the site is back
  const unban = await h.f.ta.server.inject({
    method: 'DELETE',
    url: `/api/v2/defender/hosts/${Buffer.from('127.0.0.1').toString('hex')}`,
    headers: { authorization: `Bearer ${h.f.token}` },
    remoteAddress: '192.0.2.9',
  });
  t.equal(unban.statusCode, 200, unban.payload);
  await page.reload();
  await page.getByRole('heading', { name: strings.loginTitle }).waitFor();
  t.pass('unbanned: the sign-in page again');
});
