import crypto from 'node:crypto';
import t, { type Test } from 'tap';
import type { SFTPWrapper } from 'ssh2';
import { sendData } from '../src/ssh2-sftp-internals.js';

// sendData() on an object shaped as ssh2 1.17's server-side SFTP: the connection's channelData
// (recorded here: ssh2 copies each payload into its SSH packet before it returns), the channel's
// window and packet size, the answers held for the window (_buffer) and _chunkcb.
class FakeSftp {
  _version = 3;
  _buffer: Buffer[] = [];
  _waitWindow = false;
  _chunkcb: (() => void) | undefined = undefined;
  outgoing = { id: 7, state: 'open', window: 2 * 1024 * 1024, packetSize: 32 * 1024 };
  /** The payloads of the CHANNEL_DATA packets sent, copied as ssh2 copies them. */
  sent: Buffer[] = [];
  _protocol = {
    channelData: (id: number, data: Buffer) => {
      if (id !== this.outgoing.id) throw new Error(`channel ${id}`);
      this.sent.push(Buffer.from(data));
    },
  };
  push(): boolean {
    return true;
  }
  /** What the connection does on a CHANNEL_WINDOW_ADJUST: widens the window and calls _chunkcb. */
  windowAdjust(bytes: number): void {
    this.outgoing.window += bytes;
    this._waitWindow = false;
    this._chunkcb?.call(this);
  }
}
const asSftp = (f: FakeSftp) => f as unknown as SFTPWrapper;

/** The DATA answer ssh2's own data() builds: length, type 103, request id, data length, data. */
function dataPacket(id: number, data: Buffer): Buffer {
  const h = Buffer.alloc(13);
  h.writeUInt32BE(9 + data.length, 0);
  h[4] = 103;
  h.writeUInt32BE(id, 5);
  h.writeUInt32BE(data.length, 9);
  return Buffer.concat([h, data]);
}

/** The client widens the window: everything waiting goes out, `expected` byte for byte, no packet over the channel size. */
function widenAndCheck(t: Test, f: FakeSftp, expected: Buffer, what: string): void {
  f.windowAdjust(1024 * 1024);
  t.same(f._buffer, [], 'all sent once the window widened');
  t.ok(Buffer.concat(f.sent).equals(expected), what);
  t.ok(
    f.sent.every((p) => p.length <= 32 * 1024),
    'no packet over the channel size',
  );
}

t.test('a 255 KiB answer goes out as packets of the channel size, the same bytes as ssh2 data() sends', async (t) => {
  const f = new FakeSftp();
  const data = crypto.randomBytes(255 * 1024);
  t.equal(sendData(asSftp(f), 0xfffffffe, data), 'sent');
  t.same(
    f.sent.map((p) => p.length),
    [...Array(7).fill(32 * 1024), 255 * 1024 + 13 - 7 * 32 * 1024],
    'eight packets: seven full, the rest',
  );
  t.ok(Buffer.concat(f.sent).equals(dataPacket(0xfffffffe, data)), 'header and data, byte for byte');
  t.equal(f.outgoing.window, 2 * 1024 * 1024 - (255 * 1024 + 13), 'the window is counted');
  t.same(f._buffer, [], 'nothing held back');
});

t.test('small answers, an empty one, and one that fits in the first packet', async (t) => {
  const f = new FakeSftp();
  for (const [id, size] of [
    [1, 0],
    [2, 1],
    [3, 32 * 1024 - 13],
    [4, 32 * 1024 - 12],
  ] as const) {
    f.sent = [];
    const data = crypto.randomBytes(size);
    t.equal(sendData(asSftp(f), id, data), 'sent');
    t.ok(Buffer.concat(f.sent).equals(dataPacket(id, data)), `${size} bytes: the same bytes`);
    t.equal(f.sent.length, size + 13 > 32 * 1024 ? 2 : 1, `${size} bytes: ${f.sent.length} packet(s)`);
  }
});

t.test('what the window does not take is copied and queued; the client widening it sends the rest in order', async (t) => {
  const f = new FakeSftp();
  f.outgoing.window = 40 * 1024;
  const data = crypto.randomBytes(100 * 1024);
  const expected = dataPacket(9, data);
  t.equal(sendData(asSftp(f), 9, data), 'sent', 'the rest copied: nothing of the data held');
  t.equal(Buffer.concat(f.sent).length, 40 * 1024, 'the window sent');
  t.equal(f._buffer.length, 1, 'the rest queued');
  t.equal(f._waitWindow, true, 'waiting for the window');
  t.type(f._chunkcb, 'function', 'the connection calls back once it widens');
  data.fill(0);
  t.equal(sendData(asSftp(f), 10, Buffer.from('later')), false, 'a later answer is not sent ahead of the queued rest (the caller uses data())');

  f.windowAdjust(30 * 1024);
  t.equal(f._buffer.length, 1, 'still some left');
  widenAndCheck(t, f, expected, 'the bytes of the answer as they were when sent: the queued rest was a copy');
});

t.test('a window that runs out inside the header: the header is queued with the data', async (t) => {
  const f = new FakeSftp();
  f.outgoing.window = 5;
  const data = crypto.randomBytes(1000);
  t.equal(sendData(asSftp(f), 11, data), 'sent');
  t.equal(Buffer.concat(f.sent).length, 5);
  f.windowAdjust(64 * 1024);
  t.ok(Buffer.concat(f.sent).equals(dataPacket(11, data)));
});

t.test('mayHold: what the window does not take waits as a view of the data, later answers after it', async (t) => {
  const f = new FakeSftp();
  f.outgoing.window = 40 * 1024;
  const data = crypto.randomBytes(100 * 1024);
  const later = crypto.randomBytes(50 * 1024);
  const expected = Buffer.concat([dataPacket(9, data), dataPacket(10, later), dataPacket(11, Buffer.alloc(0))]);
  t.equal(sendData(asSftp(f), 9, data, true), 'held', 'the rest held as a view');
  t.equal(f._buffer.at(-1)!.buffer, data.buffer, "a view of the data's memory, not a copy");
  t.equal(sendData(asSftp(f), 10, later, true), 'held', 'a later answer waits after it, also as a view');
  t.equal(f._buffer.at(-1)!.buffer, later.buffer);
  t.equal(sendData(asSftp(f), 11, Buffer.alloc(0), true), 'sent', 'an empty answer: only its header waits (a copy)');
  widenAndCheck(t, f, expected, 'the three answers byte for byte, in order');
});

t.test('mayHold with the window running out inside the first packet: its bytes copied, the rest a view', async (t) => {
  const f = new FakeSftp();
  f.outgoing.window = 5;
  const data = crypto.randomBytes(100 * 1024);
  t.equal(sendData(asSftp(f), 12, data, true), 'held');
  t.not(f._buffer[0]!.buffer, data.buffer, "the first packet's rest is a copy (its buffer is reused)");
  t.equal(f._buffer[1]!.buffer, data.buffer, 'the data after it a view');
  // the reused first-packet buffer is overwritten by the next answer: the queued copy keeps its bytes
  const g = new FakeSftp();
  sendData(asSftp(g), 13, crypto.randomBytes(1000));
  f.windowAdjust(1024 * 1024);
  t.ok(Buffer.concat(f.sent).equals(dataPacket(12, data)), 'the answer byte for byte');
});

t.test('internals it does not know, or a closed channel: false, nothing sent', async (t) => {
  t.equal(sendData({} as unknown as SFTPWrapper, 1, Buffer.from('x')), false);
  const f = new FakeSftp();
  f.outgoing.state = 'closed';
  t.equal(sendData(asSftp(f), 1, Buffer.from('x')), false);
  t.same(f.sent, []);
});
