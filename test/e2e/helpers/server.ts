/**
 * Runs `ferry serve` as a real process for end-to-end tests (not a test
 * file: tap reports it as "no tests found").
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFerry, writeFerryConfig, type FerryProcess } from '@ferry/testkit';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const ADMIN = { username: 'admin', password: 'e2e-admin-password-1' };

/**
 * Writes a config for a node whose state lives under `dir` (SQLite, or the
 * PostgreSQL URL given), loading `plugins` (npm names; default: fs-local only).
 */
export function writeConfig(dir: string, o: { databaseUrl?: string; extra?: string; plugins?: string[] } = {}): string {
  return writeFerryConfig(path.join(dir, 'ferry.yaml'), {
    dataDir: path.join(dir, 'data'),
    databaseUrl: o.databaseUrl,
    masterKey: 'e2e-master-key-0123456789abcdef',
    admin: ADMIN,
    logLevel: 'info',
    plugins: o.plugins,
    extra: o.extra,
  });
}

export type ServerProcess = FerryProcess;

/** Starts `ferry serve --config <file>` and resolves once it listens. */
export function serve(config: string, extraArgs: string[] = []): Promise<ServerProcess> {
  return startFerry(config, { cwd: ROOT, timeoutMs: 60_000, nodeArgs: extraArgs });
}

/** JSON request with basic or bearer credentials; a token (admin or user). */
export { ferryCall as call, ferryToken as token } from '@ferry/testkit';
