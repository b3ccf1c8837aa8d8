import { BlobServiceClient, ContainerClient, StorageSharedKeyCredential, type StoragePipelineOptions } from '@azure/storage-blob';
import type { AzBlobSettings } from './config.schema.js';

const PIPELINE: StoragePipelineOptions = {
  // A file server answers a waiting client: retry briefly rather than for minutes.
  retryOptions: { maxTries: 3, retryDelayInMs: 500, maxRetryDelayInMs: 4000 },
  userAgentOptions: { userAgentPrefix: 'ferry-fs-azblob' },
};

/**
 * The container client for one Fs: from a SAS URL (account or container
 * level), or from an account name and key on the service URL.
 */
export function createContainerClient(s: AzBlobSettings): ContainerClient {
  if (s.sasUrl) {
    const url = new URL(s.sasUrl);
    const segments = url.pathname.split('/').filter(Boolean);
    if (segments.at(-1) === s.container) return new ContainerClient(s.sasUrl, undefined, PIPELINE);
    return new BlobServiceClient(s.sasUrl, undefined, PIPELINE).getContainerClient(s.container);
  }
  const cred = new StorageSharedKeyCredential(s.accountName, s.accountKey);
  return new BlobServiceClient(s.serviceUrl, cred, PIPELINE).getContainerClient(s.container);
}
