import t from 'tap';
import { deepFreeze } from '../../src/util/deep-freeze.js';

t.test('plain objects and arrays are frozen all the way down; class instances are left alone', async (t) => {
  const buf = Buffer.from('abc');
  const date = new Date(0);
  const v = { a: { b: [1, { c: 2 }] }, buf, date, nil: null, bare: Object.assign(Object.create(null) as object, { x: { y: 1 } }) };
  t.equal(deepFreeze(v), v, 'returns its argument');
  t.ok(Object.isFrozen(v));
  t.ok(Object.isFrozen(v.a));
  t.ok(Object.isFrozen(v.a.b));
  t.ok(Object.isFrozen(v.a.b[1]));
  t.ok(Object.isFrozen((v.bare as { x: object }).x), 'an object without a prototype is a plain object');
  t.notOk(Object.isFrozen(buf), 'a Buffer is not frozen (it cannot be)');
  t.notOk(Object.isFrozen(date), 'a Date is not frozen');
  t.throws(() => {
    (v.a.b[1] as { c: number }).c = 3;
  }, TypeError);
  t.equal(deepFreeze(5), 5, 'a primitive as it is');
  t.equal(deepFreeze(null), null);
});
