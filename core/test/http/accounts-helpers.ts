/** Shared helpers of the users/groups/folders/quotas/backup tests (not a test file). */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, type TestApp, type TestAppOptions } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { ProviderEvent } from '../../src/events/event-types.js';

/** Filesystem providers 0, 1, 4, 5 (see core/test/fixtures/plugins/fs-accounts). */
export const FS_FIXTURE = { name: 'fixture-fs-accounts', path: 'core/test/fixtures/plugins/fs-accounts' };

export interface FixtureState {
  objects: Map<string, number>;
  created: { provider: number; options: Record<string, unknown>; scope: { username: string; root?: string } }[];
  gate: Promise<void> | null;
}

export function fixture(): FixtureState {
  const g = globalThis as { __ferryFsFixture?: FixtureState };
  g.__ferryFsFixture ??= { objects: new Map(), created: [], gate: null };
  return g.__ferryFsFixture;
}

/** Holds every usedSpace() of the fixture until release() is called. */
export function holdScans(): { release(): void } {
  let release!: () => void;
  fixture().gate = new Promise<void>((r) => (release = r));
  return {
    release() {
      fixture().gate = null;
      release();
    },
  };
}

export interface AccountsApp extends TestApp {
  token: string;
  events: ProviderEvent[];
  /** Raw SQL on the app's database. */
  sql(query: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** JSON body of a response. */
  json(r: { payload: string }): any;
}

export async function accountsApp(o: TestAppOptions = {}): Promise<AccountsApp> {
  const ta = await createTestApp({ plugins: [FS_FIXTURE], ...o });
  const token = await ta.adminToken();
  const events: ProviderEvent[] = [];
  ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('provider', (e) => void events.push(e));
  return Object.assign(ta, {
    token,
    events,
    sql: (query: string, params: unknown[] = []) => ta.app.orm.em.fork().getConnection().execute(query, params) as Promise<Record<string, unknown>[]>,
    json: (r: { payload: string }) => JSON.parse(r.payload),
  });
}

/** A fresh local directory for home dirs and mapped paths. */
export function tmpDir(prefix = 'ferry-acc-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export const user = (username: string, extra: Record<string, unknown> = {}) => ({
  username,
  password: `${username}-password`,
  home_dir: `/srv/ferry/${username}`,
  permissions: { '/': ['*'] },
  ...extra,
});

export const s3 = (extra: Record<string, unknown> = {}) => ({
  provider: 1,
  s3config: { bucket: 'bucket-a', region: 'eu-west-1', access_key: 'AKIA1', access_secret: { status: 'Plain', payload: 'S3-SECRET-PLAIN' }, ...extra },
});
