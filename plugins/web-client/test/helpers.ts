import path from 'node:path';
import { createTestApp, type TestApp } from '@ferry/core/testing';
import * as OTPAuth from 'otpauth';
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

/** A started Ferry with the web client on a free port of 127.0.0.1 (the site built by npm run build); `config` overrides the test config. */
export async function startFerry(t: Test, config?: Record<string, unknown>): Promise<Ferry> {
  const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, PLUGIN], config });
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
  const enableTotp = async (username: string) => {
    const userToken = await ta.userToken(username, passwordOf(username));
    const generated = await ta.inject('POST', '/api/v2/user/totp/generate', { token: userToken, payload: { config_name: 'Default' } });
    const secret = (generated.result as { secret: string }).secret;
    const saved = await ta.inject('POST', '/api/v2/user/totp/save', {
      token: userToken,
      payload: { enabled: true, config_name: 'Default', protocols: ['HTTP'], secret: { status: 'Plain', payload: secret } },
    });
    if (saved.statusCode !== 200) throw new Error(saved.payload);
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
    return () => totp.generate();
  };
  return { ta, token, origin, url: `${origin}/web/client/`, addUser, enableTotp };
}
