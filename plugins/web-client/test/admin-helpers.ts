/** What the web admin's browser tests share: the admin's sign-in, a page opened from the navigation, the REST API as the test's admin. */
import type { Page } from 'playwright-core';
import { TEST_ADMIN } from '@ferry/core/testing';
import { en as strings } from '../app/src/strings.js';
import { en as admin } from '../app/src/admin/strings.js';
import type { Ferry } from './helpers.js';

/** Fills and sends the web admin's sign-in form, and waits for its answer. */
export async function signInAdmin(page: Page, f: Ferry, username = TEST_ADMIN.username, password = TEST_ADMIN.password): Promise<void> {
  await page.goto(`${f.origin}/web/admin/`);
  await page.getByRole('heading', { name: admin.loginTitle }).waitFor();
  await page.getByLabel(strings.username).fill(username);
  await page.getByLabel(strings.password).fill(password);
  // the sign-in's answer is awaited (whatever it is): a navigation right after the click would cancel the request
  const answered = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v2/admin/web-session');
  await page.getByRole('button', { name: strings.signIn }).click();
  await answered;
}

/** Opens the page `title` from the main navigation and waits for its heading. */
export async function openFromNav(page: Page, title: string): Promise<void> {
  await page.getByRole('navigation', { name: admin.mainNav }).getByRole('link', { name: title }).click();
  await page.getByRole('heading', { name: title, level: 1 }).waitFor();
}

/** Answers of the REST API as the test's admin (bearer token). */
export async function restAs(f: Ferry, method: string, url: string, payload?: unknown) {
  const r = await f.ta.inject(method, url, { token: f.token, ...(payload ? { payload } : {}) });
  return { status: r.statusCode, body: r.payload ? (JSON.parse(r.payload) as Record<string, any>) : {}, raw: r.payload };
}
