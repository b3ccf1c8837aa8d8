import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { liveBufferGrowth, writeRandomHex } from '../src/memory.js';

t.test('liveBufferGrowth sees a buffer held during the work, not garbage made and dropped', async (t) => {
  const held = await liveBufferGrowth(async () => {
    const big = Buffer.alloc(32 << 20, 1);
    await sleep(400);
    return big.length;
  });
  t.ok(held.grew >= 32 << 20, `held: grew by ${held.grew}`);
  t.ok(held.samples >= 2, `${held.samples} samples`);
  const dropped = await liveBufferGrowth(async () => {
    for (let i = 0; i < 8; i++) {
      Buffer.alloc(4 << 20, 1);
      await sleep(50);
    }
  });
  t.ok(dropped.grew < 16 << 20, `dropped: grew by ${dropped.grew}`);
});

t.test('writeRandomHex writes exactly the size asked, in hex digits', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'testkit-hex-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const size of [0, 1, 1000, (1 << 20) + 3]) {
    const f = path.join(dir, `${size}.txt`);
    writeRandomHex(f, size);
    t.equal(statSync(f).size, size);
    t.match(readFileSync(f, 'latin1'), /^[0-9a-f]*$/);
  }
});
