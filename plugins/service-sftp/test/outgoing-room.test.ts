import t from 'tap';
import { EventEmitter } from 'node:events';
import type { SFTPWrapper } from 'ssh2';
import { outgoingRoom } from '../src/ssh2-sftp-internals.js';

// outgoingRoom() on an object shaped as ssh2 1.17's server-side SFTP: the answers it holds for the
// channel's window (_buffer), and _chunkcb, which the connection calls once the client widens it.
class FakeSftp extends EventEmitter {
  _buffer: Buffer[] = [];
  _chunkcb: (() => void) | undefined = undefined;
  outgoing = { state: 'open' };
  /** What the connection does on a CHANNEL_WINDOW_ADJUST: calls _chunkcb (as ssh2's drainBuffer, which clears it first). */
  windowAdjust(sendBytes: number): void {
    const cb = this._chunkcb;
    if (!cb) return;
    cb.call(this);
    let left = sendBytes;
    while (left > 0 && this._buffer.length > 0) {
      const first = this._buffer[0]!;
      if (first.length <= left) {
        left -= first.length;
        this._buffer.shift();
      } else {
        this._buffer[0] = first.subarray(left);
        left = 0;
      }
    }
    // what is left waits for the next adjust
    if (this._buffer.length > 0) this._chunkcb = drainBuffer;
  }
}
function drainBuffer(this: FakeSftp): void {
  this._chunkcb = undefined;
}

const asSftp = (f: FakeSftp) => f as unknown as SFTPWrapper;
const settled = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};
const KiB = 1024;

t.test('a READ waits while more than the limit is held for the window, and goes on once it was sent', async (t) => {
  const f = new FakeSftp();
  const room = outgoingRoom(asSftp(f), 512 * KiB)!;
  t.ok(room, 'the internals are recognised');
  t.ok(await settled(room.wait()), 'nothing held: no wait');

  f._buffer.push(Buffer.alloc(255 * KiB), Buffer.alloc(255 * KiB), Buffer.alloc(255 * KiB));
  f._chunkcb = drainBuffer;
  const waiting = room.wait();
  t.notOk(await settled(waiting), '765 KiB held: the READ waits');

  f.windowAdjust(100 * KiB);
  t.notOk(await settled(waiting), 'still 665 KiB held after a small adjust: still waiting');

  f.windowAdjust(300 * KiB);
  t.ok(await settled(waiting), '365 KiB held: the READ goes on');
});

t.test('a waiting READ goes on when the channel closes', async (t) => {
  const f = new FakeSftp();
  const room = outgoingRoom(asSftp(f), 64 * KiB)!;
  f._buffer.push(Buffer.alloc(255 * KiB));
  f._chunkcb = drainBuffer;
  const waiting = room.wait();
  t.notOk(await settled(waiting), 'waiting');
  f.outgoing.state = 'closed';
  f.emit('close');
  t.ok(await settled(waiting), 'released by the close');
});

t.test('internals not as expected: no bound (null)', async (t) => {
  t.equal(outgoingRoom(new EventEmitter() as unknown as SFTPWrapper, 1), null);
  const f = new FakeSftp();
  t.ok(outgoingRoom(asSftp(f), 1));
  t.equal(outgoingRoom(asSftp(f), 1), null, 'installed once only');
});

t.test('sent(memory) waits while the buffer holds a view of that memory, partly sent or not', async (t) => {
  const f = new FakeSftp();
  const room = outgoingRoom(asSftp(f), 1024 * KiB)!;
  const mem = Buffer.alloc(300 * KiB);
  t.ok(await settled(room.sent(mem.buffer)), 'nothing held: at once');
  f._buffer.push(Buffer.alloc(10 * KiB), mem.subarray(0, 100 * KiB), mem.subarray(100 * KiB));
  f._chunkcb = drainBuffer;
  const waiting = room.sent(mem.buffer);
  t.notOk(await settled(waiting), 'views of it held: waits');
  t.ok(await settled(room.sent(Buffer.alloc(1).buffer)), 'other memory: at once');
  f.windowAdjust(150 * KiB);
  t.notOk(await settled(waiting), 'partly sent: the rest is still a view of it');
  f.windowAdjust(400 * KiB);
  t.ok(await settled(waiting), 'all sent: goes on');

  f._buffer.push(mem.subarray(0, 10));
  f._chunkcb = drainBuffer;
  const closing = room.sent(mem.buffer);
  f.outgoing.state = 'closed';
  f.emit('close');
  t.ok(await settled(closing), 'the channel closed: nothing will send it, goes on');
});
