import t from 'tap';
import crypto from 'node:crypto';
import { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadSsh2, pooledSshPackets } from '../../src/sdk/ssh2-module.js';
import { PacketSlabs, incomingPackets, packetSlabs, slabWriter, sshPayloadCopied, type PacketSocket } from '../../src/sdk/ssh2-packets.js';
import { setShortLivedSink } from '../../src/sdk/short-lived.js';
import { generateSshKeyPair } from '../../src/sdk/ssh-keys.js';
import { acceptTestLogin, uploadToTake } from '../helpers/ssh2-upload.js';

// Large outgoing SSH packets built in reused buffers (core/src/sdk/ssh2-packets.ts):
// a slab is taken again only once the socket has written the packet in it,
// so what a client receives is what was sent, whatever the cipher, a slow
// reader, a rekey in the middle. (Nothing in this process loads ssh2
// before loadSsh2() below.)

/** A socket that holds its writes until told to complete them. */
function heldSocket() {
  const pending: Array<(err?: Error | null) => void> = [];
  const written: Uint8Array[] = [];
  const socket: PacketSocket & { _readableState: { ended: boolean }; writable: boolean } = {
    writable: true,
    _readableState: { ended: false },
    write(data, cb) {
      written.push(data);
      pending.push(cb);
      return true;
    },
  };
  return { socket, pending, written };
}

/**
 * Two connected duplex streams that carry bytes as a network would: a
 * write is read (copied) and delivered only later, after a few immediates
 * and now and then 5 ms, so the writes a sender makes meanwhile wait in
 * its stream's buffer, and in two pieces. What a sender changes in a
 * buffer before its write is done is what the other side receives.
 */
function slowWire(): [Duplex, Duplex] {
  let n = 0;
  const end = (peer: () => Duplex) =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        const deliver = () => {
          // as a network does, not as written: each write arrives in two pieces, so packets span deliveries
          const cut = chunk.length > 1 ? 1 + (n % (chunk.length - 1)) : chunk.length;
          peer().push(Buffer.from(chunk.subarray(0, cut)));
          if (cut < chunk.length) peer().push(Buffer.from(chunk.subarray(cut)));
          cb();
        };
        if (++n % 64 === 0) setTimeout(deliver, 5);
        else setImmediate(() => setImmediate(deliver));
      },
      final(cb) {
        peer().push(null);
        cb();
      },
      destroy(err, cb) {
        // a connection reset: the other end fails too
        if (!peer().destroyed) peer().destroy(new Error('connection reset'));
        cb(err);
      },
    });
  const a: Duplex = end(() => b);
  const b: Duplex = end(() => a);
  return [a, b];
}

t.test('slabs: sizes taken, given back once written, kept up to a limit, dropped when idle', async (t) => {
  let now = 0;
  const slabs = new PacketSlabs(1024, 4096, 2, 50, () => now);
  t.equal(slabs.take(1023), null, 'smaller than a slab takes: allocated as usual');
  t.equal(slabs.take(4097), null, 'larger than a slab: allocated as usual');
  const a = slabs.take(2000)!;
  t.equal(a.length, 2000, 'a view of the size asked');
  t.equal(a.buffer.byteLength, 4096, 'of a slab');
  const b = slabs.take(4096)!;
  t.not(a.buffer, b.buffer, 'two slabs lent at once are two buffers');
  t.equal(slabs.created, 2);

  const { socket, pending, written } = heldSocket();
  const fallback: Buffer[] = [];
  const noted: number[] = [];
  setShortLivedSink((n) => noted.push(n));
  t.teardown(() => setShortLivedSink(undefined));
  const write = slabWriter(slabs, socket, (d) => void fallback.push(d));
  write(a);
  t.equal(written.length, 1, 'a slab goes to the socket with a callback');
  const c = slabs.take(2000)!;
  t.not(c.buffer, a.buffer, 'a slab being written is not taken again');
  t.equal(slabs.created, 3);
  pending.shift()!();
  t.equal(slabs.held, 1, 'given back once the socket wrote it');
  const d = slabs.take(3000)!;
  t.equal(d.buffer, a.buffer, 'and taken again');
  t.equal(slabs.reused, 1);

  write(Buffer.alloc(100));
  write(Buffer.alloc(2048));
  t.equal(fallback.length, 2, 'buffers of no slab go to the fallback (ssh2 own write)');
  t.same(noted, [2048], 'the large one is reported to the GC pacer, the small one not');

  socket._readableState.ended = true;
  write(d);
  t.equal(written.length, 1, 'not written once the peer ended: ssh2 drops the packet');
  t.equal(slabs.held, 1, 'and its slab is free again');
  slabs.giveBack(slabs.lentOf(b)!);
  slabs.giveBack(slabs.lentOf(c)!);
  t.equal(slabs.held, 2, 'no more free slabs kept than the limit');
  t.equal(slabs.lentOf(b), undefined, 'a slab given back is no longer lent');

  now = 60;
  await sleep(80);
  t.equal(slabs.held, 0, 'the free slabs are dropped after the idle time without a take');
});

/** A server that answers `exec` with `bytes` of random data written in 32 KiB chunks, over slow wires; its connections' packets pooled. */
function dataServer(algorithms?: Record<string, string[]>, rekeyAt?: number) {
  const ssh2 = loadSsh2().module;
  const hostKey = generateSshKeyPair('ed25519').private;
  const sent: Buffer[] = [];
  const received: Buffer[] = [];
  let pooled = 0;
  let rekeys = 0;
  const server = new ssh2.Server({ hostKeys: [hostKey], ...(algorithms ? { algorithms } : {}) }, (conn) => {
    // a client that disconnects mid-transfer (the last test): the wire's error, as the service logs it
    acceptTestLogin(conn);
    conn.on('rekey', () => rekeys++);
    conn.on('session', (accept) => {
      accept().once('exec', (acceptExec, _reject, info) => {
        const ch = acceptExec();
        if (info.command.startsWith('take ')) {
          // what the client sends: copied and declared copied ('take copy'), or kept as the views delivered ('take hold')
          const copy = info.command === 'take copy';
          ch.on('data', (d: Buffer) => {
            if (copy) {
              received.push(Buffer.from(d));
              sshPayloadCopied(d);
            } else received.push(d);
          });
          ch.on('end', () => {
            ch.exit(0);
            ch.end();
          });
          return;
        }
        let left = Number(info.command);
        let rekeyed = false;
        const next = () => {
          while (left > 0) {
            const chunk = crypto.randomBytes(Math.min(32 * 1024, left));
            left -= chunk.length;
            sent.push(chunk);
            if (rekeyAt !== undefined && !rekeyed && Number(info.command) - left >= rekeyAt) {
              rekeyed = true;
              conn.rekey();
            }
            if (!ch.write(chunk)) return void ch.once('drain', next);
          }
          ch.exit(0);
          ch.end();
        };
        next();
      });
    });
  });
  /** A client's end of a new wire whose other end the server serves. */
  const connect = (): Duplex => {
    const [serverEnd, clientEnd] = slowWire();
    server.once('connection', (conn) => {
      if (pooledSshPackets(conn, serverEnd as unknown as PacketSocket)) pooled++;
    });
    server.injectSocket(serverEnd as never);
    return clientEnd;
  };
  return { connect, sent, received, pooled: () => pooled, rekeys: () => rekeys };
}

/** Fetches `bytes` from the data server. */
async function fetch(server: ReturnType<typeof dataServer>, bytes: number, algorithms?: Record<string, string[]>) {
  const ssh2 = loadSsh2().module;
  const client = new ssh2.Client();
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      client.on('error', reject);
      client.on('ready', () => {
        client.exec(String(bytes), (err, stream) => {
          if (err) return reject(err);
          const parts: Buffer[] = [];
          stream.on('data', (d: Buffer) => parts.push(Buffer.from(d)));
          stream.on('close', () => resolve(Buffer.concat(parts)));
        });
      });
      client.connect({ sock: server.connect() as never, username: 'u', password: 'pw', ...(algorithms ? { algorithms } : {}) });
    });
  } finally {
    client.end();
  }
}

const CIPHERS = ['aes128-gcm@openssh.com', 'chacha20-poly1305@openssh.com', 'aes128-ctr'];

for (const cipher of CIPHERS) {
  t.test(`${cipher}: what the client receives is what the server sent, from reused buffers`, async (t) => {
    const algorithms = { cipher: [cipher], ...(cipher === 'aes128-ctr' ? { hmac: ['hmac-sha2-256-etm@openssh.com'] } : {}) };
    const server = dataServer(algorithms);
    const created = packetSlabs.created;
    const reused = packetSlabs.reused;
    const size = 6 * 1024 * 1024 + 123;
    const got = await fetch(server, size, algorithms);
    t.equal(server.pooled(), 1, "the server's connection writes through the slabs");
    t.equal(got.length, size, 'every byte arrived');
    t.ok(got.equals(Buffer.concat(server.sent)), 'and in order, unchanged (a slab reused before its write was done would have failed the MAC)');
    t.ok(packetSlabs.reused - reused > 100, `the packets came from reused slabs (${packetSlabs.reused - reused} reuses)`);
    t.ok(packetSlabs.created - created <= 128, `from a bounded number of them (${packetSlabs.created - created} made)`);
    t.equal(packetSlabs.outstanding, 0, 'every slab given back at the end');
  });
}

t.test('a rekey in the middle of the transfer: the new cipher builds in slabs too, nothing lost', async (t) => {
  const server = dataServer(undefined, 2 * 1024 * 1024);
  const reused = packetSlabs.reused;
  const size = 8 * 1024 * 1024;
  const got = await fetch(server, size);
  t.equal(server.rekeys(), 1, 'the server rekeyed once');
  t.ok(got.equals(Buffer.concat(server.sent)), 'the data arrived whole and unchanged across the rekey');
  t.ok(packetSlabs.reused - reused > 240, `all but a few packets from reused slabs, on both sides of the rekey (${packetSlabs.reused - reused} of 256)`);
});

t.test('a client gone in the middle of a transfer: its slabs free again, the server serves on', async (t) => {
  const server = dataServer();
  const ssh2 = loadSsh2().module;
  const client = new ssh2.Client();
  client.on('error', () => undefined);
  const wire = server.connect();
  await new Promise<void>((resolve, reject) => {
    client.on('ready', () =>
      client.exec(String(64 * 1024 * 1024), (err, stream) => {
        if (err) return reject(err);
        let got = 0;
        stream.on('data', (d: Buffer) => {
          got += d.length;
          if (got > 1024 * 1024 && !wire.destroyed) {
            t.ok(packetSlabs.outstanding > 0, `slabs in flight when the client goes (${packetSlabs.outstanding})`);
            wire.destroy();
            resolve();
          }
        });
      }),
    );
    client.connect({ sock: wire as never, username: 'u', password: 'pw' });
  });
  await sleep(100);
  t.equal(packetSlabs.outstanding, 0, 'the writes that never went out gave their slabs back');
  server.sent.length = 0;
  const again = await fetch(server, 1024 * 1024);
  t.ok(again.equals(Buffer.concat(server.sent)), 'the next client gets its data whole');
});

/** Sends `data` to the server's `take` command over a slow wire (packets span its deliveries). */
const upload = (server: ReturnType<typeof dataServer>, mode: 'copy' | 'hold', data: Buffer, algorithms?: Record<string, string[]>) =>
  uploadToTake({ sock: server.connect() }, mode, data, algorithms);

for (const cipher of ['aes128-gcm@openssh.com', 'chacha20-poly1305@openssh.com']) {
  t.test(`${cipher}: incoming packets declared copied are put together in the buffer used before; the others are left alone`, async (t) => {
    const algorithms = { cipher: [cipher] };
    const data = crypto.randomBytes(4 * 1024 * 1024 + 77);
    const server = dataServer(algorithms);
    const before = { ...incomingPackets };
    await upload(server, 'copy', data, algorithms);
    t.ok(Buffer.concat(server.received).equals(data), 'copied by the consumer: every byte arrived');
    t.ok(
      incomingPackets.reused - before.reused > 20,
      `spanning packets put together in the buffer used before (${incomingPackets.reused - before.reused} reused, ${incomingPackets.fresh - before.fresh} new)`,
    );

    const holder = dataServer(algorithms);
    const mid = { ...incomingPackets };
    await upload(holder, 'hold', data, algorithms);
    t.equal(incomingPackets.reused - mid.reused, 0, 'no payload declared copied: no buffer taken again');
    t.ok(Buffer.concat(holder.received).equals(data), 'and the views the consumer kept still hold their bytes');
  });
}
