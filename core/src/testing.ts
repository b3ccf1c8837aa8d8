/**
 * Test helpers for Ferry packages: an app on a throwaway database
 * (SQLite in memory, or a fresh PostgreSQL database when FERRY_TEST_DB=postgres)
 * and shortcuts to call it through hapi's inject.
 */
import 'reflect-metadata';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Hapi from '@hapi/hapi';
import { loadConfig, deepMerge } from './config/load.js';
import type { FerryConfig, PluginEntry } from './config/schema.js';
import { createApp, type App } from './app.js';
import * as OTPAuth from 'otpauth';
import { pino } from 'pino';
import { silentLogger, type Logger } from './logger.js';

export const TEST_ADMIN = { username: 'admin', password: 'admin-password-1' };
const PG_ADMIN_URL = process.env.FERRY_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestAppOptions {
  plugins?: PluginEntry[] | { name: string; path?: string; config?: Record<string, unknown> }[];
  /** Deep-merged into the configuration. */
  config?: Record<string, unknown>;
  logger?: Logger;
  /** Use this PostgreSQL database URL instead of creating one (cluster tests). */
  databaseUrl?: string;
  /** Keep this data dir instead of creating one. */
  dataDir?: string;
}

export interface InjectOptions {
  token?: string;
  apiKey?: string;
  basic?: { username: string; password: string };
  payload?: unknown;
  headers?: Record<string, string>;
}

export interface TestApp {
  app: App;
  server: Hapi.Server;
  config: FerryConfig;
  dataDir: string;
  /** The database URL when running on PostgreSQL. */
  databaseUrl?: string;
  inject(method: string, url: string, o?: InjectOptions): Promise<Hapi.ServerInjectResponse>;
  adminToken(username?: string, password?: string): Promise<string>;
  userToken(username: string, password: string): Promise<string>;
  /**
   * Turns TOTP on for `protocols` on a user's account through the user API
   * (generate, then save); returns a generator of its current code.
   */
  enableTotp(username: string, password: string, protocols: string[]): Promise<() => string>;
  close(): Promise<void>;
}

export const usePostgres = (): boolean => process.env.FERRY_TEST_DB === 'postgres';

/** Creates an empty PostgreSQL database and returns its URL and a dropper. */
export async function createPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const pg = (await import('pg')).default;
  const name = `ferry_t_${crypto.randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export async function createTestApp(o: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = o.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'ferry-test-'));
  let pgDb: { url: string; drop(): Promise<void> } | undefined;
  let databaseUrl = o.databaseUrl;
  if (!databaseUrl && usePostgres()) {
    pgDb = await createPgDatabase();
    databaseUrl = pgDb.url;
  }
  const overrides: Record<string, unknown> = {
    common: { data_dir: dataDir },
    log: { level: 'silent' },
    data_provider: databaseUrl ? { driver: 'postgresql', url: databaseUrl } : { driver: 'sqlite', name: ':memory:' },
    httpd: { bindings: [{ address: '127.0.0.1', port: 0 }] },
    kms: { master_key: 'test-master-key-0123456789abcdef' },
    plugins: o.plugins ?? [{ name: '@ferry/fs-local' }],
    defaults: { admin_username: TEST_ADMIN.username, admin_password: TEST_ADMIN.password },
  };
  const { config, baseDir } = loadConfig({
    env: {},
    overrides: o.config ? deepMerge(overrides, o.config) : overrides,
  });
  let app: App;
  try {
    app = await createApp({ config, baseDir, logger: o.logger ?? silentLogger() });
  } catch (err) {
    await pgDb?.drop().catch(() => {});
    if (!o.dataDir) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const server = app.servers[0]!;

  const inject = (method: string, url: string, io: InjectOptions = {}) => {
    const headers: Record<string, string> = { ...(io.headers ?? {}) };
    if (io.token) headers.authorization = `Bearer ${io.token}`;
    if (io.apiKey) headers['x-service-api-key'] = io.apiKey;
    if (io.basic) headers.authorization = 'Basic ' + Buffer.from(`${io.basic.username}:${io.basic.password}`).toString('base64');
    return server.inject({ method, url, headers, payload: io.payload as never, remoteAddress: '127.0.0.1' });
  };

  const token = async (url: string, username: string, password: string) => {
    const r = await inject('GET', url, { basic: { username, password } });
    if (r.statusCode !== 200) throw new Error(`token request failed (${r.statusCode}): ${r.payload}`);
    return (r.result as { access_token: string }).access_token;
  };

  return {
    app,
    server,
    config,
    dataDir,
    databaseUrl,
    inject,
    adminToken: (u = TEST_ADMIN.username, p = TEST_ADMIN.password) => token('/api/v2/token', u, p),
    userToken: (u, p) => token('/api/v2/user/token', u, p),
    async enableTotp(username, password, protocols) {
      const userToken = await token('/api/v2/user/token', username, password);
      const generated = await inject('POST', '/api/v2/user/totp/generate', { token: userToken, payload: { config_name: 'Default' } });
      if (generated.statusCode !== 200) throw new Error(`totp generate failed (${generated.statusCode}): ${generated.payload}`);
      const secret = (generated.result as { secret: string }).secret;
      const payload = { enabled: true, config_name: 'Default', protocols, secret: { status: 'Plain', payload: secret } };
      const saved = await inject('POST', '/api/v2/user/totp/save', { token: userToken, payload });
      if (saved.statusCode !== 200) throw new Error(`totp save failed (${saved.statusCode}): ${saved.payload}`);
      const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
      return () => totp.generate();
    },
    async close() {
      await app.stop();
      await pgDb?.drop().catch(() => {});
      if (!o.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// Action plugin tests (the test kit's actionConformance and runAction): the
// event manager's own steps from a stored action to a running one.
export { buildParams } from './event-manager/context.js';
/** The joi schema of a route's validate.<source>, also where the server bound it (for tests that read the route table). */
export { routeSchema } from './http/route-validation.js';
export { validateActionOptions, checkActionTemplates, prepareActionOptions, buildActionContext } from './event-manager/prepare.js';
export { normalizeConditions, type LoadedRule, type TriggerEvent } from './event-manager/types.js';
export { mapField, collectField } from './event-manager/fields.js';
export { LocalSecretsService } from './secrets/local-secrets.js';
/** The process's pool of download read buffers (service tests: a front-end's downloads read into reused buffers). */
export { readBufferPool } from './vfs/read-buffers.js';

/**
 * A logger at level trace whose JSON lines are kept in `lines` (no key
 * redaction, so a test sees everything a plugin wrote, secrets included).
 */
export function captureLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino({ level: 'trace' }, { write: (s: string) => void lines.push(s) });
  return { logger, lines };
}
