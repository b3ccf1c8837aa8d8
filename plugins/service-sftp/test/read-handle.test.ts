import t from 'tap';
import { randomBytes } from 'node:crypto';
import { PassThrough, type Writable } from 'node:stream';
import type { FileInfo, FileSession, SessionRead } from '@ferry/core';
import { MAX_READ, ReadHandle } from '../src/handles.js';

// READs are answered from the chunks the download lends (src/handles.ts):
// a view of the chunk when the READ lies within it, a copy across two; each
// chunk is given back (its write callback) once every byte of it was answered.

const info = (size: number): FileInfo => ({ name: 'f.bin', size, mode: 0o100644, mtime: new Date(), isDir: false }) as FileInfo;

/** A session whose download writes `chunks` (from `start`) to the handle as core's writeTo does: one at a time, the next once the last was taken back. */
function fakeSession(file: Buffer, chunkSizes: number[], fail?: { after: number; err: Error }) {
  const given: Buffer[] = [];
  const lent: Buffer[] = [];
  let opens = 0;
  const session = {
    async openRead(_path: string, options: { start?: number; recycle?: boolean }): Promise<SessionRead> {
      opens++;
      const stream = new PassThrough();
      let resolveDone!: () => void;
      const done = new Promise<void>((r) => (resolveDone = r));
      const writeTo = (dest: Writable) => {
        void (async () => {
          let pos = options.start ?? 0;
          for (let i = 0; pos < file.length; i++) {
            if (fail && pos >= fail.after) {
              dest.destroy(fail.err);
              return resolveDone();
            }
            const chunk = Buffer.from(file.subarray(pos, pos + chunkSizes[i % chunkSizes.length]!));
            pos += chunk.length;
            lent.push(chunk);
            const ok = await new Promise<boolean>((resolve) => {
              dest.once('close', () => resolve(false));
              dest.write(chunk, (err) => resolve(!err));
            });
            if (!ok) return resolveDone();
            given.push(chunk);
          }
          dest.end();
          resolveDone();
        })();
      };
      return { info: info(file.length), stream, done, writeTo };
    },
  };
  return { session: session as unknown as FileSession, given, lent, opens: () => opens };
}

async function readAll(h: ReadHandle, size: number, readLength: number) {
  const answers: { data: Buffer; copy: Buffer }[] = [];
  for (let offset = 0; ;) {
    let got: Buffer | null = null;
    const sent = await h.readAt(offset, readLength, (data) => {
      got = data;
      answers.push({ data, copy: Buffer.from(data) });
    });
    if (!sent) break;
    offset += got!.length;
    if (offset > size) throw new Error('past the end');
  }
  return answers;
}

t.test('answers byte for byte; views within a chunk, copies across; chunks given back once answered', async (t) => {
  const file = randomBytes(3 * 1024 * 1024 + 777);
  const s = fakeSession(file, [1024 * 1024, 256 * 1024, 100_000]);
  const h = new ReadHandle(s.session, '/f.bin', info(file.length));
  await h.open();
  const answers = await readAll(h, file.length, MAX_READ);
  t.same(Buffer.concat(answers.map((a) => a.copy)), file, 'the file');
  t.ok(
    answers.slice(0, -1).every((a) => a.data.length === MAX_READ),
    'every answer but the last is a whole READ',
  );
  const views = answers.filter((a) => s.lent.some((c) => c.buffer === a.data.buffer));
  t.ok(views.length > 0 && views.length < answers.length, `${views.length} of ${answers.length} answered from the chunk itself, the rest copied`);
  t.equal(s.given.length, s.lent.length, 'every chunk given back');
  await h.close();
  t.equal(s.opens(), 1, 'one download');
});

t.test('a chunk is given back only once every byte of it was answered', async (t) => {
  const file = randomBytes(600 * 1024);
  const s = fakeSession(file, [600 * 1024]);
  const h = new ReadHandle(s.session, '/f.bin', info(file.length));
  await h.open();
  const out: Buffer[] = [];
  await h.readAt(0, 200 * 1024, (d) => void out.push(Buffer.from(d)));
  await h.readAt(200 * 1024, 200 * 1024, (d) => void out.push(Buffer.from(d)));
  t.equal(s.given.length, 0, 'still being answered from');
  await h.readAt(400 * 1024, 255 * 1024, (d) => void out.push(Buffer.from(d)));
  await new Promise((r) => setImmediate(r));
  t.equal(s.given.length, 1, 'given back');
  t.same(Buffer.concat(out), file);
  t.equal(await h.readAt(600 * 1024, 1000, () => void t.fail('nothing past the end')), false, 'then EOF');
  await h.close();
});

t.test('a READ elsewhere reopens the download at its offset', async (t) => {
  const file = randomBytes(2 * 1024 * 1024);
  const s = fakeSession(file, [256 * 1024]);
  const h = new ReadHandle(s.session, '/f.bin', info(file.length));
  await h.open();
  let got: Buffer | null = null;
  t.ok(await h.readAt(1_500_000, 1000, (d) => void (got = Buffer.from(d))));
  t.same(got, file.subarray(1_500_000, 1_501_000));
  t.equal(s.opens(), 2);
  t.equal(await h.readAt(file.length, 10, () => undefined), false, 'at the end: EOF without a download');
  await h.close();
});

t.test('a failed download answers the READ that waits with its failure', async (t) => {
  const file = randomBytes(1024 * 1024);
  const s = fakeSession(file, [256 * 1024], { after: 512 * 1024, err: new Error('disk gone') });
  const h = new ReadHandle(s.session, '/f.bin', info(file.length));
  await h.open();
  await t.rejects(readAll(h, file.length, MAX_READ), /disk gone/);
  await h.close();
});

t.test('an answer that holds a view of the chunk: the chunk is given back once the view was sent', async (t) => {
  const file = randomBytes(2 * MAX_READ);
  const s = fakeSession(file, [MAX_READ]);
  const asked: ArrayBufferLike[] = [];
  let sendAll!: () => void;
  const sent = (memory: ArrayBufferLike) => {
    asked.push(memory);
    return new Promise<void>((r) => (sendAll = r));
  };
  const h = new ReadHandle(s.session, '/f.bin', info(file.length), sent);
  await h.open();
  const held: Buffer[] = [];
  // the whole first chunk in one answer, held (as sendData's 'held')
  await h.readAt(0, MAX_READ, (d) => (held.push(d), true));
  await new Promise((r) => setImmediate(r));
  t.equal(held[0]!.buffer, s.lent[0]!.buffer, 'the answer was a view of the chunk');
  t.same(asked, [s.lent[0]!.buffer], 'the handle asked when the view is sent');
  t.equal(s.given.length, 0, 'not given back while the view waits to be sent');
  t.same(Buffer.from(held[0]!), file.subarray(0, MAX_READ), 'the view still has its bytes');
  sendAll();
  await new Promise((r) => setImmediate(r));
  t.equal(s.given.length, 1, 'given back once sent');
  // an answer that does not hold: given back at once
  const out: Buffer[] = [];
  await h.readAt(MAX_READ, MAX_READ, (d) => void out.push(Buffer.from(d)));
  await new Promise((r) => setImmediate(r));
  t.equal(s.given.length, 2, 'the second chunk given back without waiting');
  t.equal(asked.length, 1, 'nothing asked for it');
  t.same(out[0], file.subarray(MAX_READ));
  await h.close();
});

t.test("a READ across chunks is put together in the handle's reused buffer, reused once its answer was sent", async (t) => {
  const file = randomBytes(400 * 1024);
  const s = fakeSession(file, [100 * 1024]);
  const waits = new Map<ArrayBufferLike, () => void>();
  const sent = (memory: ArrayBufferLike) => new Promise<void>((r) => waits.set(memory, r));
  const h = new ReadHandle(s.session, '/f.bin', info(file.length), sent);
  await h.open();
  const answers: Buffer[] = [];
  // each answer holds its view (as sendData's 'held')
  const hold = (d: Buffer) => (answers.push(d), true);
  await h.readAt(0, 150 * 1024, hold);
  t.notOk(
    s.lent.some((c) => c.buffer === answers[0]!.buffer),
    'across two chunks: not a view of either',
  );
  let second = false;
  const reading = h.readAt(150 * 1024, 150 * 1024, hold).then(() => (second = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  t.notOk(second, 'the next READ across chunks waits while the first answer holds the buffer');
  t.same(Buffer.from(answers[0]!), file.subarray(0, 150 * 1024), 'the held answer keeps its bytes');
  waits.get(answers[0]!.buffer)!();
  await reading;
  t.equal(answers[1]!.buffer, answers[0]!.buffer, 'then the same buffer is reused');
  t.same(Buffer.from(answers[1]!), file.subarray(150 * 1024, 300 * 1024), 'for the next answer');
  for (const r of waits.values()) r();
  await h.close();
});
