/**
 * @ferry/fs-sftp/lib: the half of the plugin that needs ssh2 and
 * ssh2-sftp-client. The package entry (`@ferry/fs-sftp`) imports this module
 * only when the provider first creates an Fs, so a server that never uses SFTP
 * never loads them. Import it directly to build an SftpFs by hand (tests, tools).
 */
export { SftpFs, CHUNK_SIZE, type SftpFsSettings } from './sftp.fs.js';
export { closeAllPools, poolFor, releasePool, SftpPool, type ConnectSettings } from './sftp-pool.js';
