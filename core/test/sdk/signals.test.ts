import t from 'tap';
import { getEventListeners } from 'node:events';
import { linkedSignal, onAbort } from '../../src/sdk/signals.js';

const listeners = (s: AbortSignal) => getEventListeners(s, 'abort').length;

t.test('onAbort: one real listener per signal, removed with the last callback', async (t) => {
  const ac = new AbortController();
  const offs = Array.from({ length: 100 }, () => onAbort(ac.signal, () => t.fail('removed callbacks never run')));
  t.equal(listeners(ac.signal), 1, 'a hundred callbacks behind one listener');
  for (const off of offs.slice(0, 99)) off();
  t.equal(listeners(ac.signal), 1, 'kept while a callback waits');
  offs[99]!();
  t.equal(listeners(ac.signal), 0, 'gone with the last one');
  offs[99]!();
  let ran = 0;
  const off = onAbort(ac.signal, () => ran++);
  t.equal(listeners(ac.signal), 1, 'registered again afterwards');
  ac.abort();
  t.equal(ran, 1);
  off();
  t.equal(listeners(ac.signal), 0);
});

t.test('onAbort on an already aborted signal runs at once and registers nothing', async (t) => {
  const ac = new AbortController();
  ac.abort(new Error('gone'));
  let reason: unknown;
  onAbort(ac.signal, (r) => (reason = r))();
  t.match(reason, { message: 'gone' });
  t.equal(listeners(ac.signal), 0);
});

t.test('a composite signal keeps no listener once its operations are over', async (t) => {
  // AbortSignal.any with a listener attached is held by Node until it aborts: a listener left
  // on one fed by a long-lived signal kept every finished request reachable (the soak leak)
  const longLived = new AbortController();
  const composite = AbortSignal.any([longLived.signal, new AbortController().signal]);
  const off = onAbort(composite, () => undefined);
  t.equal(listeners(composite), 1);
  off();
  t.equal(listeners(composite), 0);
});

t.test('linkedSignal fires with any source and leaves nothing on them once disposed', async (t) => {
  const conn = new AbortController();
  const request = new AbortController();
  const sessions = Array.from({ length: 50 }, () => linkedSignal(request.signal, conn.signal, undefined));
  t.equal(listeners(conn.signal), 1);
  for (const s of sessions) s.dispose();
  t.equal(listeners(conn.signal), 0, 'the long-lived source is clean after the sessions closed');
  t.equal(listeners(request.signal), 0);

  const a = linkedSignal(request.signal, conn.signal);
  conn.abort(new Error('closed by an admin'));
  t.ok(a.signal.aborted);
  t.match(a.signal.reason, { message: 'closed by an admin' }, 'the source reason is passed on');
  a.dispose();
  const b = linkedSignal(request.signal, conn.signal);
  t.ok(b.signal.aborted, 'an aborted source aborts at once');

  const fresh = new AbortController();
  const c = linkedSignal(fresh.signal);
  c.abort(new Error('the socket closed'));
  t.ok(c.signal.aborted, 'abort() fires the linked signal itself');
  t.match(c.signal.reason, { message: 'the socket closed' });
  t.notOk(fresh.signal.aborted, 'and not its sources');
  c.dispose();
  t.equal(listeners(fresh.signal), 0);
});
