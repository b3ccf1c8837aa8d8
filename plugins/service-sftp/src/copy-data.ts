import path from 'node:path';
import { CopiedHandle } from './copied-handle.js';
import type { ExtensionHost } from './extension-host.js';
import type { RequestReader } from './sftp-reader.js';
import { STATUS, SftpStatusError } from './status.js';

const unsupported = (message: string) => new SftpStatusError(STATUS.OP_UNSUPPORTED, message);

/**
 * copy-data (draft-ietf-secsh-filexfer-extensions-00, 7): read-from-handle,
 * read-from-offset, read-data-length (0: to the end), write-to-handle,
 * write-to-offset. Done by the storage only (its server-side copy, as
 * OpenSSH's `cp` asks for it: the whole file into one just opened for a new
 * upload); anything else is OP_UNSUPPORTED, with the reason: the client
 * then copies the bytes itself.
 */
export function copyData(host: ExtensionHost, id: number, r: RequestReader): void {
  const from = r.bytes();
  const fromOffset = r.u64();
  const length = r.u64();
  const to = r.bytes();
  const toOffset = r.u64();
  host.onHandle(id, to, async (target) => {
    const source = host.handle(from);
    if (!source) throw new SftpStatusError(STATUS.FAILURE, 'invalid handle');
    if (source.kind !== 'read') throw unsupported('copy-data reads from a file opened for reading');
    if (target.kind !== 'write') throw unsupported('copy-data writes into a file opened for writing');
    const size = source.info.size;
    if (fromOffset !== 0 || toOffset !== 0 || (length !== 0 && length < size)) {
      throw unsupported('copy-data copies whole files only (from offset 0 to the end, into offset 0)');
    }
    if (!target.untouched) throw unsupported('copy-data writes only into a file just opened for a new upload, with nothing written yet');
    if (source.path === target.path) throw new SftpStatusError(STATUS.FAILURE, 'the source and the target are the same file');
    const s = host.session;
    // checked before the upload begun at OPEN is dropped: a refusal leaves the target as it was
    for (const dir of [path.posix.dirname(source.path), path.posix.dirname(target.path)]) {
      if (!s.hasPermission(dir, 'copy')) throw new SftpStatusError(STATUS.PERMISSION_DENIED, `copying needs the "copy" permission on ${dir}`);
    }
    if (!(await s.copiesOnServer(source.path, target.path))) throw unsupported('the storage cannot copy these files server side');
    await target.discard();
    const copied = new CopiedHandle(s, target.path, size);
    host.replace(to, copied);
    try {
      await s.copy(source.path, target.path);
    } catch (err) {
      copied.failed(err);
      throw err;
    }
    host.sftp.status(id, STATUS.OK);
  });
}
