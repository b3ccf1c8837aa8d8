import t from 'tap';
import argon2 from 'argon2';
import { configurePool, hash, native, poolStats, trimPool, verify } from '../src/index.js';

const PARAMS = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
const SMALL = { memoryCost: 1024, timeCost: 1, parallelism: 1 } as const;

t.test('the addon is built on this machine (npm ci runs node-gyp; FERRY_ARGON2_POOL=off is the only way out)', async (t) => {
  t.equal(native, process.env.FERRY_ARGON2_POOL !== 'off');
  t.equal(poolStats().native, native);
});

t.test('hashes are PHC strings the argon2 package verifies, and the reverse', async (t) => {
  const mine = await hash('correct horse', PARAMS);
  t.match(mine, /^\$argon2id\$v=19\$m=19456,p=1,t=2\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  t.ok(await argon2.verify(mine, 'correct horse'), 'argon2 package: right password');
  t.notOk(await argon2.verify(mine, 'correct horsf'), 'argon2 package: wrong password');
  const theirs = await argon2.hash('correct horse', { type: argon2.argon2id, ...PARAMS });
  t.ok(await verify(theirs, 'correct horse'), 'right password');
  t.notOk(await verify(theirs, 'correct horse '), 'wrong password');
  t.ok(await verify(mine, Buffer.from('correct horse')), 'a Buffer password');
});

t.test('argon2i, argon2d, version 16, other parameter orders, other hash lengths and parallelism', async (t) => {
  for (const type of [argon2.argon2i, argon2.argon2d] as const) {
    const theirs = await argon2.hash('pw', { type, ...SMALL });
    t.ok(await verify(theirs, 'pw'), `type ${type}`);
    t.notOk(await verify(theirs, 'px'), `type ${type}, wrong password`);
    const mine = await hash('pw', { type, ...SMALL });
    t.ok(await argon2.verify(mine, 'pw'), `type ${type} made here`);
  }
  const v16 = await argon2.hash('pw', { type: argon2.argon2id, ...SMALL, version: 0x10 });
  t.match(v16, /^\$argon2id\$v=16\$/);
  t.ok(await verify(v16, 'pw'), 'version 0x10');
  const reordered = v16.replace('m=1024,p=1,t=1', 't=1,m=1024,p=1');
  t.not(reordered, v16);
  t.ok(await verify(reordered, 'pw'), 'parameters in another order');
  const long = await argon2.hash('pw', { type: argon2.argon2id, ...SMALL, hashLength: 64, parallelism: 2, memoryCost: 2048 });
  t.ok(await verify(long, 'pw'), '64-byte hash, 2 lanes');
  t.notOk(await verify(long, 'pW'));
  const mine = await hash('pw', { ...SMALL, parallelism: 4, memoryCost: 4096, hashLength: 16 });
  t.ok(await argon2.verify(mine, 'pw'), 'made here with 4 lanes and 16 bytes');
});

t.test('digests it cannot read: other parameters go to the argon2 package, malformed ones are false', async (t) => {
  const withData = await argon2.hash('pw', { type: argon2.argon2id, ...SMALL, associatedData: Buffer.from('context') });
  t.match(withData, /,data=/);
  t.ok(await verify(withData, 'pw'), 'data= parameter');
  t.notOk(await verify(withData, 'px'));
  const good = await hash('pw', SMALL);
  for (const bad of [
    '',
    'pw',
    '$argon2id$',
    good.replace('$argon2id$', '$argon2x$'),
    good.replace('m=1024', 'm=1'),
    good.replace('t=1', 't=0'),
    good.replace(',p=1', ',m=1'),
    good.replace(/\$[^$]+$/, '$AAA'),
    good.replace(/\$([^$]+)\$([^$]+)$/, '$AAAA$$$2'),
    good + '$extra',
  ]) {
    t.equal(await verify(bad, 'pw'), false, `malformed: ${JSON.stringify(bad.slice(0, 60))}`);
  }
});

t.test('the pool: blocks kept up to the limit while hashes follow each other, freed once idle', { skip: !native && 'no addon' }, async (t) => {
  trimPool();
  configurePool({ blocks: 2, idleMs: 200 });
  const before = poolStats();
  const stored = await hash('pw', PARAMS);
  const afterOne = poolStats();
  t.equal(afterOne.pooled, 1, 'the block of the hash is kept');
  t.equal(afterOne.pooledBytes, 19456 * 1024);
  t.equal(afterOne.allocated - before.allocated, 1);
  await Promise.all([verify(stored, 'pw'), verify(stored, 'px'), verify(stored, 'pw')]);
  const afterThree = poolStats();
  const reused = afterThree.reused - afterOne.reused;
  const allocated = afterThree.allocated - afterOne.allocated;
  t.equal(reused + allocated, 3, 'each hash took one block');
  t.ok(reused >= 1, 'the kept block was used again');
  // usually all three run at once (two new blocks); a late thread may reuse one freed meanwhile
  t.equal(afterThree.pooled, Math.min(2, 1 + allocated), 'blocks kept up to the limit of two');
  await new Promise((r) => setTimeout(r, 400));
  t.equal(poolStats().pooled, 0, 'freed after idleMs without a hash');
  configurePool({ blocks: 1 });
  await Promise.all([hash('a', SMALL), hash('b', SMALL)]);
  t.equal(poolStats().pooled, 1, 'a lower limit keeps fewer');
  configurePool({ blocks: 0 });
  t.equal(poolStats().pooled, 0, 'limit 0 frees them at once');
  await hash('a', SMALL);
  t.equal(poolStats().pooled, 0, 'and keeps none');
});

t.test('configurePool refuses nonsense', async (t) => {
  t.throws(() => configurePool({ blocks: -1 }), RangeError);
  t.throws(() => configurePool({ blocks: 65 }), RangeError);
  t.throws(() => configurePool({ blocks: 1.5 }), RangeError);
  t.throws(() => configurePool({ blocks: 1, idleMs: -5 }), RangeError);
  t.throws(() => configurePool({ blocks: 1, idleMs: Number.NaN }), RangeError);
});
