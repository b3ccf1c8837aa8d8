import type { Readable } from 'node:stream';
import { ByteCounter, FsError, FsErrorCode, handled, onAbort, type ReadOptions, type WriteHandle, type WriteOptions, type WriteResult } from '@ferry/core';
import type { HttpFsClient } from './client.js';

/** Linux open(2) flags as the protocol's `flags` parameter carries them (Go's os.O_* on Linux). */
export const WIRE_O_WRONLY = 0x1;
export const WIRE_O_CREAT = 0x40;
export const WIRE_O_EXCL = 0x80;
/** `checks` bit: the parent directory must exist (SFTPGo's CheckParentDir). */
export const CHECK_PARENT_DIR = 1;

/** What an upload needs from its Fs besides the client. */
export interface UploadPeer {
  openRead(path: string, o: ReadOptions): Promise<Readable>;
  exists(path: string, signal?: AbortSignal): Promise<boolean>;
  setMtime(path: string, mtime: Date, signal?: AbortSignal): Promise<void>;
  removeQuietly(path: string): Promise<void>;
}

/**
 * An atomic upload over a protocol that has none: the bytes stream to a
 * hidden temporary sibling (`POST /create/{tmp}` with O_CREAT|O_EXCL), and
 * only once the server acknowledged every byte is the temporary file
 * (optionally stamped with mtime and shown to `beforePublish`) renamed over
 * the destination, which POSIX rename semantics replace atomically.
 *
 * Any failure before the rename (abort(), the signal, the writer destroying
 * `stream`, a server error, a throwing hook, EXISTS with overwrite: false)
 * cancels the request, removes the temporary file and only then rejects
 * `done`, so the destination is never partial and nothing is left behind.
 * Once the rename request is sent the upload is committed: abort() then waits
 * for the outcome instead of cancelling it.
 */
export function startUpload(client: HttpFsClient, peer: UploadPeer, path: string, tmp: string, o: WriteOptions): WriteHandle {
  const ac = new AbortController();
  const stream = new ByteCounter();
  /** abort(), the signal or the response timeout: always the reported reason. */
  let explicit: unknown;
  /** The body stream died (writer destroyed it, or the transport did). */
  let streamError: unknown;
  let committed = false;
  let responseTimer: NodeJS.Timeout | undefined;

  const stop = (err: unknown): void => {
    ac.abort(err);
    if (!stream.destroyed) stream.destroy(err instanceof Error ? err : FsError.aborted(path));
  };
  const failExplicit = (err: unknown): void => {
    if (committed || explicit !== undefined) return;
    explicit = err;
    stop(err);
  };
  const failStream = (err: unknown): void => {
    if (committed || explicit !== undefined || streamError !== undefined) return;
    streamError = err;
    stop(err);
  };
  const firstFailure = (): unknown => explicit ?? streamError;
  const interrupted = (cause: unknown) => new FsError(FsErrorCode.Aborted, `${path}: upload interrupted`, { path, cause });

  // Errors are reported through `done`; the writer destroying the stream
  // (failing source) interrupts the upload.
  stream.on('error', (err) => failStream(err instanceof FsError ? err : interrupted(err)));
  stream.on('close', () => {
    if (!stream.writableFinished) failStream(interrupted(undefined));
  });
  // Once every byte went out, the server has request_timeout to answer.
  stream.on('end', () => {
    const ms = client.settings.requestTimeoutMs;
    responseTimer = setTimeout(
      () => failExplicit(new FsError(FsErrorCode.Unavailable, `${path}: httpfs server did not confirm the upload within ${ms} ms`, { path })),
      ms,
    );
    responseTimer.unref();
  });
  const stopSignal = onAbort(o.signal, (reason) => failExplicit(new FsError(FsErrorCode.Aborted, `${path}: operation aborted`, { path, cause: reason })));

  async function run(): Promise<WriteResult> {
    try {
      await client.call({
        method: 'POST',
        op: 'create',
        path: tmp,
        query: { flags: WIRE_O_WRONLY | WIRE_O_CREAT | WIRE_O_EXCL, checks: CHECK_PARENT_DIR },
        body: stream,
        contentType: o.contentType ?? 'application/octet-stream',
        signal: ac.signal,
        deadlineMs: 0,
        headersTimeoutMs: 0,
      });
      clearTimeout(responseTimer);
      if (firstFailure() !== undefined) throw firstFailure();
      const size = stream.bytes;
      if (o.mtime) await peer.setMtime(tmp, o.mtime, ac.signal);
      if (o.beforePublish) {
        await o.beforePublish({ size, openRead: () => peer.openRead(tmp, { signal: ac.signal }) });
      }
      if (firstFailure() !== undefined) throw firstFailure();
      if (o.overwrite === false && (await peer.exists(path, ac.signal))) throw FsError.exists(path);
      if (firstFailure() !== undefined) throw firstFailure();
      committed = true;
      // No signal: a rename that reached the server must be allowed to finish.
      await client.call({ method: 'PATCH', op: 'rename', path: tmp, query: { target: path } });
      return { size };
    } catch (err) {
      // A server verdict (e.g. NOT_FOUND for a missing parent) beats the body
      // stream dying as a consequence of it; an explicit abort beats both.
      const verdict = err instanceof FsError && err.code !== FsErrorCode.Aborted ? err : undefined;
      const reason = explicit ?? verdict ?? streamError ?? err;
      committed = false;
      failStream(reason);
      await peer.removeQuietly(tmp);
      throw reason;
    } finally {
      clearTimeout(responseTimer);
      stopSignal();
    }
  }

  const done = handled(run());
  return {
    stream,
    done,
    async abort(reason?: unknown): Promise<void> {
      failExplicit(new FsError(FsErrorCode.Aborted, `${path}: upload aborted`, { path, cause: reason }));
      await done.then(
        () => undefined,
        () => undefined,
      );
    },
  };
}
