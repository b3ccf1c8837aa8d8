import path from 'node:path';
import type { SessionQuota } from '@ferry/core';
import type { FileEntry } from 'ssh2';
import { copyData } from './copy-data.js';
import { CHECK_FILE_ALGORITHMS, hashRange } from './file-hash.js';
import type { ExtensionHost } from './extension-host.js';
import { RequestReader } from './sftp-reader.js';
import { sendExtendedReply, sftpString, u64 } from './ssh2-sftp-internals.js';
import { STATUS, SftpStatusError } from './status.js';

/** The extensions these requests implement, as the VERSION names them (hardlink@openssh.com is not: refused). */
export const EXTENDED_REQUESTS: readonly [string, string][] = [
  ['statvfs@openssh.com', '2'],
  ['fstatvfs@openssh.com', '2'],
  ['fsync@openssh.com', '1'],
  ['expand-path@openssh.com', '1'],
  ['home-directory', '1'],
  ['copy-data', '1'],
  ['check-file-name', '1'],
  ['check-file-handle', '1'],
];

/** The block size statvfs reports; sizes are rounded to it. */
const BLOCK = 4096;
/** What statvfs reports free where no quota limits the account: 1 PiB, 2^32 - 1 files. */
const UNLIMITED_BYTES = 2 ** 50;
const UNLIMITED_FILES = 2 ** 32 - 1;
const ST_NOSUID = 2;
/** The largest EXTENDED_REPLY check-file sends (the 256 KiB packets of limits@openssh.com, less its header). */
const MAX_HASH_BYTES = 255 * 1024;

/**
 * statvfs@openssh.com's answer from a quota: total and free blocks of
 * BLOCK bytes and files; without a limit, what is used plus 1 PiB (2^32 - 1
 * files), as Ferry cannot know the storage's free space.
 */
export function statvfsOf(q: SessionQuota): Buffer {
  const bytes = q.size.limit > 0 ? q.size.limit : q.size.used + UNLIMITED_BYTES;
  const files = q.files.limit > 0 ? q.files.limit : q.files.used + UNLIMITED_FILES;
  const freeBlocks = Math.floor(Math.max(0, bytes - q.size.used) / BLOCK);
  const freeFiles = Math.max(0, files - q.files.used);
  const fields = [BLOCK, BLOCK, Math.ceil(bytes / BLOCK), freeBlocks, freeBlocks, files, freeFiles, freeFiles, 0, ST_NOSUID, 255];
  return Buffer.concat(fields.map((n) => u64(n)));
}

/**
 * `~`, `~/...` and `~OWN-NAME/...` as the user's root, then normalised
 * against it; other relative paths against `base` (the start directory).
 */
function expandPath(input: string, username: string, base: string): string {
  const p = input.replace(/\\/g, '/');
  if (!p.startsWith('~')) return path.posix.resolve('/', base, p || '.');
  const slash = p.indexOf('/');
  const who = p.slice(1, slash < 0 ? undefined : slash);
  if (who !== '' && who !== username) throw new SftpStatusError(STATUS.NO_SUCH_FILE, `~${who}: no such home directory`);
  return path.posix.resolve('/', slash < 0 ? '.' : p.slice(slash + 1) || '.');
}

function reply(host: ExtensionHost, id: number, body: Buffer): void {
  if (!sendExtendedReply(host.sftp, id, body)) throw new SftpStatusError(STATUS.FAILURE, 'the answer could not be sent');
}

function nameReply(host: ExtensionHost, id: number, name: string): void {
  host.sftp.name(id, [{ filename: name, longname: name, attrs: {} as FileEntry['attrs'] }]);
}

/** Answers one extended request (one of EXTENDED_REQUESTS, posix-rename, hardlink refused); false for a name it does not know. */
export function handleExtended(host: ExtensionHost, id: number, name: string, data: Buffer | undefined): boolean {
  // (ssh2 hands no data for a request that has none)
  const r = new RequestReader(data ?? Buffer.alloc(0));
  const checked = (op: () => Promise<void>) => host.run(id, op);
  switch (name) {
    case 'posix-rename@openssh.com':
      checked(async () => {
        await host.rename(r.string(), r.string(), true);
        host.sftp.status(id, STATUS.OK);
      });
      return true;
    case 'hardlink@openssh.com':
      checked(() => Promise.reject(new SftpStatusError(STATUS.OP_UNSUPPORTED, 'hard links are not supported')));
      return true;
    case 'statvfs@openssh.com':
      checked(async () => {
        const p = host.path(r.string());
        await host.session.stat(p);
        reply(host, id, statvfsOf(await host.session.quota(p)));
      });
      return true;
    case 'fstatvfs@openssh.com':
      checked(async () => {
        const handle = host.handle(r.bytes());
        if (!handle) throw new SftpStatusError(STATUS.FAILURE, 'invalid handle');
        reply(host, id, statvfsOf(await host.session.quota(handle.path)));
      });
      return true;
    case 'fsync@openssh.com':
      checked(async () => {
        host.onHandle(id, r.bytes(), async (handle) => {
          if (handle.kind === 'dir') throw new SftpStatusError(STATUS.FAILURE, 'the handle is a directory');
          if (handle.kind === 'write') await handle.flush();
          host.sftp.status(id, STATUS.OK);
        });
      });
      return true;
    case 'expand-path@openssh.com':
      checked(async () => nameReply(host, id, expandPath(r.string(), host.session.account.username, host.startDirectory)));
      return true;
    case 'home-directory':
      checked(async () => {
        const who = r.string();
        if (who !== '' && who !== host.session.account.username) throw new SftpStatusError(STATUS.PERMISSION_DENIED, 'only your own home directory is known');
        nameReply(host, id, '/');
      });
      return true;
    case 'copy-data':
      checked(async () => copyData(host, id, r));
      return true;
    case 'check-file-name':
    case 'check-file-handle':
      checked(() => checkFile(host, id, name, r));
      return true;
    default:
      return false;
  }
}

/**
 * check-file-name / check-file-handle (draft-ietf-secsh-filexfer-extensions-00, 3):
 * the first algorithm of the client's list Ferry knows, over a range, whole or in
 * blocks; answered `string "check-file", string algorithm, hashes`.
 */
async function checkFile(host: ExtensionHost, id: number, name: string, r: RequestReader): Promise<void> {
  let file: string;
  if (name === 'check-file-name') file = host.path(r.string());
  else {
    const handle = host.handle(r.bytes());
    if (!handle) throw new SftpStatusError(STATUS.FAILURE, 'invalid handle');
    if (handle.kind !== 'read') throw new SftpStatusError(STATUS.PERMISSION_DENIED, 'check-file-handle needs a file opened for reading');
    file = handle.path;
  }
  const wanted = r
    .string()
    .split(',')
    .map((a) => a.trim().toLowerCase());
  const start = r.u64();
  const length = r.u64();
  const blockSize = r.u32();
  const algorithm = wanted.find((a) => a in CHECK_FILE_ALGORITHMS);
  if (!algorithm)
    throw new SftpStatusError(STATUS.OP_UNSUPPORTED, `none of the hash algorithms asked is supported (${Object.keys(CHECK_FILE_ALGORITHMS).join(', ')} are)`);
  const hashes = await hashRange(host.session, file, { algorithm, start, length, blockSize, maxBytes: MAX_HASH_BYTES });
  reply(host, id, Buffer.concat([sftpString('check-file'), sftpString(algorithm), ...hashes]));
}
