import t from 'tap';
import { randomHexId } from '../../src/util/random-id.js';

t.test('hex of the asked length, distinct, across pool refills', async (t) => {
  const ids = Array.from({ length: 2000 }, () => randomHexId(12)); // 24,000 bytes: several pools of 4,096
  t.same(
    ids.filter((id) => !/^[0-9a-f]{24}$/.test(id)),
    [],
    '24 hex digits each',
  );
  t.equal(new Set(ids).size, 2000, 'no ID repeats');
  t.match(randomHexId(5000), /^[0-9a-f]{10000}$/, 'more than a pool at once');
});
