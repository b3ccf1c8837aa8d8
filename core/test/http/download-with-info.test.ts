import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Fs, OpOptions, ReadOptions, ReadWithInfo } from '../../src/fs/fs.contract.js';
import { FsError, FsErrorCode } from '../../src/fs/fs-error.js';
import type { FsProviderDef } from '../../src/plugins/manifest.js';
import type { PluginRegistry } from '../../src/plugins/registry.js';
import { TOKENS } from '../../src/tokens.js';
import { addUser, fileApp, PASSWORD, updateUser } from '../helpers/user-files.js';

// Downloads of a whole file go through Fs.openReadWithInfo() where the backend has it:
// one request for the metadata and the bytes. The local provider is wrapped here with an
// openReadWithInfo() of its own, and every call the core makes is counted.
const ta = await fileApp({
  plugins: [{ name: '@ferry/fs-local' }, { name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app: 'with-info' } }],
  config: { event_manager: { rules_cache_ttl: 0 } },
});
t.teardown(() => ta.close());

const calls = { stat: 0, openRead: 0, withInfo: 0 };
const opened: Readable[] = [];
const METHODS = ['list', 'openWrite', 'rename', 'remove', 'mkdir', 'copy', 'chtimes', 'renameFrom', 'copyFrom', 'metadata', 'usedSpace', 'close'] as const;

function withInfo(fs: Fs): Fs {
  const w: Record<string, unknown> = { capabilities: fs.capabilities };
  for (const m of METHODS) {
    const f = (fs as unknown as Record<string, unknown>)[m];
    if (typeof f === 'function') w[m] = f.bind(fs);
  }
  w.stat = (p: string, o?: OpOptions) => {
    calls.stat++;
    return fs.stat(p, o);
  };
  w.openRead = (p: string, o?: ReadOptions) => {
    calls.openRead++;
    return fs.openRead(p, o);
  };
  w.openReadWithInfo = async (p: string, o?: OpOptions): Promise<ReadWithInfo> => {
    calls.withInfo++;
    const info = await fs.stat(p, o);
    if (info.isDir) throw new FsError(FsErrorCode.IsDirectory, `${p}: is a directory`, { path: p });
    const stream = await fs.openRead(p, o);
    opened.push(stream);
    return { info, stream };
  };
  return w as unknown as Fs;
}

const registry = ta.app.container.resolve<PluginRegistry>(TOKENS.Plugins);
const local = registry.fsProvider(0) as FsProviderDef<unknown>;
const create = local.create.bind(local);
local.create = async (o, scope) => withInfo(await create(o, scope));

const home = await addUser(ta, { username: 'alice', permissions: { '/': ['*'], '/nodl': ['list', 'upload'] } });
const token = await ta.userToken('alice', PASSWORD);
const data = randomBytes(3 * 1024 * 1024 + 5);
writeFileSync(path.join(home, 'f.bin'), data);
mkdirSync(path.join(home, 'dir'));
mkdirSync(path.join(home, 'nodl'));
writeFileSync(path.join(home, 'nodl', 'x.txt'), 'no download');

const q = encodeURIComponent;
const get = (p: string, headers: Record<string, string> = {}) => ta.inject('GET', `/api/v2/user/files?path=${q(p)}`, { token, headers });
const reset = () => Object.assign(calls, { stat: 0, openRead: 0, withInfo: 0 });
const json = (r: { payload: string }) => JSON.parse(r.payload) as { message: string; error: string };

t.test('a whole download: one openReadWithInfo(), no stat(), the headers a HEAD gives', async (t) => {
  reset();
  const r = await get('/f.bin');
  t.equal(r.statusCode, 200);
  t.ok(r.rawPayload.equals(data), 'every byte');
  t.same(calls, { stat: 0, openRead: 0, withInfo: 1 });
  t.equal(r.headers['content-length'], String(data.length));
  const head = await ta.inject('HEAD', `/api/v2/user/files?path=${q('/f.bin')}`, { token });
  t.equal(calls.stat, 1, 'a HEAD stats');
  for (const h of ['etag', 'last-modified', 'content-type', 'content-disposition', 'content-length']) t.equal(r.headers[h], head.headers[h], h);
});

t.test('a range or a condition takes stat() then openRead()', async (t) => {
  reset();
  const ranged = await get('/f.bin', { range: 'bytes=10-19' });
  t.equal(ranged.statusCode, 206);
  t.ok(ranged.rawPayload.equals(data.subarray(10, 20)));
  const etag = ranged.headers.etag as string;
  t.equal((await get('/f.bin', { 'if-none-match': etag })).statusCode, 304);
  t.equal((await get('/f.bin', { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() })).statusCode, 304);
  t.same(calls, { stat: 3, openRead: 1, withInfo: 0 });
});

t.test('errors keep their answers', async (t) => {
  reset();
  const missing = await get('/none.bin');
  t.equal(missing.statusCode, 404);
  t.match(json(missing).message, /none\.bin/);
  const dir = await get('/dir');
  t.equal(dir.statusCode, 400, dir.payload);
  t.match(json(dir).message, /is a directory/);
  t.equal(calls.withInfo, 2, 'tried, then the usual path said why');
  reset();
  const denied = await get('/nodl/x.txt');
  t.equal(denied.statusCode, 403);
  t.match(json(denied).message, /download/);
  t.same(calls, { stat: 1, openRead: 0, withInfo: 0 }, 'nothing opened without the download permission');
});

t.test('a download refused after the file was opened (transfer quota) closes it', async (t) => {
  await updateUser(ta, 'alice', { download_data_transfer: 1 });
  opened.length = 0;
  const r = await get('/f.bin');
  t.equal(r.statusCode, 403, r.payload);
  t.match(json(r).message, /quota/);
  t.equal(opened.length, 1);
  t.ok(opened[0]!.destroyed, 'the opened stream was destroyed');
  await updateUser(ta, 'alice', { download_data_transfer: 0 });
});

t.test('a pre-download rule: the hook runs before anything is opened', async (t) => {
  const admin = await ta.adminToken();
  const api = async (method: string, url: string, payload?: unknown) => {
    const r = await ta.inject(method, url, { token: admin, payload });
    if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.payload}`);
  };
  await api('POST', '/api/v2/eventactions', { name: 'gate', type: 101, options: { test_config: { fail: false } } });
  const syncRule = (name: string, event: string) =>
    api('POST', '/api/v2/eventrules', {
      name,
      trigger: 1,
      conditions: { fs_events: [event] },
      actions: [{ name: 'gate', order: 1, relation_options: { execute_sync: true } }],
    });
  // a sync rule on uploads only does not concern downloads
  await syncRule('on-upload', 'upload');
  reset();
  t.equal((await get('/f.bin')).statusCode, 200);
  t.same(calls, { stat: 0, openRead: 0, withInfo: 1 }, 'an upload rule leaves downloads on the one-request path');
  await syncRule('on-pre-download', 'pre-download');
  reset();
  const r = await get('/f.bin');
  t.equal(r.statusCode, 200);
  t.ok(r.rawPayload.equals(data));
  t.same(calls, { stat: 1, openRead: 1, withInfo: 0 }, 'stat, the hook, then the read');
  await api('DELETE', '/api/v2/eventrules/on-pre-download');
  await api('DELETE', '/api/v2/eventrules/on-upload');
  reset();
  t.equal((await get('/f.bin')).statusCode, 200);
  t.equal(calls.withInfo, 1, 'back on the one-request path once the rule is gone');
});

t.test('a file of a public share takes the same path', async (t) => {
  const r = await ta.inject('POST', '/api/v2/user/shares', { token, payload: { name: 's', scope: 1, paths: ['/'] } });
  t.equal(r.statusCode, 201, r.payload);
  const id = r.headers['x-object-id'] as string;
  reset();
  const dl = await ta.inject('GET', `/api/v2/shares/${id}/files?path=${q('/f.bin')}`);
  t.equal(dl.statusCode, 200, dl.payload.slice(0, 200));
  t.ok(dl.rawPayload.equals(data), 'every byte');
  t.equal(calls.withInfo, 1, 'opened with its metadata');
  t.equal(calls.openRead, 0, 'no separate read');
});
