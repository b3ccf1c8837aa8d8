/**
 * What the browser tests share: a Ferry and a chromium per test file, pages
 * in fresh contexts, the sign-in, axe-core checks and screenshots
 * (FERRY_SCREENSHOT_DIR keeps them, e.g. docs/images/web-client for
 * docs/web-client.md).
 */
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import axe from 'axe-core';
import type { Browser, Locator, Page } from 'playwright-core';
import type { Test } from 'tap';
import { en as strings } from '../app/src/strings.js';
import { launchBrowser, newContext } from './browser.js';
import { passwordOf, startFerry, type Ferry } from './helpers.js';

const shots = process.env.FERRY_SCREENSHOT_DIR;
if (shots) mkdirSync(shots, { recursive: true });

/** A screenshot named web-client-<name>.png (in FERRY_SCREENSHOT_DIR when set, else the temp directory); resolves to its path. */
export async function screenshot(page: Page, name: string, o: { timeout?: number } = {}): Promise<string> {
  const file = path.join(shots ?? os.tmpdir(), `web-client-${name}.png`);
  await page.screenshot({ path: file, fullPage: false, ...o });
  return file;
}

/**
 * How a page is checked. One with frames: the default way, across its frames. One without
 * (most): in place, in legacy mode, with axe-core evaluated once per document. The default
 * way opens a blank page (a renderer process) for axe's last step, and AxeBuilder's legacy
 * run evaluates axe-core's 580 KB twice per check: together a tenth of a browser test's CPU.
 */
async function axeBuilder(page: Page): Promise<AxeBuilder> {
  if (page.frames().length > 1) return new AxeBuilder({ page });
  if (!(await page.evaluate('typeof window.axe?.run === "function"'))) await page.evaluate(axe.source);
  return new AxeBuilder({ page, axeSource: 'void 0' }).setLegacyMode(true);
}

/** axe-core on the page: no serious or critical violation (the others are reported as comments). */
export async function checkA11y(t: Test, page: Page, what: string): Promise<void> {
  const result = await (await axeBuilder(page)).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  for (const v of result.violations) t.comment(`axe ${what}: ${v.impact} ${v.id}: ${v.help} (${v.nodes.length})`);
  t.same(
    bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `axe: no serious or critical violation on the ${what}`,
  );
  t.ok(result.passes.length > 10, `axe ran its checks on the ${what}`);
}

/** Fills and sends the sign-in form, and waits for its answer. */
export async function signIn(page: Page, f: Ferry, username: string, password = passwordOf(username)): Promise<void> {
  await page.goto(f.url);
  await page.getByLabel(strings.username).fill(username);
  await page.getByLabel(strings.password).fill(password);
  // the sign-in's answer is awaited (whatever it is): a navigation right after the click would cancel the request
  const answered = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v2/user/web-session');
  await page.getByRole('button', { name: strings.signIn }).click();
  await answered;
}

/**
 * Drags the local files and folders `paths` (absolute) onto the middle of `target` and drops
 * them, as a drag from the desktop does: Chrome DevTools Protocol's Input.dispatchDragEvent
 * (dragEnter, dragOver, drop) with the paths as the drag's files. Chromium gives the page a
 * folder as a directory entry (DataTransferItem.webkitGetAsEntry) with its whole tree, which a
 * synthetic DataTransfer cannot hold. `over` runs after the dragOver (to look at the page
 * while the drag is over it).
 */
export async function dropFromDesktop(page: Page, target: Locator, paths: string[], over?: () => Promise<void>): Promise<void> {
  const box = await target.boundingBox();
  if (!box) throw new Error('the drop target is not visible');
  const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  const cdp = await page.context().newCDPSession(page);
  try {
    const data = { items: [], files: paths, dragOperationsMask: 1 }; // 1: copy
    await cdp.send('Input.dispatchDragEvent', { type: 'dragEnter', ...at, data });
    await cdp.send('Input.dispatchDragEvent', { type: 'dragOver', ...at, data });
    await over?.();
    await cdp.send('Input.dispatchDragEvent', { type: 'drop', ...at, data });
  } finally {
    await cdp.detach();
  }
}

/** The file list's row whose first cell holds `name`. */
export const row = (page: Page, name: string) => page.getByRole('row').filter({ has: page.getByRole('cell').first().filter({ hasText: name }) });

export type ContextOptions = Parameters<typeof newContext>[1];

/** The page's errors and failed requests, as they come (the last 20). */
function pageProblems(page: Page): string[] {
  const seen: string[] = [];
  const note = (line: string) => {
    seen.push(line);
    if (seen.length > 20) seen.shift();
  };
  page.on('pageerror', (err) => note(`page error: ${err.message}`));
  // (a resource that failed to load is noted below, from its answer: a 401 or a 404 is the app's ordinary probing)
  page.on('console', (m) => (m.type() === 'error' && !m.text().startsWith('Failed to load resource') ? note(`console error: ${m.text()}`) : undefined));
  page.on('requestfailed', (r) => note(`request failed: ${r.method()} ${new URL(r.url()).pathname} ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => (r.status() >= 500 ? note(`answer ${r.status()}: ${r.request().method()} ${new URL(r.url()).pathname}`) : undefined));
  return seen;
}

/**
 * What a failed test leaves about its page, for a failure seen once in CI
 * that does not come back when run again: where the page was, what it
 * reported, its first heading and a screenshot, on stderr (the test's
 * output; comments after its end would be dropped).
 */
async function describeFailedPage(t: Test, page: Page, problems: string[]): Promise<void> {
  if (page.isClosed()) return;
  const say = (line: string) => console.error(`[${t.name}] ${line}`);
  say(`failed on the page ${page.url()}`);
  for (const p of problems) say(p);
  const heading = await page
    .getByRole('heading', { level: 1 })
    .first()
    .textContent({ timeout: 1000 })
    .catch(() => null);
  say(`its first heading: ${heading ?? '(none)'}`);
  await screenshot(page, `failed-${t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}-${Date.now()}`, { timeout: 5000 })
    .then((file) => say(`screenshot: ${file}`))
    .catch((err: Error) => say(`no screenshot: ${err.message}`));
}

/** The Ferry and browser of one test file, and pages on them. */
export interface Harness {
  f: Ferry;
  browser: Browser;
  /** A page in a fresh browser context (its own cookies), closed at the end of `t`. */
  openPage(t: Test, o?: ContextOptions): Promise<{ ctx: Awaited<ReturnType<typeof newContext>>; page: Page }>;
  /** A page signed in as `username`, on its home folder. */
  signedIn(t: Test, username: string, o?: ContextOptions): Promise<{ ctx: Awaited<ReturnType<typeof newContext>>; page: Page }>;
}

/** Starts a Ferry (`o.config` merged into its config) and a browser for the test file `t` (both stopped at its end). */
export async function harness(t: Test, o: Parameters<typeof startFerry>[1] = {}): Promise<Harness> {
  const f = await startFerry(t, o);
  const browser = await launchBrowser(t);
  const openPage: Harness['openPage'] = async (t, o = {}) => {
    const ctx = await newContext(browser, o);
    const page = await ctx.newPage();
    const problems = pageProblems(page);
    t.teardown(() => ctx.close());
    // (teardowns run last added first: the page is looked at before its context closes)
    t.teardown(() => (t.passing() ? undefined : describeFailedPage(t, page, problems)));
    return { ctx, page };
  };
  const signedIn: Harness['signedIn'] = async (t, username, o = {}) => {
    const opened = await openPage(t, o);
    await signIn(opened.page, f, username);
    await opened.page.getByRole('heading', { name: strings.home }).waitFor();
    return opened;
  };
  return { f, browser, openPage, signedIn };
}

/**
 * Holds the page's requests matching `pattern` for `ms` before sending them
 * (an answer that comes late, after the user moved on): `answered` settles
 * once the first of them went through, `remove()` ends the delay.
 */
export async function delayRequests(page: Page, pattern: RegExp, ms: number): Promise<{ answered: Promise<void>; remove: () => Promise<void> }> {
  let done!: () => void;
  const answered = new Promise<void>((r) => (done = r));
  await page.route(pattern, async (route) => {
    await new Promise((r) => setTimeout(r, ms));
    // (a request still held when the route is removed is let through by unroute)
    await route.continue().catch(() => undefined);
    done();
  });
  return { answered, remove: () => page.unroute(pattern) };
}
