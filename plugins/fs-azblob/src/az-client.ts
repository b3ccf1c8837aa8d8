import { AnonymousCredential, ContainerClient, StorageSharedKeyCredential, newPipeline, type Pipeline, type StoragePipelineOptions } from '@azure/storage-blob';
import { ClientCache, FsError, FsErrorCode, type ClientLease } from '@ferry/core';
import { DEFAULT_AZ_TIMEOUTS, isHttpUrl, type AzBlobSettings, type AzTimeouts } from './config.schema.js';

/** The parts of @azure/core-rest-pipeline's request and pipeline this module touches. */
interface CoreRequest {
  abortSignal?: AbortSignal;
}
interface CorePolicy {
  name: string;
  sendRequest(request: CoreRequest, next: (request: CoreRequest) => Promise<unknown>): Promise<unknown>;
}
interface CorePipeline {
  addPolicy(policy: CorePolicy, options?: { afterPhase?: string }): void;
  getOrderedPolicies(): { name: string }[];
}

const TRY_TIMEOUT_POLICY = 'ferryTryTimeout';

/**
 * Bounds each try of each request on the client side: the answer's headers must
 * arrive within `ms` (the SDK's tryTimeoutInMs only asks the server for a
 * server-side timeout, so a server that accepts and never answers would hang
 * the request forever). The expiry surfaces as a TimeoutError (UNAVAILABLE),
 * not as the AbortError of a client that went away. The timer is our own
 * (unref'd, always cleared): the HTTP client's `request.timeout` timer is left
 * pending when a request fails.
 */
function tryTimeoutPolicy(ms: number): CorePolicy {
  return {
    name: TRY_TIMEOUT_POLICY,
    async sendRequest(request, next) {
      const caller = request.abortSignal;
      const expiry = new AbortController();
      const timer = setTimeout(() => expiry.abort(), ms);
      timer.unref();
      request.abortSignal = caller ? AbortSignal.any([caller, expiry.signal]) : expiry.signal;
      try {
        return await next(request);
      } catch (err) {
        if (expiry.signal.aborted && !caller?.aborted) {
          throw Object.assign(new Error(`Azure Blob did not answer within ${ms / 1000} s`), { name: 'TimeoutError', code: 'ETIMEDOUT', cause: err });
        }
        throw err;
      } finally {
        clearTimeout(timer);
        request.abortSignal = caller;
      }
    },
  };
}

/** A file server answers a waiting client: retry briefly rather than for minutes. */
function pipelineOptions(timeouts: AzTimeouts): StoragePipelineOptions {
  return {
    retryOptions: { maxTries: 3, retryDelayInMs: 500, maxRetryDelayInMs: 4000, tryTimeoutInMs: timeouts.tryTimeoutMs },
    userAgentOptions: { userAgentPrefix: 'ferry-fs-azblob' },
  };
}

/**
 * Adds the try timeout to the core pipeline the storage SDK builds (once, on the
 * first client) and caches on its Pipeline object; every client derived from the
 * container client (blob, block blob) shares it.
 */
function addTryTimeout(pipeline: Pipeline, ms: number): void {
  const core = (pipeline as unknown as { _corePipeline?: CorePipeline })._corePipeline;
  if (!core) throw new Error('fs-azblob: the storage SDK no longer exposes its request pipeline; the try timeout cannot be set');
  if (!core.getOrderedPolicies().some((p) => p.name === TRY_TIMEOUT_POLICY)) core.addPolicy(tryTimeoutPolicy(ms), { afterPhase: 'Retry' });
}

/**
 * The container client for one Fs: from a SAS URL (account or container
 * level), or from an account name and key on the service URL. Every request
 * has a client-side time limit per try (see tryTimeoutPolicy).
 */
export function createContainerClient(s: AzBlobSettings, timeouts: AzTimeouts = DEFAULT_AZ_TIMEOUTS): ContainerClient {
  let url: string;
  let pipeline: Pipeline;
  if (s.sasUrl) {
    if (!isHttpUrl(s.sasUrl)) throw new FsError(FsErrorCode.Invalid, 'azblob: sas_url must be an http:// or https:// URL');
    const parsed = new URL(s.sasUrl.trim());
    const segments = parsed.pathname.split('/').filter(Boolean);
    pipeline = newPipeline(new AnonymousCredential(), pipelineOptions(timeouts));
    if (segments.at(-1) === s.container) url = s.sasUrl;
    else {
      // account-level SAS: the container goes into the path, before the query
      parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/${encodeURIComponent(s.container)}`;
      url = parsed.toString();
    }
  } else {
    pipeline = newPipeline(new StorageSharedKeyCredential(s.accountName, s.accountKey), pipelineOptions(timeouts));
    url = `${s.serviceUrl}/${encodeURIComponent(s.container)}`;
  }
  const client = new ContainerClient(url, pipeline);
  addTryTimeout(pipeline, timeouts.tryTimeoutMs);
  return client;
}

/** How long a container client no Fs holds is kept for the next session (ms). */
export const CLIENT_IDLE_MS = 60_000;

/**
 * Nothing to free: a ContainerClient owns no socket, agent or timer. Every
 * pipeline the storage SDK builds sends through one process-wide HTTP client
 * (@azure/storage-common's getCachedDefaultHttpClient(), a NodeHttpClient with
 * keep-alive agents), so connections are shared by all clients anyway; what a
 * client of its own per session cost was building the credential, the
 * pipeline and the client, and the core pipeline on its first request.
 */
const destroyClient = (): void => undefined;

let clients = new ClientCache<ContainerClient>({ idleMs: CLIENT_IDLE_MS, destroy: destroyClient });

/**
 * What makes two container clients differ: every input of
 * createContainerClient() (credentials, where they point, the container, the
 * time limits its pipeline is built with). Not the key prefix nor the part
 * sizes, concurrency or access tier: AzBlobFs applies those per request.
 */
function clientIdentity(s: AzBlobSettings, t: AzTimeouts): unknown[] {
  return ['azblob-container', s.sasUrl, s.serviceUrl, s.accountName, s.accountKey, s.container, t.tryTimeoutMs, t.idleTimeoutMs];
}

/**
 * The container client of these settings, shared by every Fs with the same
 * identity (see clientIdentity); give it back with release() when the Fs
 * closes. A client nobody holds is dropped after CLIENT_IDLE_MS.
 */
export function acquireContainerClient(s: AzBlobSettings, timeouts: AzTimeouts = DEFAULT_AZ_TIMEOUTS): ClientLease<ContainerClient> {
  return clients.acquire(clientIdentity(s, timeouts), () => createContainerClient(s, timeouts));
}

/** Drops every shared container client (plugin teardown, tests). */
export function clearContainerClients(): void {
  clients.clear();
}

/** Container clients kept, held or idle (tests). */
export function containerClientCount(): number {
  return clients.size;
}

/** Tests: keep idle clients for `ms` instead of CLIENT_IDLE_MS (the clients kept are dropped). */
export function setContainerClientIdleMs(ms: number): void {
  clients.clear();
  clients = new ClientCache<ContainerClient>({ idleMs: ms, destroy: destroyClient });
}
