/**
 * A Ferry whose HTTP binding has an OpenID provider: the core tests' provider
 * (core/test/helpers/oidc-provider.ts: oidc-provider in process), loaded at
 * run time, and the provider's own development login and consent pages
 * played in the browser.
 */
import net from 'node:net';
import type { Page } from 'playwright-core';
import type { Test } from 'tap';
import { startFerry, type Ferry } from './helpers.js';

interface OidcHelper {
  startOidcProvider: (
    o: { accounts: Record<string, Record<string, unknown>>; redirectBase: string; claims: Record<string, string[]> },
    teardown: (fn: () => Promise<void>) => void,
  ) => Promise<{ issuer: string }>;
  oidcBindingFor: (op: unknown, redirectBase: string) => Record<string, unknown>;
}

/** A free port of 127.0.0.1 (the provider must know Ferry's callback before Ferry starts). */
function freePort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

/**
 * Starts the provider with `accounts` (id: extra claims; `role` is sent in
 * the role scope) and a Ferry using it on its binding; both stop when `t` ends.
 */
export async function ferryWithOidc(
  t: Test,
  accounts: Record<string, Record<string, unknown>>,
  config: Record<string, unknown> = {},
): Promise<{ f: Ferry; issuer: string; base: string }> {
  const helper = new URL('../../../core/test/helpers/oidc-provider.js', import.meta.url).href;
  const { startOidcProvider, oidcBindingFor } = (await import(helper)) as OidcHelper;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const op = await startOidcProvider({ accounts, redirectBase: base, claims: { openid: ['sub'], profile: ['preferred_username'], role: ['role'] } }, (fn) =>
    t.teardown(fn),
  );
  const f = await startFerry(t, { config: { ...config, httpd: { bindings: [{ address: '127.0.0.1', port, oidc: oidcBindingFor(op, base) }] } } });
  return { f, issuer: op.issuer, base };
}

/** Signs `login` in at the provider's pages (the browser is there after the single sign-on button). */
export async function signInAtProvider(page: Page, issuer: string, login: string): Promise<void> {
  await page.waitForURL((u) => u.href.startsWith(issuer));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any');
  await page.locator('button[type="submit"]').click();
  await page.locator('button[type="submit"]').click(); // consent
}
