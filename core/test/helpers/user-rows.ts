import type { TestApp } from '../../src/testing.js';
import { hashPassword } from '../../src/accounts/password.js';
import { User } from '../../src/data/entities/index.js';

/**
 * Inserts a user row straight into the database (no API, no provider event):
 * for tests that need accounts the API would refuse or that must stay out of
 * the events they observe. Full permissions on a local home by default.
 */
export async function insertUserRow(ta: TestApp, username: string, password: string, extra: Partial<User> = {}): Promise<void> {
  const em = ta.app.orm.em.fork();
  em.create(User, {
    username,
    password_hash: await hashPassword(password),
    permissions: { '/': ['*'] },
    filters: {},
    filesystem: { provider: 0 },
    public_keys: [],
    custom_placeholders: [],
    oidc_custom_fields: {},
    home_dir: ta.dataDir,
    ...extra,
  } as never);
  await em.flush();
}
