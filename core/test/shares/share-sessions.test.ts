import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { addUser, fileApp, PASSWORD } from '../helpers/user-files.js';
import { TOKENS } from '../../src/tokens.js';
import type { ServiceHost } from '../../src/sdk/service.js';
import type { EventBus } from '../../src/events/event-bus.js';
import { Share } from '../../src/data/entities/index.js';
import { FsErrorCode, isFsError } from '../../src/fs/fs-error.js';
import { DomainError } from '../../src/errors.js';

// ServiceHost.shares (sdk/share-sessions.ts): a share opened for reading by a front-end, with the
// REST share routes' checks, and its paths confined to the shared ones.
const ta = await fileApp();
t.teardown(() => ta.close());
const home = await addUser(ta, { username: 'owner' });
mkdirSync(path.join(home, 'pub', 'sub'), { recursive: true });
mkdirSync(path.join(home, 'other'), { recursive: true });
writeFileSync(path.join(home, 'pub', 'a.txt'), 'alpha');
writeFileSync(path.join(home, 'other', 'a.txt'), 'same name');
writeFileSync(path.join(home, 'solo.txt'), 'solo');
const token = await ta.userToken('owner', PASSWORD);
const shares = ta.app.container.resolve<ServiceHost['shares']>(TOKENS.ServiceShares);
const logs: { protocol: string; event: number; username: string }[] = [];
ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('log', (e) => void logs.push(e as never));

const mkShare = async (payload: Record<string, unknown>) => {
  const r = await ta.inject('POST', '/api/v2/user/shares', { token, payload: { scope: 1, ...payload } });
  if (r.statusCode !== 201) throw new Error(r.payload);
  return String(r.headers['x-object-id']);
};
const kindOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: unknown) => (err instanceof DomainError ? err.kind : String(err)),
  );
const open = (id: string, password?: string) =>
  shares.open({ id, ip: '127.0.0.1', protocol: 'DAV', ...(password !== undefined ? { credential: { username: 'x', password } } : {}) });

t.test('a share of one directory: rooted at it, nothing above it', async (t) => {
  const id = await mkShare({ name: 'pub', paths: ['/pub'] });
  const s = await open(id);
  t.teardown(() => s.close());
  t.equal(s.files.protocol, 'DAV');
  t.equal(s.resolve('/'), '/pub');
  t.equal(s.resolve(''), '/pub');
  t.equal(s.resolve('sub/x'), '/pub/sub/x');
  t.equal(s.resolve('\\sub\\x'), '/pub/sub/x');
  for (const bad of ['..', '/sub/../..', '%2e%2e/x', 'a\u0000b']) t.throws(() => s.resolve(bad), JSON.stringify(bad));
  t.equal(s.relative('/pub'), '/');
  t.equal(s.relative('/pub/sub/x'), '/sub/x');
  t.same(await s.rootMembers(), []);
  await s.consume();
  t.equal((await ta.app.orm.em.fork().findOneOrFail(Share, { share_id: id })).used_tokens, 1);
});

t.test('a share of several paths: a made-up root of the shared paths by name (the first of a name)', async (t) => {
  const id = await mkShare({ name: 'multi', paths: ['/pub/a.txt', '/other/a.txt', '/solo.txt', '/pub/sub'] });
  const s = await open(id);
  t.teardown(() => s.close());
  t.equal(s.resolve('/'), null);
  t.equal(s.resolve('/a.txt'), '/pub/a.txt');
  t.equal(s.resolve('/sub/deep/x'), '/pub/sub/deep/x');
  t.ok(
    (() => {
      try {
        s.resolve('/pub');
        return false;
      } catch (err) {
        return isFsError(err, FsErrorCode.NotFound);
      }
    })(),
    'a name the root does not have: NOT_FOUND',
  );
  t.same((await s.rootMembers()).map((m) => [m.name, m.path, m.isDir]).sort(), [
    ['a.txt', '/pub/a.txt', false],
    ['solo.txt', '/solo.txt', false],
    ['sub', '/pub/sub', true],
  ]);
  t.equal(s.relative('/'), '/');
  t.equal(s.relative('/pub/sub/deep'), '/sub/deep');
  t.equal(s.relative('/solo.txt'), '/solo.txt');
  t.throws(() => s.relative('/other/a.txt'), 'the shadowed path has no URL');
});

t.test("the share's checks, with the front-end's protocol in the login events", async (t) => {
  const id = await mkShare({ name: 'locked', paths: ['/pub'], password: 'pw-123456' });
  t.equal(await kindOf(open('nope')), 'not_found');
  t.equal(await kindOf(open(id)), 'unauthorized');
  t.equal(await kindOf(open(id, 'wrong')), 'unauthorized');
  const s = await open(id, 'pw-123456');
  await s.close();
  await s.close();
  t.same(
    logs.filter((e) => e.username === id).map((e) => [e.protocol, e.event]),
    [
      ['DAV', 3],
      ['DAV', 1],
      ['DAV', 5],
    ],
  );
  const drop = await mkShare({ name: 'drop', scope: 2, paths: ['/pub'] });
  t.equal(await kindOf(open(drop)), 'forbidden', 'no read scope');
  const far = await mkShare({ name: 'far', paths: ['/pub'], allow_from: ['10.0.0.0/8'] });
  t.equal(await kindOf(open(far)), 'forbidden');
});
