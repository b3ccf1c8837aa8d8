import t from 'tap';
import { consumeAhead } from '../../src/util/consume-ahead.js';

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

/** Rejects after `ms` (a consumer stuck behind its source never settles). */
function within<T>(p: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

t.test('every item is consumed once, in order', async (t) => {
  async function* source() {
    for (let i = 0; i < 50; i++) {
      if (i % 7 === 0) await new Promise((r) => setImmediate(r));
      yield i;
    }
  }
  const seen: number[] = [];
  const waiting: number[] = [];
  await consumeAhead(
    source(),
    () => 3,
    async (n) => {
      if (n % 5 === 0) await new Promise((r) => setImmediate(r));
      seen.push(n);
    },
    waiting,
  );
  t.same(
    seen,
    Array.from({ length: 50 }, (_, i) => i),
  );
  t.same(waiting, [], 'nothing left waiting');
});

t.test('the items taken are consumed while the source waits for its next one', async (t) => {
  const second = gate();
  let fetched = 0;
  async function* source() {
    yield 'a';
    yield 'b';
    // the next directory is listed only once b has been written (a consumer that waits for the source never gets there)
    await second.opened;
    fetched++;
    yield 'c';
  }
  const seen: string[] = [];
  await within(
    consumeAhead(
      source(),
      () => 10,
      async (s) => {
        seen.push(s);
        if (s === 'b') second.open();
      },
      [],
    ),
  );
  t.same(seen, ['a', 'b', 'c']);
  t.equal(fetched, 1);
});

t.test('the source is asked for more only while at most limit(item) items wait', async (t) => {
  let produced = 0;
  async function* source() {
    for (;;) {
      produced++;
      yield produced;
    }
  }
  const first = gate();
  const waiting: number[] = [];
  let consumed = 0;
  const run = consumeAhead(
    source(),
    (n) => (n < 100 ? 4 : 0),
    async (n) => {
      consumed++;
      if (n === 1) await first.opened;
      if (n >= 20) throw new Error('enough');
    },
    waiting,
  );
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  t.equal(consumed, 1, 'the first item is being consumed');
  t.equal(waiting.length, 5, 'four wait, and the newest one over them');
  t.equal(produced, 6, 'the source was asked for none beyond (the first, then five waiting)');
  first.open();
  await t.rejects(run, { message: 'enough' });
  t.equal(consumed, 20, 'nothing consumed after the failure');
});

t.test('a failed consume: rejects with its error, stops the source, leaves the rest waiting', async (t) => {
  let closed = false;
  let produced = 0;
  async function* source() {
    try {
      for (let i = 0; i < 1000; i++) {
        produced++;
        yield i;
      }
    } finally {
      closed = true;
    }
  }
  const waiting: number[] = [];
  const seen: number[] = [];
  await t.rejects(
    consumeAhead(
      source(),
      () => 3,
      async (n) => {
        seen.push(n);
        await new Promise((r) => setImmediate(r));
        if (n === 2) throw new Error('write failed');
      },
      waiting,
    ),
    { message: 'write failed' },
  );
  t.same(seen, [0, 1, 2], 'nothing consumed after the failure');
  t.ok(closed, 'the source was closed (its finally ran)');
  t.ok(produced < 1000, 'and asked for nothing more');
  t.same(
    waiting,
    Array.from({ length: produced - 3 }, (_, i) => i + 3),
    'the items taken and not consumed are left to the caller',
  );
});

t.test('a failed source: rejects with its error and consumes nothing more', async (t) => {
  const consumedFirst = gate();
  async function* source() {
    yield 1;
    yield 2;
    await consumedFirst.opened;
    throw new Error('listing failed');
  }
  const seen: number[] = [];
  const waiting: number[] = [];
  const hold = gate();
  const run = consumeAhead(
    source(),
    () => 10,
    async (n) => {
      seen.push(n);
      consumedFirst.open();
      await hold.opened;
    },
    waiting,
  );
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  hold.open();
  await t.rejects(run, { message: 'listing failed' });
  t.same(seen, [1], 'the item being consumed finished; the next was not started');
  t.same(waiting, [2]);
});

t.test('an empty source: settles at once', async (t) => {
  async function* source(): AsyncGenerator<number> {
    yield* [];
  }
  let calls = 0;
  await within(
    consumeAhead(
      source(),
      () => 1,
      async () => {
        calls++;
      },
      [],
    ),
  );
  t.equal(calls, 0);
});
