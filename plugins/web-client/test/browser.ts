/**
 * Debian's chromium (installed by scripts/servers/start-browser.sh), headless,
 * driven by playwright-core (no browser download). FERRY_CHROMIUM names
 * another binary.
 */
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import type { Test } from 'tap';

export const CHROMIUM = process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium';

/** The flags a headless run here needs (no sandbox as root, no GPU, no calls to hosts it cannot reach). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** A browser closed at the end of `t`. */
export async function launchBrowser(t: Test): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  t.teardown(() => browser.close());
  return browser;
}

/** A fresh context (its own cookies): AxeBuilder needs a page of a context, not of browser.newPage(). */
export async function newContext(
  browser: Browser,
  o: { width?: number; height?: number; colorScheme?: 'light' | 'dark'; locale?: string } = {},
): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { width: o.width ?? 1280, height: o.height ?? 800 },
    colorScheme: o.colorScheme ?? 'light',
    locale: o.locale ?? 'en-US',
    acceptDownloads: true,
  });
}
