import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import type { FileSession } from './file-session.js';
import { prepareDownload } from './downloads.js';

/** Hash algorithms of GET /api/v2/user/files/checksum. */
export const CHECKSUM_ALGOS = ['md5', 'sha1', 'sha256', 'sha512'] as const;
export type ChecksumAlgo = (typeof CHECKSUM_ALGOS)[number];

export interface FileChecksum {
  path: string;
  size: number;
  algo: ChecksumAlgo;
  checksum: string;
}

/**
 * The checksum of one file of a user, read as a stream from its backend
 * (never held in memory) through the user's session: the path's patterns
 * and the download permission apply, as for a download. No bytes leave the
 * server, so the download transfer quota is not charged and no download
 * event is published.
 */
export async function fileChecksum(s: FileSession, vpath: string, algo: ChecksumAlgo): Promise<FileChecksum> {
  const p = await prepareDownload(s, vpath);
  const hash = crypto.createHash(algo);
  let size = 0;
  if (p.info.size > 0) {
    const fs = await s.vfs.fs(p.r.mount);
    const source = await fs.openRead(p.r.fsPath, { signal: s.signal });
    await pipeline(
      source,
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          size += chunk.length;
          hash.update(chunk);
          s.conn.last_activity = Date.now();
          cb();
        },
      }),
      { signal: s.signal },
    );
  }
  return { path: vpath, size, algo, checksum: hash.digest('hex') };
}
