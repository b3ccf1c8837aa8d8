import t from 'tap';
import { derivedFromOptions } from '../../src/sdk/derived-options.js';

t.test('derived once per frozen options object; every time otherwise; failures not kept', async (t) => {
  let runs = 0;
  let fail = false;
  const derive = derivedFromOptions((o: { n: number }) => {
    runs++;
    if (fail) throw new Error('invalid');
    return { twice: o.n * 2 };
  });
  const frozen = Object.freeze({ n: 2 });
  const a = derive(frozen);
  t.same(a, { twice: 4 });
  t.equal(derive(frozen), a, 'the same value for the same frozen object');
  t.equal(runs, 1);
  t.same(derive(Object.freeze({ n: 2 })), { twice: 4 });
  t.equal(runs, 2, 'another object, derived again');
  const open = { n: 3 };
  t.same(derive(open), { twice: 6 });
  open.n = 4;
  t.same(derive(open), { twice: 8 }, 'an object that is not frozen may change: derived every time');
  t.equal(runs, 4);
  fail = true;
  const bad = Object.freeze({ n: 1 });
  t.throws(() => derive(bad), /invalid/);
  fail = false;
  t.same(derive(bad), { twice: 2 }, 'a failure is not kept');
});
