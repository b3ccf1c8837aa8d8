import t from 'tap';
import { getEventListeners } from 'node:events';
import { PassThrough, Readable, Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import { chain } from '../../src/vfs/downloads.js';

/**
 * chain() (core/src/vfs/downloads.ts) links a download's source through its
 * stages as stream.pipeline() did: every failure ends them all, the last
 * stage carrying the error, and nothing stays registered on the signal.
 */
const pass = () => new PassThrough();
const bytesOf = async (r: Readable) => {
  const out: Buffer[] = [];
  for await (const c of r) out.push(c as Buffer);
  return Buffer.concat(out);
};

t.test('bytes flow through every stage; the signal is left clean', async (t) => {
  const ac = new AbortController();
  const stages = [pass(), pass()];
  chain(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), stages, ac.signal);
  t.equal((await bytesOf(stages[1]!)).toString(), 'abcd');
  await new Promise((r) => setImmediate(r));
  t.equal(getEventListeners(ac.signal, 'abort').length, 0, 'no abort listener left');
});

t.test('a source error ends the last stage with it and destroys the others', async (t) => {
  const source = new Readable({ read() {} });
  const stages = [pass(), pass()];
  chain(source, stages, new AbortController().signal);
  source.destroy(new Error('disk failed'));
  await t.rejects(finished(stages[1]!), /disk failed/, 'the last stage fails with the error');
  t.ok(stages[0]!.destroyed, 'the middle stage is destroyed');
});

t.test('a stage refusing a chunk (a quota) ends the chain', async (t) => {
  const source = new Readable({ read() {} });
  const refuse = new Transform({ transform: (_c, _e, cb) => cb(new Error('quota exceeded')) });
  const last = pass();
  chain(source, [refuse, last], new AbortController().signal);
  source.push(Buffer.from('x'));
  await t.rejects(finished(last), /quota exceeded/, 'the last stage carries the refusal');
  await new Promise((r) => setImmediate(r));
  t.ok(source.destroyed, 'the source is destroyed');
});

t.test('the signal destroys every stream', async (t) => {
  const ac = new AbortController();
  const source = new Readable({ read() {} });
  const last = pass();
  chain(source, [last], ac.signal);
  ac.abort(new Error('the client went away'));
  await t.rejects(finished(last), /the client went away/, 'the reason is the error');
  t.ok(source.destroyed, 'the source is destroyed');
  t.equal(getEventListeners(ac.signal, 'abort').length, 0, 'no abort listener left');
});

t.test('the consumer destroying the last stage destroys the source', async (t) => {
  const source = new Readable({ read() {} });
  const last = pass();
  chain(source, [last], new AbortController().signal);
  last.destroy();
  await new Promise((r) => setImmediate(r));
  t.ok(source.destroyed, 'the source is destroyed');
});

t.test('a source closed before its end fails the chain (no hang)', async (t) => {
  const source = new Readable({ read() {} });
  const last = pass();
  chain(source, [last], new AbortController().signal);
  source.push(Buffer.from('partial'));
  source.destroy();
  await t.rejects(finished(last), { code: 'ERR_STREAM_PREMATURE_CLOSE' }, 'premature close');
});
