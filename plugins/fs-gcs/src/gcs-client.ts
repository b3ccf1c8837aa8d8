import { createHash } from 'node:crypto';
import { Storage, type StorageOptions } from '@google-cloud/storage';
import { FsError, FsErrorCode } from '@ferry/core';
import { parseCredentials, secretText, type GcsOptions, type GcsPluginConfig } from './config.schema.js';

const clients = new Map<string, Storage>();

/**
 * The Storage client for these credentials and endpoint, shared by every Fs
 * that uses them (one HTTP agent and token cache per identity).
 *
 * - plugin config `endpoint` set: requests go there (an emulator, a proxy);
 *   credentials are sent only with `endpoint_auth: true`;
 * - `automatic_credentials: 1`: Application Default Credentials;
 * - otherwise the service-account JSON of `credentials` (base64).
 */
export function storageFor(o: GcsOptions, cfg: GcsPluginConfig): Storage {
  const creds = secretText(o.credentials);
  const key = createHash('sha256')
    .update(JSON.stringify([cfg.endpoint ?? '', cfg.endpoint_auth ?? false, cfg.project_id ?? '', cfg.max_retries ?? 3, o.automatic_credentials ?? 0, creds]))
    .digest('hex');
  let storage = clients.get(key);
  if (storage) return storage;

  // The client treats maxRetries 0 as "default": switch retries off instead.
  const retries = cfg.max_retries ?? 3;
  const opts: StorageOptions = { retryOptions: retries === 0 ? { autoRetry: false } : { maxRetries: retries } };
  if (cfg.project_id) opts.projectId = cfg.project_id;
  if (o.automatic_credentials !== 1 && creds) {
    let json: Record<string, unknown>;
    try {
      json = parseCredentials(creds);
    } catch (err) {
      throw new FsError(FsErrorCode.Invalid, `gcs: ${(err as Error).message}`, { cause: err });
    }
    opts.credentials = json as StorageOptions['credentials'];
    if (!opts.projectId && typeof json.project_id === 'string') opts.projectId = json.project_id;
  }
  if (cfg.endpoint) {
    opts.apiEndpoint = cfg.endpoint.replace(/\/+$/, '');
    opts.useAuthWithCustomEndpoint = cfg.endpoint_auth ?? false;
    opts.projectId ??= 'ferry';
  }
  storage = new Storage(opts);
  clients.set(key, storage);
  return storage;
}

/** Forgets cached clients (plugin teardown, tests). */
export function clearClients(): void {
  clients.clear();
}
