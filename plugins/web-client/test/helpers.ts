import path from 'node:path';
import { createTestApp, type TestApp } from '@ferry/core/testing';
import type { Test } from 'tap';

export const PLUGIN = { name: '@ferry/web-client' };

export interface Ferry {
  ta: TestApp;
  token: string;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** The web client's root URL (ends in /web/client/). */
  url: string;
  /** Creates a user (all permissions on '/' unless given) with the password `<username>-pass-1`; returns its home. */
  addUser(username: string, extra?: Record<string, unknown>): Promise<string>;
  /** Turns TOTP on for HTTP on a user's account; returns a code generator. */
  enableTotp(username: string): Promise<() => string>;
}

export const passwordOf = (username: string): string => `${username}-pass-1`;

/** A started Ferry with the web client on a free port of 127.0.0.1 (the site built by npm run build); `config` is merged into the test config, `plugins` are loaded too. */
export async function startFerry(
  t: Test,
  o: { config?: Record<string, unknown>; plugins?: { name: string; config?: Record<string, unknown> }[] } = {},
): Promise<Ferry> {
  const plugins = [{ name: '@ferry/fs-local' }, PLUGIN, ...(o.plugins ?? [])];
  const ta = await createTestApp({ plugins, ...(o.config ? { config: o.config } : {}) });
  t.teardown(() => ta.close());
  await ta.app.start();
  const token = await ta.adminToken();
  const origin = `http://127.0.0.1:${ta.server.info.port}`;
  const addUser = async (username: string, extra: Record<string, unknown> = {}) => {
    const home = path.join(ta.dataDir, 'homes', username);
    const payload = { username, password: passwordOf(username), status: 1, home_dir: home, permissions: { '/': ['*'] }, ...extra };
    const r = await ta.inject('POST', '/api/v2/users', { token, payload });
    if (r.statusCode !== 201) throw new Error(r.payload);
    return home;
  };
  const enableTotp = (username: string) => ta.enableTotp(username, passwordOf(username), ['HTTP']);
  return { ta, token, origin, url: `${origin}/web/client/`, addUser, enableTotp };
}
