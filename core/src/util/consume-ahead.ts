/**
 * Consumes the items of `source` in order while the source is already asked
 * for the next ones: when the source has to wait for its next item (a zip's
 * walk listing the next directory), the items taken before it are consumed
 * meanwhile, instead of waiting with it. The source is asked for more only
 * while at most `limit(item)` items wait (counting the newest), so what it
 * prepares ahead (reads started for each item) stays bounded.
 *
 * `waiting` holds the items taken and not yet consumed: when this rejects,
 * the caller cleans them up. Rejects with the first failure of either side;
 * then nothing more is consumed, the source is asked for nothing more (its
 * return() runs), and this settles only once the source has stopped.
 */
export async function consumeAhead<T>(source: AsyncIterable<T>, limit: (item: T) => number, consume: (item: T) => Promise<void>, waiting: T[]): Promise<void> {
  let failure: { err: unknown } | undefined;
  let ended = false;
  // each side waits on a promise the other resolves (resolving one already resolved does nothing)
  let wakeConsumer: (() => void) | undefined;
  let wakeSource: (() => void) | undefined;
  const taking = (async () => {
    try {
      for await (const item of source) {
        waiting.push(item);
        wakeConsumer?.();
        const max = limit(item);
        while (failure === undefined && waiting.length > max) await new Promise<void>((r) => (wakeSource = r));
        if (failure !== undefined) return;
      }
    } catch (err) {
      failure ??= { err };
    } finally {
      ended = true;
      wakeConsumer?.();
    }
  })();
  try {
    while (failure === undefined) {
      if (waiting.length === 0) {
        if (ended) break;
        await new Promise<void>((r) => (wakeConsumer = r));
        continue;
      }
      await consume(waiting.shift()!);
      wakeSource?.();
    }
  } catch (err) {
    failure ??= { err };
  }
  wakeSource?.();
  await taking;
  if (failure !== undefined) throw failure.err;
}
