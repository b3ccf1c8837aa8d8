import t from 'tap';
import { randomBytes } from 'node:crypto';
import type { UploadBuffers } from '@ferry/core';
import type { SFTPWrapper } from 'ssh2';
import { POOLED_WRITE_MIN, poolWritePackets } from '../src/write-packets.js';

// Large WRITE packets are put together in pooled buffers before ssh2 parses
// them (src/write-packets.ts): ssh2 must see exactly the bytes the client
// sent, in order, whatever the channel's chunking.

const WRITE = 6;
const BUFFER = 256 * 1024;

function packet(type: number, bodyLength: number): Buffer {
  const p = Buffer.alloc(5 + bodyLength);
  p.writeUInt32BE(1 + bodyLength);
  p[4] = type;
  randomBytes(bodyLength).copy(p, 5);
  return p;
}

/** A lease that records the buffers it gave and those given back. */
function fakeLease() {
  const taken: Buffer[] = [];
  const given: Buffer[] = [];
  const lease: UploadBuffers = {
    take: () => {
      const b = Buffer.allocUnsafe(BUFFER);
      taken.push(b);
      return b;
    },
    lend: () => undefined,
    giveBack: (b) => void given.push(b),
    close: () => undefined,
  };
  return { lease, taken, given };
}

/** The SFTP object's push, recording each call, and whether a pooled packet was being delivered then. */
function fakeSftp() {
  const calls: { data: Buffer | null; delivering: boolean }[] = [];
  const sftp = {
    push(data: Buffer | null) {
      calls.push({ data, delivering: packets?.delivering != null });
      return true;
    },
  };
  let packets: ReturnType<typeof poolWritePackets> = null;
  return {
    sftp,
    calls,
    install: (buffers: () => UploadBuffers | null) => (packets = poolWritePackets(sftp as unknown as SFTPWrapper, buffers)),
  };
}

/** Cuts `stream` into chunks of random sizes (1 byte to 40 KiB, as an SSH channel's data messages may be). */
function chunks(stream: Buffer, seed: number): Buffer[] {
  const out: Buffer[] = [];
  let x = seed;
  for (let p = 0; p < stream.length;) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const n = x % 7 === 0 ? 1 + (x % 5) : 1 + (x % (40 * 1024));
    out.push(stream.subarray(p, p + n));
    p += n;
  }
  return out;
}

t.test('ssh2 gets the same bytes; large WRITEs whole, in a pooled buffer, marked while parsed', async (t) => {
  const packets = [
    packet(1, 4), // INIT
    packet(WRITE, 255 * 1024 + 40),
    packet(WRITE, 1000), // small: gathered by the write handle, not pooled
    packet(3, 60), // OPEN
    packet(WRITE, POOLED_WRITE_MIN - 2), // a packet length (type and body) just under POOLED_WRITE_MIN
    packet(WRITE, POOLED_WRITE_MIN - 1), // exactly POOLED_WRITE_MIN
    packet(WRITE, 128 * 1024),
    packet(4, 13), // CLOSE
  ];
  const stream = Buffer.concat(packets);
  for (const seed of [1, 7, 42, 1234]) {
    const f = fakeSftp();
    const l = fakeLease();
    const state = f.install(() => l.lease);
    t.ok(state, 'installed');
    for (const c of chunks(stream, seed)) f.sftp.push(c);
    t.same(Buffer.concat(f.calls.map((c) => c.data!)), stream, `seed ${seed}: the same bytes, in order`);
    const pooled = f.calls.filter((c) => c.delivering);
    t.equal(pooled.length, 3, 'the three WRITEs from POOLED_WRITE_MIN on');
    t.same(
      pooled.map((c) => c.data),
      [packets[1], packets[5], packets[6]],
      'each whole, length field first',
    );
    t.ok(
      pooled.every((c, i) => c.data!.buffer === l.taken[i]!.buffer),
      'in the lease buffers',
    );
    t.equal(l.given.length, 0, 'nothing given back: the session lends or gives back');
    t.equal(state!.delivering, null, 'not marked outside the parse');
  }
});

t.test('without a lease, or a WRITE larger than a buffer, nothing is pooled', async (t) => {
  const big = packet(WRITE, BUFFER); // with its length field, 5 bytes past a buffer
  const mid = packet(WRITE, 100 * 1024);
  for (const withLease of [false, true]) {
    const f = fakeSftp();
    const l = fakeLease();
    f.install(() => (withLease ? l.lease : null));
    const stream = Buffer.concat([big, mid]);
    for (const c of chunks(stream, 3)) f.sftp.push(c);
    t.same(Buffer.concat(f.calls.map((c) => c.data!)), stream);
    t.equal(f.calls.filter((c) => c.delivering).length, withLease ? 1 : 0, withLease ? 'only the one that fits' : 'none');
    if (withLease) t.equal(l.given.length, 1, 'the buffer taken for the too-large one is given back at once');
  }
});

t.test('a zero packet length: everything after goes to ssh2 as it came (ssh2 ends the channel)', async (t) => {
  const f = fakeSftp();
  const l = fakeLease();
  f.install(() => l.lease);
  const tail = packet(WRITE, 100 * 1024);
  const stream = Buffer.concat([packet(3, 10), Buffer.from([0, 0, 0, 0]), tail]);
  for (const c of chunks(stream, 5)) f.sftp.push(c);
  f.sftp.push(null);
  t.same(Buffer.concat(f.calls.slice(0, -1).map((c) => c.data!)), stream);
  t.equal(f.calls.at(-1)!.data, null, 'the end passed on');
  t.equal(l.taken.length, 0, 'nothing pooled after it');
});

t.test('no push to wrap: not installed', async (t) => {
  t.equal(
    poolWritePackets({} as SFTPWrapper, () => null),
    null,
  );
});
