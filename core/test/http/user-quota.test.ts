import t from 'tap';
import http from 'node:http';
import { existsSync, mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { addFolder, addUser, api, fileApp, folderRow, listen, PASSWORD, updateUser, userRow } from '../helpers/user-files.js';
import { processTag } from '../../src/sdk/process-tag.js';

const ta = await fileApp();
t.teardown(() => ta.close());
const q = (p: string) => encodeURIComponent(p);
const KB = 1024;

async function login(username: string, spec: Parameters<typeof addUser>[1] = { username }) {
  const home = await addUser(ta, { ...spec, username });
  const token = await ta.userToken(username, PASSWORD);
  const up = (p: string, body: Buffer | Readable, extra = '') =>
    ta.inject('POST', `/api/v2/user/files/upload?path=${q(p)}${extra}`, { token, payload: body, headers: { 'content-type': 'application/octet-stream' } });
  const call = (method: string, url: string) => ta.inject(method, url, { token });
  return { home, token, up, call };
}
const usage = async (u: string) => {
  const r = await userRow(ta, u);
  return { size: r.used_quota_size, files: r.used_quota_files, ul: r.used_upload_data_transfer, dl: r.used_download_data_transfer };
};
const slow = (chunks: number, size: number, delayMs: number) =>
  Readable.from(
    (async function* () {
      for (let i = 0; i < chunks; i++) {
        await sleep(delayMs);
        yield Buffer.alloc(size, i);
      }
    })(),
  );
/** Transfer counters are stored once a response stream ends: poll briefly. */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  let v = await read();
  for (let i = 0; i < 100 && !ok(v); i++) {
    await sleep(20);
    v = await read();
  }
  return v;
}
const noTemp = () => readdirSync(path.join(ta.dataDir, 'uploads-tmp', processTag())).length === 0;

t.test('size and file quotas: uploads, overwrites and deletes move the counters', async (t) => {
  const u = await login('q1', { username: 'q1', quota_size: 1000, quota_files: 3 });
  t.equal((await u.up('/a', Buffer.alloc(600))).statusCode, 201);
  t.same(await usage('q1'), { size: 600, files: 1, ul: 600, dl: 0 });
  const over = await u.up('/b', Buffer.alloc(500));
  t.equal(over.statusCode, 413, over.payload);
  t.match(JSON.parse(over.payload), { message: /size quota exceeded/, error: 'Request Entity Too Large' });
  t.notOk(existsSync(path.join(u.home, 'b')));
  t.equal((await u.up('/b', Buffer.alloc(400))).statusCode, 201, 'exactly at the quota');
  t.same((await usage('q1')).size, 1000);
  const streamed = await u.up('/c', Readable.from([Buffer.alloc(10), Buffer.alloc(10)]));
  t.equal(streamed.statusCode, 413, 'streamed upload stopped at the limit');
  t.notOk(existsSync(path.join(u.home, 'c')));
  t.equal((await u.up('/a', Buffer.alloc(100))).statusCode, 201, 'an overwrite is credited with the replaced size');
  t.same(await usage('q1'), { size: 500, files: 2, ul: 1100, dl: 0 });
  t.equal((await u.up('/c', Buffer.alloc(1))).statusCode, 201);
  const files = await u.up('/d', Buffer.alloc(1));
  t.equal(files.statusCode, 413);
  t.match(JSON.parse(files.payload).message, /file quota exceeded/);
  t.equal((await u.call('DELETE', `/api/v2/user/files?path=${q('/b')}`)).statusCode, 200);
  t.same((await usage('q1')).size, 101);
  t.same((await usage('q1')).files, 2);
  mkdirSync(path.join(u.home, 'dir/sub'), { recursive: true });
  writeFileSync(path.join(u.home, 'dir/sub/x'), Buffer.alloc(50));
  await updateUser(ta, 'q1', { used_quota_size: 151, used_quota_files: 3 });
  t.equal((await u.call('DELETE', `/api/v2/user/dirs?path=${q('/dir')}`)).statusCode, 200);
  t.same((await usage('q1')).size, 101, 'rmdir subtracts what the tree held');
  t.same((await usage('q1')).files, 2);
  t.ok(noTemp());
});

t.test('parallel uploads can never exceed the quota together', async (t) => {
  const u = await login('q2', { username: 'q2', quota_size: 1000 * KB });
  // declared sizes: the second is refused at once
  const [a, b] = await Promise.all([u.up('/p1', Buffer.alloc(700 * KB)), u.up('/p2', Buffer.alloc(700 * KB))]);
  t.same([a.statusCode, b.statusCode].sort(), [201, 413]);
  t.equal((await usage('q2')).size, 700 * KB);
  for (const f of ['p1', 'p2']) if (existsSync(path.join(u.home, f))) t.equal(statSync(path.join(u.home, f)).size, 700 * KB);
  // unknown sizes, interleaved chunks: whatever happens, the stored total stays within the quota
  await u.call('DELETE', `/api/v2/user/files?path=${a.statusCode === 201 ? '/p1' : '/p2'}`);
  const results = await Promise.all([1, 2, 3].map((i) => u.up(`/s${i}`, slow(8, 50 * KB, 5))));
  const ok = results.filter((r) => r.statusCode === 201).length;
  t.ok(ok >= 1 && ok <= 2, `${ok} of 3 streamed uploads of 400 KiB fit in 1000 KiB`);
  t.ok(
    results.every((r) => r.statusCode === 201 || r.statusCode === 413),
    results.map((r) => r.statusCode).join(','),
  );
  const stored = readdirSync(u.home).reduce((n, f) => n + statSync(path.join(u.home, f)).size, 0);
  t.ok(stored <= 1000 * KB, `stored ${stored} bytes`);
  t.equal((await usage('q2')).size, stored, 'counter equals what is on disk');
  t.equal(stored, ok * 400 * KB, 'refused uploads left nothing');
  t.ok(noTemp());
});

t.test('parallel uploads to the same new path count one file', async (t) => {
  const u = await login('q2same', { username: 'q2same', quota_size: 1000 * KB, quota_files: 10 });
  // both uploads stat the path before either publishes: without the path ledger each would add a file
  const results = await Promise.all([u.up('/same', slow(6, 10 * KB, 10)), u.up('/same', slow(4, 10 * KB, 10)), u.up('/same', slow(2, 10 * KB, 10))]);
  t.same(
    results.map((r) => r.statusCode),
    [201, 201, 201],
  );
  const onDisk = statSync(path.join(u.home, 'same')).size;
  t.ok([20, 40, 60].map((n) => n * KB).includes(onDisk), `the last published upload is in place (${onDisk})`);
  t.match(await usage('q2same'), { size: onDisk, files: 1 }, 'counters hold one file of the size on disk');
  // and an overwrite raced by a delete-free second overwrite still counts one file
  await Promise.all([u.up('/same', slow(3, 10 * KB, 10)), u.up('/same', slow(5, 10 * KB, 10))]);
  t.match(await usage('q2same'), { size: statSync(path.join(u.home, 'same')).size, files: 1 });
  t.ok(noTemp());
});

t.test('a file removed by another node while an upload to its path is in flight: the upload counts a new file', async (t) => {
  const u = await login('q2gone', { username: 'q2gone', quota_size: 1000 * KB, quota_files: 10 });
  const base = await listen(ta);
  // the second upload starts first, over a real socket, and waits with its first part sent
  const second = http.request(`${base}/api/v2/user/files/upload?path=${q('/x')}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/octet-stream', 'content-length': String(80 * KB) },
  });
  const answered = new Promise<number>((resolve, reject) => {
    second.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)));
    second.on('error', reject);
  });
  second.write(Buffer.alloc(10 * KB, 1));
  const uploading = async () =>
    ((await api(ta, 'GET', '/api/v2/connections')) as { username: string; active_transfers?: { operation_type: string }[] }[]).some(
      (c) => c.username === 'q2gone' && c.active_transfers?.some((x) => x.operation_type === 'upload'),
    );
  t.ok(await eventually(uploading, (v) => v), 'the second upload is in progress (it looked at /x: nothing there)');
  t.equal((await u.up('/x', Buffer.alloc(20 * KB, 2))).statusCode, 201, 'the first one is published meanwhile');
  t.match(await usage('q2gone'), { size: 20 * KB, files: 1 });
  // another node deletes it: the file goes, the shared counters go down, this process hears nothing
  unlinkSync(path.join(u.home, 'x'));
  await updateUser(ta, 'q2gone', { used_quota_size: 0, used_quota_files: 0 });
  second.end(Buffer.alloc(70 * KB, 3));
  t.equal(await answered, 201);
  // what this process knew (the first upload's file) is gone: the backend looked as it published
  t.match(await usage('q2gone'), { size: 80 * KB, files: 1 }, 'the counters hold the one file on disk');
  t.equal(statSync(path.join(u.home, 'x')).size, 80 * KB);
  t.ok(noTemp());
});

t.test('virtual folders: own quota, or counted in the user quota (-1)', async (t) => {
  const own = await addFolder(ta, 'own');
  const incl = await addFolder(ta, 'incl');
  const u = await login('q3', {
    username: 'q3',
    quota_size: 2000,
    folders: [
      { name: 'own', virtual_path: '/own', quota_size: 500, quota_files: 0 },
      { name: 'incl', virtual_path: '/incl', quota_size: -1, quota_files: -1 },
    ],
  });
  const r = await u.up('/own/big', Buffer.alloc(600));
  t.equal(r.statusCode, 413);
  t.match(JSON.parse(r.payload).message, /virtual folder "own"/);
  t.notOk(existsSync(path.join(own, 'big')));
  t.equal((await u.up('/own/ok', Buffer.alloc(450))).statusCode, 201);
  t.match(await folderRow(ta, 'own'), { used_quota_size: 450, used_quota_files: 1 });
  t.same((await usage('q3')).size, 0, 'own-quota folder does not count for the user');
  t.equal((await u.up('/incl/x', Buffer.alloc(300))).statusCode, 201);
  t.match(await folderRow(ta, 'incl'), { used_quota_size: 300, used_quota_files: 1 });
  t.same((await usage('q3')).size, 300, 'included folder counts for the user too');
  t.ok(existsSync(path.join(incl, 'x')));

  // moves across folders move the counters
  t.equal((await u.up('/h', Buffer.alloc(40))).statusCode, 201);
  const mv = await u.call('POST', `/api/v2/user/file-actions/move?path=${q('/h')}&target=${q('/own/h')}`);
  t.equal(mv.statusCode, 200, mv.payload);
  t.match(await folderRow(ta, 'own'), { used_quota_size: 490, used_quota_files: 2 });
  t.same((await usage('q3')).size, 300);
  const tooBig = await u.call('POST', `/api/v2/user/file-actions/move?path=${q('/incl/x')}&target=${q('/own/x')}`);
  t.equal(tooBig.statusCode, 413, 'the target folder would exceed its quota');
  t.ok(existsSync(path.join(incl, 'x')), 'source kept');
  const back = await u.call('POST', `/api/v2/user/file-actions/move?path=${q('/own/h')}&target=${q('/incl/h')}`);
  t.equal(back.statusCode, 200);
  t.match(await folderRow(ta, 'own'), { used_quota_size: 450, used_quota_files: 1 });
  t.match(await folderRow(ta, 'incl'), { used_quota_size: 340, used_quota_files: 2 });
  t.same((await usage('q3')).size, 340);
  const cp = await u.call('POST', `/api/v2/user/file-actions/copy?path=${q('/incl/h')}&target=${q('/h2')}`);
  t.equal(cp.statusCode, 200);
  t.same((await usage('q3')).size, 380, 'copies count');
  const cpOver = await u.call('POST', `/api/v2/user/file-actions/copy?path=${q('/own/ok')}&target=${q('/own/ok2')}`);
  t.equal(cpOver.statusCode, 413);
  t.notOk(existsSync(path.join(own, 'ok2')));
  t.ok(noTemp());
});

t.test('transfer quotas: upload, download and total', async (t) => {
  const MB = 1024 * 1024;
  const u = await login('q4', { username: 'q4', upload_data_transfer: 1, download_data_transfer: 1 });
  t.equal((await u.up('/one', Buffer.alloc(700 * KB))).statusCode, 201);
  const over = await u.up('/two', Buffer.alloc(700 * KB));
  t.equal(over.statusCode, 413);
  t.match(JSON.parse(over.payload).message, /upload transfer quota exceeded/);
  const streamed = await u.up('/three', Readable.from([Buffer.alloc(200 * KB), Buffer.alloc(200 * KB)]));
  t.equal(streamed.statusCode, 413, 'stopped mid-stream');
  t.notOk(existsSync(path.join(u.home, 'three')));
  const ul = (await usage('q4')).ul;
  t.ok(ul >= 700 * KB && ul <= MB, `upload counter ${ul}`);
  const d1 = await u.call('GET', `/api/v2/user/files?path=${q('/one')}`);
  t.equal(d1.statusCode, 200);
  t.equal(
    (
      await eventually(
        () => usage('q4'),
        (x) => x.dl === 700 * KB,
      )
    ).dl,
    700 * KB,
  );
  const d2 = await u.call('GET', `/api/v2/user/files?path=${q('/one')}`);
  t.equal(d2.statusCode, 403);
  t.match(JSON.parse(d2.payload).message, /download transfer quota exceeded/);
  const part = await ta.inject('GET', `/api/v2/user/files?path=${q('/one')}`, { token: u.token, headers: { range: 'bytes=0-1023' } });
  t.equal(part.statusCode, 206, 'a range that still fits');
  t.equal(
    (
      await eventually(
        () => usage('q4'),
        (x) => x.dl === 701 * KB,
      )
    ).dl,
    701 * KB,
  );

  const v = await login('q5', { username: 'q5', total_data_transfer: 1 });
  t.equal((await v.up('/a', Buffer.alloc(600 * KB))).statusCode, 201);
  t.equal((await v.call('GET', `/api/v2/user/files?path=${q('/a')}`)).statusCode, 403, 'total counts both directions');
  await eventually(
    () => usage('q5'),
    (x) => x.ul === 600 * KB,
  );
  t.equal((await v.up('/b', Buffer.alloc(300 * KB))).statusCode, 201);
  t.equal((await v.up('/c', Buffer.alloc(300 * KB))).statusCode, 413);
  await updateUser(ta, 'q5', { used_upload_data_transfer: 0 });
  t.equal((await v.up('/c', Buffer.alloc(300 * KB))).statusCode, 201, 'an admin reset is honoured at the next transfer');
});
