import { generateSshKeyPair } from '../../src/sdk/ssh-keys.js';
import type { TestApp } from '../../src/testing.js';

/** SSH key pairs of every type the login tests sign with, and one no account lists (`other`). */
export function sshKeyPairs(ecdsaBits: 256 | 384) {
  return {
    ed25519: generateSshKeyPair('ed25519'),
    rsa: generateSshKeyPair('rsa', { bits: 2048 }),
    ecdsa: generateSshKeyPair('ecdsa', { bits: ecdsaBits }),
    other: generateSshKeyPair('ed25519'),
  };
}

/** Adds users through the REST API: password `<name>-pass-1`, a home under the app's data directory, every permission. */
export function userAdder(ta: TestApp, adminToken: string) {
  return async (username: string, extra: Record<string, unknown> = {}): Promise<void> => {
    const payload = { username, password: `${username}-pass-1`, home_dir: `${ta.dataDir}/${username}`, permissions: { '/': ['*'] }, ...extra };
    const r = await ta.inject('POST', '/api/v2/users', { token: adminToken, payload });
    if (r.statusCode !== 201) throw new Error(r.payload);
  };
}
