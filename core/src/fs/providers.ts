/**
 * FilesystemConfig.provider numbers (public API: stored in the database and
 * in backups; a number is never reused). Each is registered by the plugin
 * that implements it (plugins/fs-*).
 */
export const FsProvider = {
  Local: 0,
  S3: 1,
  GoogleCloudStorage: 2,
  AzureBlob: 3,
  EncryptedLocal: 4,
  Sftp: 5,
  Http: 6,
} as const;
export type FsProvider = (typeof FsProvider)[keyof typeof FsProvider];
