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
  let wakeConsumer: (() => void) | undefined;
  let wakeSource: (() => void) | undefined;
  const wake = (which: 'consumer' | 'source') => {
    const w = which === 'consumer' ? wakeConsumer : wakeSource;
    if (which === 'consumer') wakeConsumer = undefined;
    else wakeSource = undefined;
    w?.();
  };
  const taking = (async () => {
    try {
      for await (const item of source) {
        waiting.push(item);
        wake('consumer');
        const max = limit(item);
        while (failure === undefined && waiting.length > max) await new Promise<void>((r) => (wakeSource = r));
        if (failure !== undefined) return;
      }
    } catch (err) {
      failure ??= { err };
    } finally {
      ended = true;
      wake('consumer');
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
      wake('source');
    }
  } catch (err) {
    failure ??= { err };
  }
  wake('source');
  await taking;
  if (failure !== undefined) throw failure.err;
}
