// PathWrites (src/vfs/quota-tracker.ts): what concurrent writes to one path replace, a removal
// heard by the writes in progress (a failed one not), and the path's turn that keeps this process's publishes and
// removals of a path one at a time.
import 'reflect-metadata';
import t from 'tap';
import { setImmediate as tick } from 'node:timers/promises';
import { PathWrites } from '../../src/vfs/quota-tracker.js';

t.test('the second of two writes replaces the first one’s file, not what it saw', async (t) => {
  const w = new PathWrites();
  const a = w.begin('k').seen({ size: 0, existed: false });
  const b = w.begin('k').seen({ size: 0, existed: false });
  t.same(a.published(10), { size: 0, existed: false });
  t.same(b.published(20), { size: 10, existed: true });
  a.end();
  b.end();
});

t.test('a removal is heard by the writes in progress; a path nobody writes is not kept', async (t) => {
  const w = new PathWrites();
  const a = w.begin('k').seen({ size: 5, existed: true });
  t.equal(await w.removing('k', async () => 'gone'), 'gone', "the removal's answer");
  t.same(a.replaced(), { size: 0, existed: false });
  t.same(a.published(7), { size: 0, existed: false });
  await t.rejects(
    w.removing('k', async () => Promise.reject(new Error('busy'))),
    { message: 'busy' },
    'a failed removal is thrown',
  );
  t.same(a.replaced(), { size: 7, existed: true }, 'and changes nothing: the write still replaces its own file');
  a.end();
  await w.removing('other', async () => undefined);
  const b = w.begin('other').seen({ size: 3, existed: true });
  t.same(b.replaced(), { size: 3, existed: true }, 'a removal before the write began is what its own stat saw');
  b.end();
});

t.test('turns: one at a time per path, in the order asked; other paths do not wait', async (t) => {
  const w = new PathWrites();
  const order: string[] = [];
  const end1 = await w.turn('k');
  const second = w.turn('k').then((end) => (order.push('second'), end));
  const third = w.turn('k').then((end) => (order.push('third'), end));
  const elsewhere = await w.turn('j');
  order.push('elsewhere');
  await tick();
  t.same(order, ['elsewhere'], 'the path is taken until its turn ends');
  end1();
  end1();
  const end2 = await second;
  await tick();
  t.same(order, ['elsewhere', 'second'], 'ending twice hands over once');
  end2();
  const end3 = await third;
  t.same(order, ['elsewhere', 'second', 'third']);
  end3();
  elsewhere();
  const again = await w.turn('k');
  const removal = w.removing('k', async () => undefined);
  again();
  await removal;
  (await w.turn('k'))();
  t.pass('a removal waits for the turn and gives it back');
});
