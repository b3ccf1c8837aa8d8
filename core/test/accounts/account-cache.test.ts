import 'reflect-metadata';
import t from 'tap';
import { AccountCache } from '../../src/accounts/account-cache.js';
import type { Change, ChangeFeed, ChangeListener } from '../../src/data/change-feed.js';
import type { UserWithMappings } from '../../src/accounts/user-rows.js';

/**
 * AccountCache (core/src/accounts/account-cache.ts): what a change drops,
 * that a read which raced a change is not kept, and that nothing is
 * answered from memory while the change feed is not trusted.
 */
class FakeFeed {
  trusted = true;
  private fns: ChangeListener[] = [];
  subscribe(fn: ChangeListener) {
    this.fns.push(fn);
    return () => undefined;
  }
  publish(c: Change) {
    for (const f of this.fns) f(c);
  }
}
const row = (username: string) => ({ user: { id: 1, username }, groups: [], folders: [] }) as unknown as UserWithMappings;
const setup = () => {
  const feed = new FakeFeed();
  return { feed, cache: new AccountCache(feed as unknown as ChangeFeed) };
};

t.test('a user change drops that user; a group, folder or role change drops every user', async (t) => {
  const { cache } = setup();
  for (const u of ['a', 'b']) cache.storeUser(u, row(u), cache.stamp());
  cache.changed({ type: 'user', name: 'a' });
  t.notOk(cache.user('a'), 'the changed user is gone');
  t.ok(cache.user('b'), 'the other one is kept');
  for (const type of ['group', 'folder', 'role']) {
    cache.storeUser('a', row('a'), cache.stamp());
    cache.changed({ type, name: 'x' });
    t.notOk(cache.user('a') ?? cache.user('b'), `a ${type} change drops every user`);
  }
  cache.storeUser('a', row('a'), cache.stamp());
  cache.changed({ type: 'admin', name: 'a' });
  t.ok(cache.user('a'), "an admin's change leaves users alone");
});

t.test('a read that raced a change is not kept', async (t) => {
  const { cache } = setup();
  const stamp = cache.stamp();
  cache.changed({ type: 'user', name: 'other' });
  const entry = cache.storeUser('a', row('a'), stamp);
  t.equal(entry.mappings.user.username, 'a', 'the read is still answered');
  t.notOk(cache.user('a'), 'but not kept');
  cache.storeLiveToken('j1', Date.now() / 1000 + 60, stamp);
  t.notOk(cache.tokenLive('j1'));
});

t.test('token ids: live until revoked or expired', async (t) => {
  const { cache } = setup();
  cache.storeLiveToken('j1', Date.now() / 1000 + 60, cache.stamp());
  cache.storeLiveToken('j2', Date.now() / 1000 - 1, cache.stamp());
  t.ok(cache.tokenLive('j1'));
  t.notOk(cache.tokenLive('j2'), 'expired');
  cache.changed({ type: 'jti', name: 'j1' });
  t.notOk(cache.tokenLive('j1'), 'revoked');
});

t.test('an untrusted feed: nothing answered nor kept; everything dropped', async (t) => {
  const { cache, feed } = setup();
  cache.storeUser('a', row('a'), cache.stamp());
  cache.storeLiveToken('j', Date.now() / 1000 + 60, cache.stamp());
  feed.trusted = false;
  t.notOk(cache.user('a'), 'not answered from memory');
  t.notOk(cache.tokenLive('j'));
  cache.storeUser('b', row('b'), cache.stamp());
  feed.publish({ type: 'all', name: '' });
  feed.trusted = true;
  t.notOk(cache.user('a') ?? cache.user('b'), "kept neither before nor while untrusted once 'all' came");
  t.notOk(cache.tokenLive('j'));
});
