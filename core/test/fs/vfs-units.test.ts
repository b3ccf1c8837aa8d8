import 'reflect-metadata';
import t from 'tap';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PermissionSet } from '../../src/vfs/permissions.js';
import { globToRegExp, PatternFilters } from '../../src/vfs/patterns.js';
import { QuotaTracker } from '../../src/vfs/quota-tracker.js';
import { StorageReservation, TransferReservation, type QuotaScope } from '../../src/vfs/quota-guard.js';
import { bandwidthFor, Throttle } from '../../src/vfs/throttle.js';
import { VirtualFs } from '../../src/vfs/vfs.js';
import { entityTag, ifRangeMatches, noneMatch, notModifiedSince, parseRange } from '../../src/http/range-header.js';
import { contentDisposition } from '../../src/http/user-session.js';
import { ConnectionManager } from '../../src/vfs/connection-manager.js';
import { renderConnection } from '../../src/http/connection-status.js';
import type { EffectiveUser } from '../../src/accounts/effective-user.js';
import type { FsFactory } from '../../src/vfs/fs-factory.js';
import type { UsageStore } from '../../src/vfs/usage-store.js';
import type { QuotaService } from '../../src/vfs/quota.service.js';

t.test('PermissionSet: deepest configured path wins, "*" grants all', async (t) => {
  const p = new PermissionSet({ '/': ['list'], '/a': ['upload'], '/a/b/': ['*'], 'c\\d': ['download'] });
  t.ok(p.has('/x/y', 'list'));
  t.notOk(p.has('/a/file', 'list'), '/a replaces /, it does not add to it');
  t.ok(p.has('/a/file', 'upload'));
  t.ok(p.has('/a/b/c', 'delete', 'rename'));
  t.ok(p.has('/c/d/e', 'download'), 'keys are normalised');
  t.notOk(p.has('/ab', 'upload'), 'a sibling with a common prefix is not inside');
  t.ok(p.hasInParent('/a/b', 'upload'));
  t.same(p.pathsBelow('/a'), ['/a/b']);
  t.notOk(new PermissionSet({}).has('/', 'list'));
});

t.test('file patterns: glob syntax, precedence, policies', async (t) => {
  const cases: [string, string, boolean][] = [
    ['*.txt', 'a.txt', true],
    ['*.txt', 'a.txt.exe', false],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['[ab]*', 'bz', true],
    ['[!ab]*', 'bz', false],
    ['[^ab]*', 'cz', true],
    ['a.b', 'axb', false],
    ['(x)', '(x)', true],
    ['\\*', '*', true],
    ['\\*', 'a', false],
    ['[a-c]', 'b', true],
  ];
  for (const [pat, name, ok] of cases) t.equal(globToRegExp(pat).test(name), ok, `${pat} ~ ${name}`);
  const f = new PatternFilters([
    { path: '/', denied_patterns: ['*.EXE'] },
    { path: '/in', allowed_patterns: ['*.jpg'], denied_patterns: ['bad*'] },
    { path: '/hide', denied_patterns: ['*.key'], deny_policy: 1 },
  ]);
  t.same(f.check('/x/run.exe'), { allowed: false, policy: 0 });
  t.same(f.check('/in/a.jpg'), { allowed: true, policy: 0 });
  t.same(f.check('/in/bad.jpg'), { allowed: false, policy: 0 }, 'denied is checked first');
  t.same(f.check('/in/sub/a.png'), { allowed: false, policy: 0 }, 'inherited by subdirectories');
  t.same(f.check('/in/run.exe').allowed, false);
  t.ok(f.isHidden('/hide/a.KEY'));
  t.notOk(f.isHidden('/x/run.exe'));
  t.same(f.check('/'), { allowed: true, policy: 0 });
  t.ok(new PatternFilters(undefined).empty);
});

t.test('QuotaTracker: reservations are atomic; refresh never double counts a commit', async (t) => {
  const q = new QuotaTracker();
  let stored = 0;
  await q.refresh('k', async () => [stored, 0]);
  const fits = (x: [number, number]) => x[0] <= 100;
  t.ok(q.tryReserve('k', [60, 0], fits));
  t.notOk(q.tryReserve('k', [50, 0], fits), 'reserved bytes count');
  t.ok(q.tryReserve('k', [40, 0], fits));
  // a refresh that overlaps a commit is repeated
  let release!: () => void;
  const slowWrite = new Promise<void>((r) => (release = r));
  const commit = q.commit([{ key: 'k', reserved: [60, 0], applied: [60, 0] }], async () => {
    await slowWrite;
    stored += 60;
  });
  const refresh = q.refresh('k', async () => [stored, 0]);
  release();
  await Promise.all([commit, refresh]);
  t.same(q.current('k'), [100, 0], '60 stored + 40 still reserved, counted once');
  q.release('k', [40, 0]);
  t.same(q.current('k'), [60, 0]);
  await q.commit([{ key: 'k', reserved: [0, 0], applied: [-100, 0] }], async () => undefined);
  t.same(q.current('k'), [0, 0], 'never below zero');
  const failing = q.commit([{ key: 'k', reserved: [0, 0], applied: [5, 0] }], async () => {
    throw new Error('db down');
  });
  await t.rejects(failing);
  t.same(q.current('k'), [0, 0], 'a failed write moves nothing');
});

t.test('StorageReservation and TransferReservation', async (t) => {
  const tracker = new QuotaTracker();
  let used: [number, number] = [900, 9];
  const writes: [number, number][] = [];
  const scope: QuotaScope = {
    key: 'u:1',
    limits: [1000, 10],
    label: 'the user quota',
    read: async () => used,
    write: async (s, f) => {
      writes.push([s, f]);
      used = [used[0] + s, used[1] + f];
    },
  };
  const a = new StorageReservation(tracker, scope, 0, 1);
  await a.begin(50);
  const b = new StorageReservation(tracker, scope, 0, 1);
  await t.rejects(b.begin(10), { code: 'QUOTA', message: /file quota exceeded/ });
  t.ok(a.take(50) && a.take(50), 'declared bytes, then more up to the limit');
  t.notOk(a.take(1), 'past the limit');
  await a.commit(100);
  t.same(writes.at(-1), [100, 1]);
  const over = new StorageReservation(tracker, scope, 400, 0);
  await over.begin();
  t.ok(over.take(400), 'an overwrite is credited with the replaced size');
  t.notOk(over.take(1));
  over.release();
  t.same(tracker.current('u:1'), [1000, 10]);

  const user = { id: 7, upload_data_transfer: 1, download_data_transfer: 0, total_data_transfer: 0 } as EffectiveUser;
  const transfers: [number, number][] = [];
  const usage = { userUsage: async () => ({ size: 0, files: 0, upload: 1024 * 1024 - 10, download: 0 }) } as unknown as UsageStore;
  const quota = { addTransfer: async (_id: number, u: number, d: number) => void transfers.push([u, d]) } as unknown as QuotaService;
  const x = new TransferReservation(tracker, usage, quota, user, 'upload');
  await x.begin();
  t.ok(x.take(9));
  t.notOk(x.take(5), 'stops at the limit');
  await x.commit();
  t.same(transfers, [[9, 0]], 'stores the bytes that passed');
  const dl = new TransferReservation(tracker, usage, quota, user, 'download');
  await dl.begin(1e9);
  t.ok(dl.take(1e9), 'no download limit');
});

t.test('Throttle keeps the rate and holds little data', async (t) => {
  const rate = 400 * 1024;
  const th = new Throttle(rate);
  const start = Date.now();
  let out = 0;
  await pipeline(
    Readable.from(
      (function* () {
        for (let i = 0; i < 10; i++) yield Buffer.alloc(64 * 1024);
      })(),
    ),
    th,
    new Writable({
      write(c: Buffer, _e, cb) {
        out += c.length;
        cb();
      },
    }),
  );
  const ms = Date.now() - start;
  t.equal(out, 640 * 1024);
  t.ok(ms >= 1300 && ms < 2600, `640 KiB at 400 KiB/s took ${ms} ms`);
  // a stalled consumer: the throttle buffers only its window
  const slow = new Throttle(10 * 1024 * 1024);
  const src = new PassThrough();
  src.pipe(slow);
  let accepted = 0;
  for (let i = 0; i < 100; i++) if (src.write(Buffer.alloc(64 * 1024))) accepted++;
  await new Promise((r) => setTimeout(r, 100));
  t.ok(slow.readableLength + slow.writableLength <= 256 * 1024, `buffered ${slow.readableLength + slow.writableLength} bytes`);
  t.ok(accepted < 100, 'the writer sees backpressure');
  slow.destroy();
  src.destroy();
  t.same(bandwidthFor({ upload_bandwidth: 5, download_bandwidth: 6, filters: {} }, '1.2.3.4'), { upload: 5, download: 6 });
  const f = { bandwidth_limits: [{ sources: ['10.0.0.0/8'], upload_bandwidth: 1, download_bandwidth: 2 }] };
  t.same(bandwidthFor({ upload_bandwidth: 5, download_bandwidth: 6, filters: f }, '10.1.1.1'), { upload: 1, download: 2 });
  t.same(bandwidthFor({ upload_bandwidth: 5, download_bandwidth: 6, filters: f }, '::ffff:10.1.1.1'), { upload: 1, download: 2 });
});

t.test('Range and validators', async (t) => {
  t.same(parseRange(undefined, 10), { kind: 'full' });
  t.same(parseRange('bytes=0-', 10), { kind: 'partial', start: 0, end: 9 });
  t.same(parseRange('bytes=-5', 3), { kind: 'partial', start: 0, end: 2 });
  t.same(parseRange('bytes=3-3', 3), { kind: 'unsatisfiable' });
  t.same(parseRange('bytes=99999999999999999999-', 3), { kind: 'full' }, 'absurd numbers are ignored');
  const mtime = new Date(1_700_000_000_123);
  const etag = entityTag({ size: 10, mtime });
  t.match(etag, /^"[0-9a-f]+-a"$/);
  t.equal(entityTag({ size: 1, mtime, etag: 'W/"abc"' }), '"abc"');
  t.equal(entityTag({ size: 1, mtime, etag: 'bad"tag' }), etag.replace('-a"', '-1"'));
  t.ok(noneMatch('*', etag));
  t.ok(noneMatch(`"x", ${etag}`, etag));
  t.notOk(noneMatch(undefined, etag));
  t.ok(notModifiedSince(mtime.toUTCString(), mtime), 'second precision');
  t.notOk(notModifiedSince(new Date(mtime.getTime() - 1000).toUTCString(), mtime));
  t.ok(ifRangeMatches(etag, etag, mtime));
  t.notOk(ifRangeMatches(`W/${etag}`, etag, mtime));
  t.ok(ifRangeMatches(mtime.toUTCString(), etag, mtime));
  t.notOk(ifRangeMatches('yesterday', etag, mtime));
  t.equal(contentDisposition('attachment', 'a;b%c".txt'), `attachment; filename="a_b_c_.txt"; filename*=UTF-8''a%3Bb%25c%22.txt`);
  t.equal(contentDisposition('inline', '\r\n'), `inline; filename="__"; filename*=UTF-8''%0D%0A`);
  // a file name is cut to 255 UTF-8 bytes (at a character boundary, the extension kept): the header stays small
  t.equal(
    contentDisposition('attachment', 'a'.repeat(300) + '.tar.gz'),
    `attachment; filename="${'a'.repeat(252)}.gz"; filename*=UTF-8''${'a'.repeat(252)}.gz`,
  );
  t.equal(
    contentDisposition('attachment', 'x'.repeat(255)),
    `attachment; filename="${'x'.repeat(255)}"; filename*=UTF-8''${'x'.repeat(255)}`,
    '255 bytes stay',
  );
  const cut = contentDisposition('attachment', '€'.repeat(100_000) + '.txt');
  t.equal(cut, `attachment; filename="${'_'.repeat(83)}.txt"; filename*=UTF-8''${'%E2%82%AC'.repeat(83)}.txt`, 'multi-byte: whole characters only');
  t.equal(contentDisposition('attachment', 'b'.repeat(1000) + '.' + 'e'.repeat(40)).length < 1024, true, 'a long "extension" is not kept whole');
});

t.test('VirtualFs: mounts, deepest wins, virtual directories', async (t) => {
  const user = {
    username: 'u',
    role: '',
    custom_placeholders: [],
    home_dir: '/h',
    filesystem: { provider: 0 },
    virtual_folders: [
      { name: 'a', virtual_path: '/a', filesystem: { provider: 0 }, mapped_path: '/fa' },
      { name: 'deep', virtual_path: '/a/b/c', filesystem: { provider: 0 }, mapped_path: '/fd' },
      { name: 'bad', virtual_path: '../x', filesystem: { provider: 0 }, mapped_path: '/fx' },
      { name: 'root', virtual_path: '/', filesystem: { provider: 0 }, mapped_path: '/fr' },
    ],
  } as unknown as EffectiveUser;
  const v = new VirtualFs(user, {} as FsFactory);
  t.same(
    v.mounts.map((m) => m.vpath),
    ['/a/b/c', '/a', '/'],
    'invalid and root mappings ignored',
  );
  t.same(v.resolve('/a/b/c/d'), { vpath: '/a/b/c/d', mount: v.mounts[0], fsPath: '/d' });
  t.same(v.resolve('/a/b').fsPath, '/b');
  t.same(v.resolve('/a').fsPath, '/');
  t.same(v.resolve('/ab').mount.vpath, '/');
  t.same([...v.virtualChildren('/').keys()], ['a']);
  t.same(
    [...v.virtualChildren('/a').entries()].map(([k, m]) => [k, m?.vpath]),
    [['b', undefined]],
  );
  t.same(
    [...v.virtualChildren('/a/b').entries()].map(([k, m]) => [k, m?.vpath]),
    [['c', '/a/b/c']],
  );
  t.ok(v.isVirtualDir('/a/b'));
  t.notOk(v.isVirtualDir('/a/x'));
  t.notOk(v.isVirtualDir('/'));
  t.ok(v.containsMount('/'));
  t.notOk(v.containsMount('/b'));
});

t.test('ConnectionManager: sessions share a connection; limits', async (t) => {
  const cm = new ConnectionManager('n1');
  const info = { username: 'u', protocol: 'HTTP' as const, remote_address: '1.1.1.1', client_version: '', command: '', role: '' };
  const a = cm.acquire('s1', info, 2);
  const b = cm.acquire('s1', info, 2);
  t.equal(a, b, 'same session, same connection');
  cm.acquire('s2', info, 2);
  t.throws(() => cm.acquire('s3', info, 2), { message: /too many open sessions/ });
  const tr = cm.startTransfer(a, { operation_type: 'upload', path: '/x' }, { maxTotal: 0, maxPerHost: 1 });
  t.throws(() => cm.startTransfer(a, { operation_type: 'upload', path: '/y' }, { maxTotal: 0, maxPerHost: 1 }), {
    message: /too many transfers in progress from 1.1.1.1/,
  });
  t.match(renderConnection(a, cm.node), { node: 'n1', active_transfers: [{ operation_type: 'upload', path: '/x', size: 0 }] });
  cm.release(a);
  cm.release(b);
  t.ok(cm.get(a.connection_id), 'kept while a transfer runs');
  cm.endTransfer(a, tr);
  t.notOk(cm.get(a.connection_id), 'gone with its last request and transfer');
  t.equal(cm.disconnectUser('u'), 1);
  t.equal(cm.list().length, 0);
  const c = cm.acquire('s1', info);
  t.not(c.connection_id, a.connection_id);
  t.ok(cm.close(c.connection_id));
  t.ok(c.controller.signal.aborted);
  t.notOk(cm.close(c.connection_id));
  const d = cm.acquire('s1', info);
  t.not(d, c, 'a closed connection is never reused');
});

t.test('ConnectionManager: transfer counters match a count over the connections, whatever happens to them', async (t) => {
  const cm = new ConnectionManager('n1');
  const info = (ip: string) => ({ username: `u-${ip}`, protocol: 'HTTP' as const, remote_address: ip, client_version: '', command: '', role: '' });
  const recount = (ip: string) => {
    let total = 0;
    let host = 0;
    for (const c of cm.list()) {
      total += c.transfers.size;
      if (c.remote_address === ip) host += c.transfers.size;
    }
    return { total, host };
  };
  const ips = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];
  const none = { maxTotal: 0, maxPerHost: 0 };
  // a deterministic mix of opens, transfers, ends, releases, removals and admin closes
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const live: { conn: ReturnType<ConnectionManager['acquire']>; transfers: ReturnType<ConnectionManager['startTransfer']>[] }[] = [];
  for (let step = 0; step < 2000; step++) {
    const op = rnd(7);
    const ip = ips[rnd(ips.length)]!;
    if (op === 0 || live.length === 0) {
      live.push({ conn: cm.acquire(`s${step}`, info(ip)), transfers: [] });
      continue;
    }
    const e = live[rnd(live.length)]!;
    if (op <= 2) {
      if (!e.conn.controller.signal.aborted) e.transfers.push(cm.startTransfer(e.conn, { operation_type: 'upload', path: `/f${step}` }, none));
    } else if (op === 3 && e.transfers.length) {
      cm.endTransfer(e.conn, e.transfers.shift()!);
    } else if (op === 4) {
      cm.release(e.conn);
    } else if (op === 5) {
      cm.remove(e.conn.connection_id);
    } else {
      cm.close(e.conn.connection_id);
    }
    for (const x of ips) {
      const want = recount(x);
      const got = cm.transferCounts(x);
      if (got.total !== want.total || got.host !== want.host) {
        t.fail(`step ${step}: counters ${JSON.stringify(got)} but the connections hold ${JSON.stringify(want)} for ${x}`);
        return;
      }
    }
  }
  t.ok(cm.transferCounts(ips[0]!).total > 0, 'transfers were in progress at the end');
  // the limits read the counters: exactly maxPerHost transfers from one address, then 429
  const fresh = new ConnectionManager('n2');
  const a = fresh.acquire('a', info('10.9.9.9'));
  const b = fresh.acquire('b', info('10.9.9.9'));
  const limits = { maxTotal: 3, maxPerHost: 2 };
  const t1 = fresh.startTransfer(a, { operation_type: 'upload', path: '/1' }, limits);
  fresh.startTransfer(b, { operation_type: 'download', path: '/2' }, limits);
  t.throws(() => fresh.startTransfer(a, { operation_type: 'upload', path: '/3' }, limits), { message: /from 10.9.9.9/ });
  const c = fresh.acquire('c', info('10.8.8.8'));
  fresh.startTransfer(c, { operation_type: 'upload', path: '/4' }, limits);
  t.throws(() => fresh.startTransfer(c, { operation_type: 'upload', path: '/5' }, limits), { message: /on this server \(maximum 3\)/ });
  fresh.endTransfer(a, t1);
  fresh.endTransfer(a, t1);
  t.same(fresh.transferCounts('10.9.9.9'), { total: 2, host: 1 }, 'ending a transfer twice counts once');
  t.ok(fresh.startTransfer(a, { operation_type: 'upload', path: '/6' }, limits), 'a slot freed by an end is usable');
  fresh.close(b.connection_id);
  t.same(fresh.transferCounts('10.9.9.9'), { total: 2, host: 1 }, "a closed connection's transfers no longer count");
});
