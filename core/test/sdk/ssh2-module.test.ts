import t from 'tap';
import crypto from 'node:crypto';
import { RandomPool, loadSsh2, paddingPool, pooledRandomFill } from '../../src/sdk/ssh2-module.js';
import { generateSshKeyPair } from '../../src/sdk/ssh-keys.js';
import type { AddressInfo } from 'node:net';

// The random padding of the SSH packets ssh2 sends is drawn from a pool of
// CSPRNG bytes (core/src/sdk/ssh2-module.ts): each byte handed out once, every call
// the pool does not serve left to the real randomFillSync, and nothing else
// in the process sees the pooled function. (Nothing in this process loads
// ssh2 before loadSsh2() below.)

/** A pool over a counter instead of the CSPRNG: each refill writes the next run of byte values. */
function countingPool(size: number) {
  let next = 0;
  const pool = new RandomPool(size, (b: Buffer) => {
    for (let i = 0; i < b.length; i++) b[i] = next++ & 0xff;
  });
  return pool;
}

t.test('the pool hands out each byte once, in order, and refills when it runs short', async (t) => {
  const pool = countingPool(64);
  t.equal(pool.largest, 4, 'requests of up to a sixteenth of the pool are served');
  const a = Buffer.alloc(8);
  pool.copyInto(a, 2, 4);
  t.same([...a], [0, 0, 0, 1, 2, 3, 0, 0], 'written at the offset, nothing around it');
  const seen: number[] = [0, 1, 2, 3];
  for (let i = 0; i < 15; i++) {
    const b = Buffer.alloc(4);
    pool.copyInto(b, 0, 4);
    seen.push(...b);
  }
  t.same(
    seen,
    Array.from({ length: 64 }, (_, i) => i),
    'the whole pool once, no byte twice',
  );
  t.equal(pool.refills, 1, 'one fill so far');
  const c = Buffer.alloc(3);
  pool.copyInto(c, 0, 3);
  t.equal(pool.refills, 2, 'a request that does not fit in what is left refills first');
  t.same([...c], [64, 65, 66], 'from the new bytes');
  t.equal(pool.served, 17);
});

t.test('pooledRandomFill serves small requests and leaves every other call to the real function', async (t) => {
  const pool = countingPool(1024);
  const calls: unknown[][] = [];
  const real = ((...args: unknown[]) => {
    calls.push(args);
    return crypto.randomFillSync(...(args as [Buffer, number?, number?]));
  }) as typeof crypto.randomFillSync;
  const fill = pooledRandomFill(pool, real);

  const b = Buffer.alloc(32);
  t.equal(fill(b, 20, 12), b, 'returns the buffer it filled');
  t.same(
    [...b.subarray(20)],
    Array.from({ length: 12 }, (_, i) => i),
  );
  t.same([...b.subarray(0, 20)], new Array(20).fill(0), 'nothing before the offset');
  fill(b.subarray(0, 16));
  t.equal(pool.served, 2, 'a whole small buffer too');
  t.equal(calls.length, 0, 'the real function was not called');

  fill(Buffer.alloc(65));
  t.equal(calls.length, 1, 'larger than the pool serves: the real function');
  fill(new DataView(new ArrayBuffer(8)));
  t.equal(calls.length, 2, 'not a Uint8Array: the real function');
  t.throws(() => fill(Buffer.alloc(8), 6, 4), { code: 'ERR_OUT_OF_RANGE' }, 'a range past the end: refused by the real function');
  t.throws(() => fill(Buffer.alloc(8), -1, 2), { code: 'ERR_OUT_OF_RANGE' }, 'a negative offset: refused by the real function');
  try {
    fill(Buffer.alloc(8), 1.5, 2);
  } catch {
    // whatever node makes of it
  }
  t.equal(calls.length, 5, 'a fractional offset: the real function');
  t.equal(pool.served, 2, 'none of them took bytes from the pool');
});

t.test('ssh2 loaded here pads its packets from the pool; the crypto module keeps its own function', async (t) => {
  const { module: ssh2, pooled } = loadSsh2();
  t.equal(pooled, true, 'ssh2 was loaded by loadSsh2()');
  t.equal(loadSsh2().module, ssh2, 'once: later calls answer the same module');
  t.equal(crypto.randomFillSync.name, 'randomFillSync', "the process's randomFillSync is node's");

  // core's generator, as the service's own host keys (ssh2's utils.generateKeyPairSync makes an ed25519
  // key its own parser refuses about once in 300: 'Malformed OpenSSH private key')
  const hostKey = generateSshKeyPair('ed25519').private;
  const server = new ssh2.Server({ hostKeys: [hostKey] }, (conn) => {
    conn.on('authentication', (ctx) => (ctx.method === 'password' && ctx.password === 'pw' ? ctx.accept() : ctx.reject(['password'])));
    conn.on('session', (accept) => {
      accept().once('exec', (acceptExec, _reject, info) => {
        const ch = acceptExec();
        // a few packets of data back, then the end of the channel
        for (let i = 0; i < 20; i++) ch.write(`${info.command} ${i}\n`);
        ch.exit(0);
        ch.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const before = paddingPool.served;
  const client = new ssh2.Client();
  const output = await new Promise<string>((resolve, reject) => {
    client.on('error', reject);
    client.on('ready', () => {
      client.exec('echo', (err, stream) => {
        if (err) return reject(err);
        let text = '';
        stream.on('data', (d: Buffer) => (text += d.toString()));
        stream.on('close', () => resolve(text));
      });
    });
    client.connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, username: 'u', password: 'pw' });
  });
  client.end();
  t.equal(output.split('\n').filter(Boolean).length, 20, 'the whole exchange went through (both ends pad from the pool here)');
  t.ok(paddingPool.served - before >= 40, `the packets' padding came from the pool (${paddingPool.served - before} draws)`);
});
