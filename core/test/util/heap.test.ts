import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { heapGrowingFlag } from '../../src/util/heap.js';

t.test('heapGrowingFlag: the V8 flag for common.heap_growing_percent', async (t) => {
  t.equal(heapGrowingFlag(100, []), '--heap-growing-percent=100');
  t.equal(heapGrowingFlag(250, ['--enable-source-maps']), '--heap-growing-percent=250');
  t.equal(heapGrowingFlag(0, []), undefined, '0 leaves V8 its own heuristics');
  t.equal(heapGrowingFlag(-5, []), undefined);
  t.equal(heapGrowingFlag(1.5, []), undefined);
  t.equal(heapGrowingFlag(100, ['--heap-growing-percent=50']), undefined, 'a flag given to node wins');
  t.equal(heapGrowingFlag(100, ['--heap_growing_percent=50']), undefined, 'also spelt with underscores');
  t.equal(heapGrowingFlag(100, ['--heap-growing-percent']), undefined);
  t.equal(heapGrowingFlag(100, ['--heap-growing-percentage=5']), '--heap-growing-percent=100', 'only that flag');
});

t.test('common.heap_growing_percent: default 100, 0-400', async (t) => {
  t.equal(loadConfig({ env: {} }).config.common.heap_growing_percent, 100);
  t.equal(loadConfig({ env: { SERVICE_COMMON__HEAP_GROWING_PERCENT: '0' } }).config.common.heap_growing_percent, 0);
  t.equal(loadConfig({ env: { SERVICE_COMMON__HEAP_GROWING_PERCENT: '400' } }).config.common.heap_growing_percent, 400);
  for (const bad of ['-1', '401', '1.5', 'lots']) {
    t.throws(() => loadConfig({ env: { SERVICE_COMMON__HEAP_GROWING_PERCENT: bad } }), /common\.heap_growing_percent/, bad);
  }
});
