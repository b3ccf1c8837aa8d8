/**
 * @ferry/fs-azblob/lib: the half of the plugin that needs @azure/storage-blob.
 * The package entry (`@ferry/fs-azblob`) imports this module only when the
 * provider first creates an Fs, so a server that never uses Azure never loads
 * the SDK. Import it directly to build an AzBlobFs or a container client by
 * hand (tests, tools).
 */
export { AzBlobFs } from './azblob.fs.js';
export {
  CLIENT_IDLE_MS,
  acquireContainerClient,
  clearContainerClients,
  containerClientCount,
  createContainerClient,
  setContainerClientIdleMs,
} from './az-client.js';
