import {
  FsError,
  FsErrorCode,
  baseName,
  fsErrorFromNode,
  normalizeVirtualPath,
  throwIfFsAborted,
  type FileInfo,
  type OpOptions,
  type SmallFileRead,
} from '@ferry/core';
import { batchIo, type WorkerRead } from './batch-io.js';
import { refuseReserved, type LocalRoot } from './confine.js';
import type { Locator } from './locate.js';
import { isReservedName } from './temp-area.js';

/**
 * Fs.readSmallFiles of a LocalFs (whose stored bytes are the files' bytes):
 * the directory `dir` located as always (held by the batch when there is
 * one), then its files read by the worker through its descriptor. A name
 * that is not one plain entry (or is reserved), a link and a file larger
 * than `max` are answered undefined: the caller reads them the usual way.
 */
export async function readSmallFilesIn(...args: Parameters<typeof readSmallOrLarge>): Promise<SmallFileRead[]> {
  return (await readSmallOrLarge(...args)).map((r) => (r === TOO_LARGE ? undefined : r));
}

/** A regular file found larger than asked for (readSmallOrLarge). */
export const TOO_LARGE = Symbol('too large');

/**
 * Without a batch holding the directory: the worker opens it by its path
 * under the root and reads only when it really is there (batchIo.readAt), in
 * one message for what took an open, a check and a close of the directory
 * besides. Undefined when it is elsewhere (a link on the way) or cannot be
 * opened: the directory is then located as always.
 */
async function readAtPath(confine: LocalRoot, vdir: string, names: readonly string[], max: number): Promise<{ reads: WorkerRead[]; data: Buffer } | undefined> {
  refuseReserved(vdir);
  const dir = vdir === '/' ? confine.root : `${confine.root}${vdir}`;
  return batchIo.readAt(dir, names, max).catch(() => undefined);
}

/**
 * readSmallFilesIn() telling a regular file larger than `max` (TOO_LARGE:
 * known to be a plain file, not read) from the other names it leaves to the
 * usual path (undefined: a link, a name the worker does not take).
 */
export async function readSmallOrLarge(
  locator: Locator,
  reportedSize: (raw: number) => number,
  dir: string,
  names: readonly string[],
  max: number,
  o: OpOptions = {},
): Promise<(SmallFileRead | typeof TOO_LARGE)[]> {
  const vdir = normalizeVirtualPath(dir);
  throwIfFsAborted(o.signal, vdir);
  const plain = (n: string) => n !== '' && n !== '.' && n !== '..' && !n.includes('/') && !n.includes('\0') && !isReservedName(n);
  const asked = names.filter(plain);
  const out: (SmallFileRead | typeof TOO_LARGE)[] = names.map(() => undefined);
  if (asked.length === 0) return out;
  let answer = o.batch ? undefined : await readAtPath(locator.confine, vdir, asked, max);
  if (!answer) {
    const handle = await locator.dirFor(vdir, o.batch);
    try {
      answer = await batchIo.read(handle.path, asked, max);
    } finally {
      await handle.close();
    }
  }
  throwIfFsAborted(o.signal, vdir);
  const byName = new Map(asked.map((n, i) => [n, answer.reads[i]!]));
  names.forEach((name, i) => {
    const r = byName.get(name);
    if (r?.k === 'large') out[i] = TOO_LARGE;
    if (!r || r.k === 'large' || (r.k === 'error' && r.code === 'ELOOP')) return;
    const vpath = vdir === '/' ? `/${name}` : `${vdir}/${name}`;
    if (r.k === 'error') {
      const error =
        r.code === 'NOTREG'
          ? new FsError(FsErrorCode.Invalid, `${vpath}: not a regular file`, { path: vpath })
          : fsErrorFromNode(Object.assign(new Error(r.message), { code: r.code }), vpath);
      out[i] = { error };
      return;
    }
    const info: FileInfo = {
      name: baseName(vpath),
      path: vpath,
      isDir: false,
      size: reportedSize(r.size),
      mtime: new Date(Math.round(r.mtimeMs)),
      mode: r.mode,
    };
    out[i] = { data: answer.data.subarray(r.at, r.at + r.size), info };
  });
  return out;
}
