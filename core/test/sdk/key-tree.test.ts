import t from 'tap';
import { FsErrorCode } from '../../src/fs/fs-error.js';
import { forEachConcurrently, moveKeyTree } from '../../src/sdk/key-tree.js';

/** A promise settled from outside. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}
const tick = () => new Promise((r) => setImmediate(r));

async function* pagesOf<T>(pages: T[][]): AsyncGenerator<T[]> {
  for (const p of pages) yield p;
}

t.test('forEachConcurrently', async (t) => {
  t.test('runs every item, never more than the limit at once', async (t) => {
    const gates = Array.from({ length: 5 }, deferred);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const done = forEachConcurrently([0, 1, 2, 3, 4], 2, async (item, index) => {
      t.equal(item, index);
      started.push(item);
      most = Math.max(most, ++running);
      await gates[item]!.promise;
      running--;
    });
    await tick();
    t.same(started, [0, 1], 'two started, the rest wait');
    gates[1]!.resolve();
    await tick();
    t.same(started, [0, 1, 2], 'a slot freed starts the next item in order');
    for (const g of gates) g.resolve();
    await done;
    t.same(started, [0, 1, 2, 3, 4]);
    t.equal(most, 2);
  });

  t.test('an empty list and a limit below one', async (t) => {
    await forEachConcurrently([], 4, async () => void t.fail('no item'));
    const seen: string[] = [];
    await forEachConcurrently(['a', 'b'], 0, async (x) => void seen.push(x));
    t.same(seen, ['a', 'b'], 'a limit of 0 still runs one at a time');
  });

  t.test('after a failure no item starts, the running ones are waited for, the first error is thrown', async (t) => {
    const slow = deferred();
    const started: number[] = [];
    let slowEnded = false;
    const done = forEachConcurrently([0, 1, 2, 3], 2, async (item) => {
      started.push(item);
      if (item === 0) {
        await slow.promise;
        slowEnded = true;
        throw new Error('second failure');
      }
      if (item === 1) throw new Error('first failure');
    });
    let settled = false;
    done.catch(() => undefined).finally(() => (settled = true));
    await tick();
    t.equal(settled, false, 'still waiting for the item in flight');
    slow.resolve();
    await t.rejects(done, { message: 'first failure' });
    t.ok(slowEnded, 'the item in flight ended before the call settled');
    t.same(started, [0, 1], 'items 2 and 3 never started');
  });

  t.test('an aborted signal starts nothing more and rejects ABORTED', async (t) => {
    const ac = new AbortController();
    const started: number[] = [];
    await t.rejects(
      forEachConcurrently(
        [0, 1, 2],
        1,
        async (item) => {
          started.push(item);
          if (item === 0) ac.abort();
        },
        ac.signal,
      ),
      { code: FsErrorCode.Aborted },
    );
    t.same(started, [0]);
  });
});

t.test('moveKeyTree', async (t) => {
  t.test('copies each key to the same relative key under the target, then deletes each page', async (t) => {
    const log: string[] = [];
    const progress: number[] = [];
    const moved = await moveKeyTree({
      pages: pagesOf([['a/b/', 'a/b/x', 'a/b/sub/y'], ['a/b/z']]),
      keyOf: (k) => k,
      from: 'a/b/',
      to: 'c/',
      concurrency: 1,
      copy: async (k, to) => void log.push(`copy ${k} -> ${to}`),
      deleteSources: async (keys) => void log.push(`delete ${keys.join(' ')}`),
      onProgress: (n) => progress.push(n),
    });
    t.equal(moved, 4);
    t.same(log, ['copy a/b/ -> c/', 'copy a/b/x -> c/x', 'copy a/b/sub/y -> c/sub/y', 'delete a/b/ a/b/x a/b/sub/y', 'copy a/b/z -> c/z', 'delete a/b/z']);
    t.same(progress, [1, 2, 3, 4]);
  });

  t.test('keeps to its concurrency (default 8)', async (t) => {
    const keys = Array.from({ length: 20 }, (_, i) => `p/${i}`);
    let running = 0;
    let most = 0;
    await moveKeyTree({
      pages: pagesOf([keys]),
      keyOf: (k) => k,
      from: 'p/',
      to: 'q/',
      copy: async () => {
        most = Math.max(most, ++running);
        await tick();
        running--;
      },
      deleteSources: async () => undefined,
    });
    t.equal(most, 8);
  });

  t.test('a failed copy deletes no source of its page and stops the move', async (t) => {
    const deleted: string[] = [];
    const copied: string[] = [];
    await t.rejects(
      moveKeyTree({
        pages: pagesOf([['d/1', 'd/2'], ['d/3']]),
        keyOf: (k) => k,
        from: 'd/',
        to: 'e/',
        concurrency: 1,
        copy: async (k) => {
          if (k === 'd/2') throw new Error('copy refused');
          copied.push(k);
        },
        deleteSources: async (keys) => void deleted.push(...keys),
      }),
      { message: 'copy refused' },
    );
    t.same(copied, ['d/1']);
    t.same(deleted, [], 'every object is still at its source');
  });

  t.test('a failed delete stops the move', async (t) => {
    const copied: string[] = [];
    await t.rejects(
      moveKeyTree({
        pages: pagesOf([['d/1'], ['d/2']]),
        keyOf: (k) => k,
        from: 'd/',
        to: 'e/',
        copy: async (k) => void copied.push(k),
        deleteSources: async () => {
          throw new Error('delete refused');
        },
      }),
      { message: 'delete refused' },
    );
    t.same(copied, ['d/1'], 'the next page is not copied');
  });

  t.test('an abort during a page deletes nothing more', async (t) => {
    const ac = new AbortController();
    const deleted: string[] = [];
    await t.rejects(
      moveKeyTree({
        pages: pagesOf([['d/1', 'd/2']]),
        keyOf: (k) => k,
        from: 'd/',
        to: 'e/',
        concurrency: 1,
        signal: ac.signal,
        copy: async () => ac.abort(),
        deleteSources: async (keys) => void deleted.push(...keys),
      }),
      { code: FsErrorCode.Aborted },
    );
    t.same(deleted, []);
  });

  t.test('items other than strings, and an empty tree', async (t) => {
    const targets: string[] = [];
    const moved = await moveKeyTree({
      pages: pagesOf([[{ name: 'x/a', size: 1 }]]),
      keyOf: (o) => o.name,
      from: 'x/',
      to: 'y/z/',
      copy: async (o, to) => void targets.push(`${o.size}:${to}`),
      deleteSources: async () => undefined,
    });
    t.equal(moved, 1);
    t.same(targets, ['1:y/z/a']);
    t.equal(
      await moveKeyTree({
        pages: pagesOf<string>([]),
        keyOf: (k) => k,
        from: 'a/',
        to: 'b/',
        copy: async () => void t.fail(),
        deleteSources: async () => void t.fail(),
      }),
      0,
    );
  });
});
