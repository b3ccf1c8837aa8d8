import t from 'tap';
import { setBounded } from '../../src/util/bounded-map.js';

// setBounded (core/src/util/bounded-map.ts): a map kept to `max` entries, the oldest making room.

t.test('the oldest entry makes room once full; a key set again takes none', async (t) => {
  const m = new Map<string, number>();
  t.equal(setBounded(m, 'a', 1, 3), 1, 'returns the value');
  setBounded(m, 'b', 2, 3);
  setBounded(m, 'c', 3, 3);
  t.same([...m.keys()], ['a', 'b', 'c']);
  setBounded(m, 'b', 20, 3);
  t.same(
    [...m.entries()],
    [
      ['a', 1],
      ['b', 20],
      ['c', 3],
    ],
    'replacing a kept key forgets nothing',
  );
  setBounded(m, 'd', 4, 3);
  t.same([...m.keys()], ['b', 'c', 'd'], 'a new key forgets the oldest');
  t.equal(m.size, 3);
});
