/**
 * @ferry/fs-gcs/lib: the half of the plugin that needs @google-cloud/storage.
 * The package entry (`@ferry/fs-gcs`) imports this module only when the
 * provider first creates an Fs, so a server that never uses GCS never loads
 * the SDK. Import it directly to build a GcsFs by hand (tests, tools).
 */
export { GcsFs, type GcsSettings } from './gcs.fs.js';
export { Crc32cValidator, clearClients, storageFor } from './gcs-client.js';
