import { CopyObjectCommand, DeleteObjectsCommand, ListObjectsV2Command, type _Object, type S3Client } from '@aws-sdk/client-s3';
import { FsError, FsErrorCode, moveKeyTree } from '@ferry/core';

/**
 * Operations on every key under a prefix (directories on a flat key space).
 * `client` is asked for the client at each request: it throws once the Fs is closed.
 */
export class S3Tree {
  constructor(
    private readonly client: () => S3Client,
    private readonly bucket: string,
  ) {}

  /** Every object under `prefix` (no delimiter), page by page. */
  async *objects(prefix: string, signal?: AbortSignal, pageSize = 1000): AsyncGenerator<_Object[]> {
    let token: string | undefined;
    do {
      const out = await this.client().send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: pageSize, ContinuationToken: token }), {
        abortSignal: signal,
      });
      const page = (out.Contents ?? []).filter((o) => o.Key?.startsWith(prefix));
      if (page.length) yield page;
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
  }

  /** Up to `max` objects under `prefix` (used to tell whether a directory exists or is empty). */
  async firstObjects(prefix: string, max: number, signal?: AbortSignal): Promise<_Object[]> {
    const out = await this.client().send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: max }), {
      abortSignal: signal,
    });
    return out.Contents ?? [];
  }

  /** Deletes keys in batches of 1,000 (DeleteObjects), failing on the first key the server refused. */
  async deleteKeys(keys: string[], signal?: AbortSignal): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const out = await this.client().send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
        { abortSignal: signal },
      );
      const failed = out.Errors?.[0];
      if (failed) {
        throw new FsError(FsErrorCode.Permission, `could not delete ${failed.Key}: ${failed.Code} ${failed.Message ?? ''}`);
      }
    }
  }

  /** Deletes every object under `prefix`; returns how many were deleted. */
  async deleteTree(prefix: string, signal?: AbortSignal): Promise<number> {
    let n = 0;
    for await (const page of this.objects(prefix, signal)) {
      await this.deleteKeys(
        page.map((o) => o.Key!),
        signal,
      );
      n += page.length;
    }
    return n;
  }

  /**
   * Moves every object under `from` to the same relative key under `to`
   * (server-side copies, 8 at a time, then a batch delete per page: the SDK's
   * moveKeyTree), calling onProgress with the running count after each object copied.
   */
  moveTree(
    from: string,
    to: string,
    copySource: (key: string) => string,
    extra: Record<string, unknown>,
    signal?: AbortSignal,
    onProgress?: (moved: number) => void,
  ): Promise<number> {
    return moveKeyTree({
      pages: this.objects(from, signal),
      keyOf: (o) => o.Key!,
      from,
      to,
      copy: async (o, toKey) => {
        await this.client().send(new CopyObjectCommand({ ...extra, Bucket: this.bucket, Key: toKey, CopySource: copySource(o.Key!) }), { abortSignal: signal });
      },
      deleteSources: (page) =>
        this.deleteKeys(
          page.map((o) => o.Key!),
          signal,
        ),
      signal,
      onProgress,
    });
  }
}
