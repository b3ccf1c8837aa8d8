import t from 'tap';
import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactionContext } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/knex';
import { createTestApp } from '../../src/testing.js';
import { releaseOrmContextsWhenIdle, storageUsesAsyncHooks } from '../../src/data/async-context.js';

/**
 * core/src/data/async-context.ts: MikroORM's async contexts are disabled
 * once none of their runs is in progress (no promise hooks for every other
 * request), and still give each transaction its own context while it runs.
 */
const enabled = (s: AsyncLocalStorage<unknown>) => (s as unknown as { enabled: boolean }).enabled;

t.test(
  'transaction contexts: own store while running, disabled once settled',
  { skip: !storageUsesAsyncHooks() && 'AsyncLocalStorage without async_hooks on this Node' },
  async (t) => {
    const ta = await createTestApp({ plugins: [] });
    t.teardown(() => ta.close());
    t.ok(releaseOrmContextsWhenIdle(), 'installed (openOrm did it already)');
    const storage = (TransactionContext as unknown as { storage: AsyncLocalStorage<unknown> }).storage;
    const em = ta.app.orm.em.fork() as unknown as SqlEntityManager;
    t.notOk(enabled(storage), 'after startup (first admin, migrations): disabled');

    // two transactions at once: each sees its own entity manager, through awaits
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen: boolean[] = [];
    const one = (wait: boolean) =>
      em.fork().transactional(async (tem) => {
        if (wait) await gate;
        await tem.execute('select 1 as one');
        await new Promise((r) => setImmediate(r));
        seen.push(TransactionContext.getEntityManager(tem.name) === tem);
        return 'done';
      });
    const a = one(true);
    await new Promise((r) => setImmediate(r));
    t.ok(enabled(storage), 'enabled while a transaction runs');
    const b = one(false);
    release();
    t.same(await Promise.all([a, b]), ['done', 'done'], 'both committed');
    t.same(seen, [true, true], 'each saw its own context after awaits');
    t.notOk(enabled(storage), 'disabled once the last one settled');
    t.equal(TransactionContext.getEntityManager(em.name), undefined, 'no context outside');

    await t.rejects(
      em.fork().transactional(async () => {
        throw new Error('refused');
      }),
      /refused/,
      'a failed transaction fails as before',
    );
    t.notOk(enabled(storage), 'and leaves the context disabled');
  },
);

t.test(
  'other AsyncLocalStorage instances are left alone',
  { skip: !storageUsesAsyncHooks() && 'AsyncLocalStorage without async_hooks on this Node' },
  async (t) => {
    releaseOrmContextsWhenIdle();
    const mine = new AsyncLocalStorage<string>();
    t.equal(
      await mine.run('x', async () => {
        await new Promise((r) => setImmediate(r));
        return mine.getStore();
      }),
      'x',
      'store kept across awaits',
    );
    t.ok(enabled(mine), 'still enabled after its run settled');
    const later = await new Promise((r) => mine.run('y', () => setImmediate(() => r(mine.getStore()))));
    t.equal(later, 'y', 'a callback scheduled in the run still sees the store');
    mine.disable();
  },
);
