/**
 * A cluster of real `ferry serve` processes on loopback sharing one fresh
 * PostgreSQL database (not a test file: tap reports it as "no tests found").
 * Each node has its own data directory (its own temporary area, secrets
 * file and logs); what the nodes share is the database, the master key and
 * the directories named in `shared` (homes, share uploads).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { ferryCall, ferryToken, startFerry, writeFerryConfig, type FerryAnswer, type FerryCallOptions, type FerryProcess } from '@ferry/testkit';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const ADMIN = { username: 'admin', password: 'cluster-admin-password-1' };

export interface Node extends FerryProcess {
  name: string;
}

/**
 * Writes the YAML configuration of node `name` under `dir`. `yaml`: extra
 * top-level sections (appended as is, so they must not repeat `common`,
 * `httpd` or the others written here; use `common`/`binding` for those).
 */
export function writeNodeConfig(
  dir: string,
  name: string,
  o: { databaseUrl: string; common?: string[]; binding?: string[]; plugins?: string[]; yaml?: string },
): string {
  const data = path.join(dir, name);
  return writeFerryConfig(path.join(data, 'ferry.yaml'), {
    dataDir: data,
    common: [`instance_id: ${name}`, ...(o.common ?? [])],
    databaseUrl: o.databaseUrl,
    poolSize: 4,
    binding: o.binding,
    masterKey: 'cluster-master-key-0123456789abcdef',
    admin: ADMIN,
    plugins: o.plugins,
    extra: (o.yaml ?? '') + '\n',
  });
}

/**
 * Starts `ferry serve --config <file>` and resolves once it listens. Every
 * node started is killed when the test process exits, also when it fails
 * before its teardown (a node that did not start, an uncaught error): no
 * node outlives its test.
 */
export async function startNode(name: string, config: string): Promise<Node> {
  return { name, ...(await startFerry(config, { cwd: ROOT, timeoutMs: 90_000, label: `node ${name}` })) };
}

export type Reply = FerryAnswer;

export interface CallOptions extends Omit<FerryCallOptions, 'signal'> {
  apiKey?: string;
  /** Client address, sent in X-Forwarded-For (the nodes trust it from 127.0.0.1). */
  ip?: string;
}

/** One HTTP request; the body is read whole (the suite moves small files only). */
export async function call(base: string, method: string, route: string, o: CallOptions = {}): Promise<Reply> {
  const { apiKey, ip, ...rest } = o;
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (apiKey) headers['x-service-api-key'] = apiKey;
  if (ip) headers['x-forwarded-for'] = ip;
  return ferryCall(base + route, method, { ...rest, headers });
}

/** An admin token (throws unless the answer is 200). */
export const adminToken = (base: string): Promise<string> => ferryToken(base, 'admin', ADMIN.username, ADMIN.password);

export async function userToken(base: string, username: string, password: string, ip?: string): Promise<Reply> {
  return call(base, 'GET', '/api/v2/user/token', { basic: { username, password }, ip });
}

/**
 * Calls `probe` until it resolves true or `ms` have passed; resolves to the
 * last result. For changes that reach the other nodes within a bounded time
 * (cache TTLs): the bound is what is checked, not a speed.
 */
export async function eventually(probe: () => Promise<boolean>, ms: number, every = 100): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > end) return false;
    await sleep(every);
  }
}
