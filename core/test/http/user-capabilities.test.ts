import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { unzip } from '@ferry/testkit';
import { addUser, fileApp, PASSWORD, updateUser } from '../helpers/user-files.js';

const ta = await fileApp();
t.teardown(() => ta.close());
const q = (p: string) => encodeURIComponent(p);

const home = await addUser(ta, {
  username: 'dora',
  quota_size: 1000,
  quota_files: 10,
  permissions: { '/': ['list', 'download'], '/w': ['*'], '/w/ro': ['list'] },
  filters: { web_client: ['shares-disabled', 'write-disabled'] },
});
mkdirSync(path.join(home, 'w/ro'), { recursive: true });
mkdirSync(path.join(home, 'w/sub'), { recursive: true });
writeFileSync(path.join(home, 'a.txt'), 'alpha');
writeFileSync(path.join(home, 'w/sub/b.txt'), 'beta');
writeFileSync(path.join(home, 'w/ro/c.txt'), 'gamma');
const token = await ta.userToken('dora', PASSWORD);
const get = (url: string) => ta.inject('GET', url, { token });

t.test('GET /user/capabilities: the permissions of the deepest configured path, the web client options, the quota', async (t) => {
  await updateUser(ta, 'dora', { used_quota_size: 123, used_quota_files: 3 });
  const root = await get('/api/v2/user/capabilities');
  t.equal(root.statusCode, 200, root.payload);
  t.same(JSON.parse(root.payload), {
    path: '/',
    permissions: ['download', 'list'],
    web_client: ['shares-disabled', 'write-disabled'],
    quota: { size: { used: 123, limit: 1000 }, files: { used: 3, limit: 10 } },
  });
  t.same(JSON.parse((await get(`/api/v2/user/capabilities?path=${q('/w/sub')}`)).payload).permissions, ['*'], 'inherited from /w');
  t.same(JSON.parse((await get(`/api/v2/user/capabilities?path=${q('/w/ro/')}`)).payload).permissions, ['list'], 'deepest wins');
  t.equal(JSON.parse((await get(`/api/v2/user/capabilities?path=${q('/w/ro/')}`)).payload).path, '/w/ro', 'path normalised');
});

t.test('GET /user/capabilities: bad input and no credentials', async (t) => {
  const bad = await get(`/api/v2/user/capabilities?path=${'a'.repeat(5000)}`);
  t.equal(bad.statusCode, 400, bad.payload);
  t.match(JSON.parse(bad.payload), { message: /path/, error: 'Bad Request' });
  const dots = await get(`/api/v2/user/capabilities?path=${q('/../x')}`);
  t.equal(dots.statusCode, 403, 'a ".." segment: refused as by every file route');
  t.match(JSON.parse(dots.payload), { message: /\.\./, error: 'Forbidden' });
  t.equal((await ta.inject('GET', '/api/v2/user/capabilities')).statusCode, 401);
});

t.test('GET /user/streamzip: repeated path parameters, the same zip and permissions as the POST', async (t) => {
  const r = await get(`/api/v2/user/streamzip?path=${q('/a.txt')}&path=${q('/w/sub')}`);
  t.equal(r.statusCode, 200, r.payload);
  t.equal(r.headers['content-type'], 'application/zip');
  t.match(r.headers['content-disposition'], /^attachment/);
  const files = unzip(r.rawPayload);
  t.same([...files.keys()].sort(), ['a.txt', 'sub/', 'sub/b.txt']);
  t.equal(files.get('sub/b.txt')!.toString(), 'beta');
  const one = await get(`/api/v2/user/streamzip?path=${q('/a.txt')}`);
  t.same([...unzip(one.rawPayload).keys()], ['a.txt'], 'a single path');
  const missing = await get('/api/v2/user/streamzip');
  t.equal(missing.statusCode, 400, 'no path');
  t.match(JSON.parse(missing.payload), { message: /path/, error: 'Bad Request' });
  const denied = await get(`/api/v2/user/streamzip?path=${q('/w/ro/c.txt')}`);
  t.equal(denied.statusCode, 403, 'no download permission in /w/ro');
  t.match(JSON.parse(denied.payload), { message: /"download"/, error: 'Forbidden' });
  const gone = await get(`/api/v2/user/streamzip?path=${q('/none.txt')}`);
  t.equal(gone.statusCode, 404);
});
