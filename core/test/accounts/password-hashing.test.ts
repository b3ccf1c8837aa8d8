import t from 'tap';
import { stat } from 'node:fs/promises';
import { HASHING_SLOTS, hashingLoad, hashPassword, verifyPassword } from '../../src/accounts/password.js';

// argon2 runs on libuv's thread pool, shared with file system calls: a burst
// of password checks (a login storm) runs HASHING_SLOTS at a time, so the pool
// keeps threads for everything else.

t.test('at most HASHING_SLOTS hashes run at once; the others wait their turn and all complete', async (t) => {
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  t.ok(HASHING_SLOTS >= 1 && HASHING_SLOTS <= Math.max(1, Math.floor(pool / 2)), `${HASHING_SLOTS} slots leave threads of the pool of ${pool} free`);
  const hash = await hashPassword('storm-password-1');
  t.same(hashingLoad(), { running: 0, waiting: 0 }, 'idle after a hash');

  const n = 16;
  const checks = Array.from({ length: n }, (_, i) => verifyPassword(hash, i % 4 === 0 ? 'wrong-password' : 'storm-password-1'));
  t.same(hashingLoad(), { running: HASHING_SLOTS, waiting: n - HASHING_SLOTS }, 'the burst is queued beyond the slots');

  // a file system call does not wait behind the queued hashes (it would, in libuv's FIFO queue, with a hash on every thread)
  let done = 0;
  for (const c of checks) void c.then(() => done++);
  await stat('.');
  t.ok(done < n - pool, `a stat() answered while ${n - done} of ${n} checks were still pending`);

  const results = await Promise.all(checks);
  t.same(
    results,
    Array.from({ length: n }, (_, i) => i % 4 !== 0),
    'every check gives its own answer (wrong passwords refused)',
  );
  t.same(hashingLoad(), { running: 0, waiting: 0 }, 'every slot is given back');
});

t.test('a failing verification (malformed hash) gives its slot back', async (t) => {
  t.equal(await verifyPassword('$argon2id$not-a-hash', 'x'), false);
  t.same(hashingLoad(), { running: 0, waiting: 0 });
});

t.test('the working memory of a burst of checks is kept between them (at most one block per slot) and freed a second after the last', async (t) => {
  const { poolStats } = await import('@ferry/argon2-pool');
  t.ok(poolStats().native, 'the hashing addon is built (npm ci)');
  const hash = await hashPassword('burst-password-1');
  const before = poolStats();
  await Promise.all(Array.from({ length: 6 }, () => verifyPassword(hash, 'burst-password-1')));
  const after = poolStats();
  t.ok(after.reused - before.reused >= 6 - HASHING_SLOTS, `blocks reused: ${after.reused - before.reused} of 6 checks`);
  t.ok(after.pooled >= 1 && after.pooled <= HASHING_SLOTS, `${after.pooled} block(s) kept, no more than the ${HASHING_SLOTS} slots`);
  t.equal(after.pooledBytes, after.pooled * 19456 * 1024, '19 MiB each');
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(poolStats().pooled, 0, 'freed once no check has run for a second');
});
