import type { ZipWriter } from './zip-writer.js';

/**
 * Writes a whole archive: `fill` adds the entries to `zip`, then the archive
 * is finalized, while `writing` (the consumer the caller piped `zip` into,
 * e.g. a file write) takes its bytes. Resolves to what `writing` resolved to.
 *
 * On failure the archive is destroyed, so the consumer ends with an error
 * too (and can remove what it wrote), and the cause is reported: the
 * consumer's own error when it failed first (a full disk, a quota: the
 * writer was destroyed by it, the entry being added failed only because of
 * that), otherwise the error of `fill` or of the finalization.
 */
export async function fillZip<T>(zip: ZipWriter, writing: Promise<T>, fill: () => Promise<void>): Promise<T> {
  // handled below; not an unhandled rejection while `fill` runs
  writing.catch(() => undefined);
  try {
    await fill();
    await zip.finalize();
    return await writing;
  } catch (err) {
    const byWrite = zip.destroyed;
    if (!zip.destroyed) zip.destroy(err instanceof Error ? err : new Error(String(err)));
    const writeErr = await writing.then(
      () => undefined,
      (e: unknown) => e,
    );
    throw byWrite && writeErr !== undefined ? writeErr : err;
  }
}
