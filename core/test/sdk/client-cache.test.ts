import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClientCache } from '../../src/sdk/client-cache.js';

interface FakeClient {
  id: number;
  destroyed: boolean;
}

function cache(idleMs: number) {
  let n = 0;
  const created: FakeClient[] = [];
  const c = new ClientCache<FakeClient>({
    idleMs,
    destroy: (x) => {
      x.destroyed = true;
    },
  });
  const make = () => {
    const x = { id: ++n, destroyed: false };
    created.push(x);
    return x;
  };
  return { c, make, created };
}

t.test('one client per identity, shared by every holder', async (t) => {
  const { c, make, created } = cache(1000);
  const a = c.acquire(['http://s3', 'key', 'secret'], make);
  const b = c.acquire(['http://s3', 'key', 'secret'], make);
  t.equal(a.client, b.client, 'the same client');
  const other = c.acquire(['http://s3', 'key', 'other secret'], make);
  t.not(other.client, a.client, 'another secret: another client');
  // parts are joined unambiguously: ['a,b'] and ['a', 'b'] differ
  const [ab, aAndB] = [c.acquire(['a,b'], make), c.acquire(['a', 'b'], make)];
  t.not(ab.client, aAndB.client);
  t.equal(created.length, 4);
  t.equal(c.size, 4);
  for (const l of [a, b, other, ab, aAndB]) l.release();
  c.clear();
  t.ok(
    created.every((x) => x.destroyed),
    'clear() destroys every idle client',
  );
  t.equal(c.size, 0);
});

t.test('a client is destroyed once nobody held it for idleMs, kept while held', async (t) => {
  const { c, make } = cache(40);
  const a = c.acquire(['id'], make);
  const b = c.acquire(['id'], make);
  a.release();
  a.release(); // a second release of the same lease counts for nothing
  await sleep(80);
  t.equal(b.client.destroyed, false, 'still held by b');
  b.release();
  const again = c.acquire(['id'], make);
  t.equal(again.client, b.client, 'taken again within idleMs: the same client');
  again.release();
  await sleep(120);
  t.equal(b.client.destroyed, true, 'destroyed after idleMs without holders');
  t.equal(c.size, 0);
  const fresh = c.acquire(['id'], make);
  t.not(fresh.client, b.client, 'a new client afterwards');
  t.equal(fresh.client.destroyed, false);
  c.clear();
});

t.test('no secret in the keys', async (t) => {
  const { c, make } = cache(1000);
  c.acquire(['endpoint', 'very-secret-value'], make);
  const keys = [...(c as unknown as { entries: Map<string, unknown> }).entries.keys()];
  t.equal(keys.length, 1);
  t.notMatch(keys[0]!, /secret/);
  c.clear();
});

t.test('clear() while a client is held: destroyed at its last release, never handed out again', async (t) => {
  const { c, make } = cache(1000);
  const held = c.acquire(['id'], make);
  const idle = c.acquire(['other'], make);
  idle.release();
  c.clear();
  t.equal(idle.client.destroyed, true, 'an idle client is destroyed at once');
  t.equal(held.client.destroyed, false, 'a held one is left to its holder');
  const next = c.acquire(['id'], make);
  t.not(next.client, held.client, 'a new client for the next holder');
  held.release();
  t.equal(held.client.destroyed, true, 'destroyed once released');
  next.release();
  c.clear();
  t.equal(next.client.destroyed, true);
});
