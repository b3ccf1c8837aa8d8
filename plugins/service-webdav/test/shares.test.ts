import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { curl, run, startWebdav, type Harness } from './helpers.js';

// Public shares over WebDAV (public_shares): read-only under /shares/<share id>/, with curl and
// rclone. Users' trees are under /dav so that the shares' prefix is outside them.

const WEBDAV = { prefix: '/dav', public_shares: { enabled: true } };
const DEFENDER = { defender: { enabled: true, threshold: 1000, score_invalid: 2, score_valid: 1 } };

async function setup(t: Test, webdav: Record<string, unknown> = WEBDAV) {
  const h = await startWebdav(t, { webdav, config: DEFENDER });
  const home = await h.addUser('owner');
  mkdirSync(path.join(home, 'pub/sub'), { recursive: true });
  writeFileSync(path.join(home, 'pub/a.txt'), 'alpha');
  writeFileSync(path.join(home, 'pub/digits.txt'), '0123456789');
  writeFileSync(path.join(home, 'pub/sub/b.txt'), 'bravo');
  writeFileSync(path.join(home, 'solo.txt'), 'solo file');
  writeFileSync(path.join(home, 'secret.txt'), 'not shared');
  const token = await h.ta.userToken('owner', 'owner-pass-1');
  const mkShare = async (payload: Record<string, unknown>) => {
    const r = await h.ta.inject('POST', '/api/v2/user/shares', { token, payload: { scope: 1, ...payload } });
    if (r.statusCode !== 201) throw new Error(`add share: ${r.statusCode} ${r.payload}`);
    return String(r.headers['x-object-id']);
  };
  const usedTokens = async (id: string) => {
    const r = await h.ta.inject('GET', `/api/v2/user/shares/${id}`, { token });
    return (JSON.parse(r.payload) as { used_tokens: number }).used_tokens;
  };
  /** The harness seen from the shares' prefix (curl's paths are under it). */
  const sh: Harness = { ...h, base: `http://127.0.0.1:${h.port}/shares` };
  return { h, sh, home, mkShare, usedTokens, dir: t.testdir({}) };
}

const hrefs = (xml: string) => [...xml.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]!).sort();
const message = (xml: string) => /<F:message>([^<]*)<\/F:message>/.exec(xml)?.[1] ?? '';
const defenderScore = async (h: Harness) => {
  const r = await h.ta.inject('GET', '/api/v2/defender/hosts', { token: h.token });
  const hosts = JSON.parse(r.payload) as { ip: string; score: number }[];
  return hosts.find((e) => e.ip === '127.0.0.1')?.score ?? 0;
};
const PROPFIND = (depth: string) => ['-X', 'PROPFIND', '-H', `Depth: ${depth}`];

t.test('a share of one directory: listing, download, ranges, uses counted like the REST downloads', async (t) => {
  const { sh, mkShare, usedTokens, dir } = await setup(t);
  const id = await mkShare({ name: 'pub', paths: ['/pub'] });
  const root = `/shares/${id}/`;

  let r = await curl(sh, dir, `/${id}/`, PROPFIND('1'), null);
  t.equal(r.status, 207, r.body);
  t.same(hrefs(r.body), [root, `${root}a.txt`, `${root}digits.txt`, `${root}sub/`]);
  t.notMatch(r.body, /secret|lockdiscovery|supportedlock|quota/, 'nothing outside the share, no locks, no quota of the owner');
  r = await curl(sh, dir, `/${id}`, PROPFIND('0'), null);
  t.equal(r.status, 207);
  t.same(hrefs(r.body), [root]);
  r = await curl(sh, dir, `/${id}/sub/`, PROPFIND('1'), null);
  t.same(hrefs(r.body), [`${root}sub/`, `${root}sub/b.txt`]);
  r = await curl(sh, dir, `/${id}/`, PROPFIND('infinity'), null);
  t.equal(r.status, 403, 'Depth infinity: refused as for users');
  t.equal(await usedTokens(id), 0, 'listings take no use');

  r = await curl(sh, dir, `/${id}/a.txt`, [], null);
  t.equal(r.status, 200);
  t.equal(r.body, 'alpha');
  r = await curl(sh, dir, `/${id}/sub/b.txt`, [], null);
  t.equal(r.body, 'bravo');
  r = await curl(sh, dir, `/${id}/digits.txt`, ['-r', '2-5'], null);
  t.equal(r.status, 206);
  t.equal(r.body, '2345');
  t.equal(r.headers['content-range'], 'bytes 2-5/10');
  t.equal(await usedTokens(id), 3, 'one use per download (a ranged one too)');
  r = await curl(sh, dir, `/${id}/a.txt`, ['-I'], null);
  t.equal(r.status, 200);
  t.equal(r.headers['content-length'], '5');
  t.equal(await usedTokens(id), 3, 'HEAD takes none');
  r = await curl(sh, dir, `/${id}/`, ['-X', 'OPTIONS'], null);
  t.equal(r.status, 200);
  t.equal(r.headers['allow'], 'OPTIONS, GET, HEAD, PROPFIND');
  r = await curl(sh, dir, `/${id}/`, [], null);
  t.equal(r.status, 405, 'GET on a collection');
  r = await curl(sh, dir, `/${id}/missing.txt`, [], null);
  t.equal(r.status, 404);

  // confined to the share: dot segments and encoded separators are refused before any lookup
  for (const p of [`/${id}/../../dav/secret.txt`, `/${id}/%2e%2e/secret.txt`, `/${id}/sub%2f..%2f..%2fsecret.txt`, `/${id}/..%5c..%5csecret.txt`]) {
    r = await curl(sh, dir, p, [], null);
    t.equal(r.status, 400, p);
    t.notMatch(r.body, /not shared/);
  }
});

t.test('every write method is refused with 403, nothing changes', async (t) => {
  const { sh, home, mkShare, dir } = await setup(t);
  const id = await mkShare({ name: 'rw', scope: 3, paths: ['/pub'] });
  const dest = ['-H', `Destination: ${sh.base}/${id}/copy.txt`];
  for (const [method, args] of [
    ['PUT', ['--data-binary', 'PWNED']],
    ['DELETE', []],
    ['MKCOL', []],
    ['COPY', dest],
    ['MOVE', dest],
    ['PROPPATCH', ['--data-binary', '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"/>']],
    ['LOCK', ['--data-binary', '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"/>']],
    ['UNLOCK', ['-H', 'Lock-Token: <opaquelocktoken:x>']],
  ] as const) {
    const target = method === 'MKCOL' ? `/${id}/newdir` : `/${id}/a.txt`;
    const r = await curl(sh, dir, target, ['-X', method, ...args], null);
    t.equal(r.status, 403, method);
    t.match(message(r.body), /read-only/, `${method}: ${message(r.body)}`);
    t.equal(r.headers['allow'], 'OPTIONS, GET, HEAD, PROPFIND');
  }
  t.equal(readFileSync(path.join(home, 'pub/a.txt'), 'utf8'), 'alpha');
  t.same(
    (await run('ls', [path.join(home, 'pub')])).stdout.split('\n').filter(Boolean).sort(),
    ['a.txt', 'digits.txt', 'sub'],
    'no file written, copied, moved or removed',
  );
});

t.test('password: Basic with the share password and any user name; failures scored by the defender', async (t) => {
  const { h, sh, mkShare, dir } = await setup(t);
  const id = await mkShare({ name: 'locked', paths: ['/pub'], password: 'open-sesame' });
  let r = await curl(sh, dir, `/${id}/a.txt`, [], null);
  t.equal(r.status, 401);
  t.match(r.headers['www-authenticate'], /^Basic realm="Ferry share"/);
  t.match(message(r.body), /needs a password/);
  const before = await defenderScore(h);
  r = await curl(sh, dir, `/${id}/a.txt`, [], 'anyone:wrong');
  t.equal(r.status, 401);
  t.match(message(r.body), /invalid share password/);
  t.ok((await defenderScore(h)) > before, 'a wrong password scores the host');
  r = await curl(sh, dir, `/${id}/a.txt`, [], 'anyone:open-sesame');
  t.equal(r.status, 200);
  t.equal(r.body, 'alpha');
  r = await curl(sh, dir, `/${id}/`, PROPFIND('1'), 'someone-else:open-sesame');
  t.equal(r.status, 207, 'any user name');
  r = await curl(sh, dir, `/${id}/`, PROPFIND('1'), ':open-sesame');
  t.equal(r.status, 207, 'an empty user name too');
  r = await curl(sh, dir, `/${id}/a.txt`, [], 'owner:owner-pass-1');
  t.equal(r.status, 401, "the owner's own credentials are not the share's");
});

t.test('expired, used up, address not allowed: 403 with the reason; unknown share: 404', async (t) => {
  const { h, sh, mkShare, usedTokens, dir } = await setup(t);
  const once = await mkShare({ name: 'once', paths: ['/pub'], max_tokens: 1 });
  t.equal((await curl(sh, dir, `/${once}/a.txt`, [], null)).status, 200);
  let r = await curl(sh, dir, `/${once}/a.txt`, [], null);
  t.equal(r.status, 403);
  t.match(message(r.body), /maximum number of uses/);
  r = await curl(sh, dir, `/${once}/`, PROPFIND('1'), null);
  t.equal(r.status, 403, 'a used-up share lists nothing either (as the REST routes)');
  t.equal(await usedTokens(once), 1);

  const exp = await mkShare({ name: 'exp', paths: ['/pub'], expires_at: Date.now() + 86_400_000 });
  t.equal((await curl(sh, dir, `/${exp}/`, PROPFIND('0'), null)).status, 207);
  await h.ta.app.orm.em
    .fork()
    .getConnection()
    .execute('update shares set expires_at = ? where share_id = ?', [Date.now() - 1000, exp]);
  r = await curl(sh, dir, `/${exp}/`, PROPFIND('0'), null);
  t.equal(r.status, 403);
  t.match(message(r.body), /expired/);

  const far = await mkShare({ name: 'far', paths: ['/pub'], allow_from: ['10.0.0.0/8'] });
  r = await curl(sh, dir, `/${far}/a.txt`, [], null);
  t.equal(r.status, 403);
  t.match(message(r.body), /not accessible from 127\.0\.0\.1/);
  const near = await mkShare({ name: 'near', paths: ['/pub'], allow_from: ['127.0.0.0/8'] });
  t.equal((await curl(sh, dir, `/${near}/a.txt`, [], null)).status, 200);

  const drop = await mkShare({ name: 'drop', scope: 2, paths: ['/pub'] });
  r = await curl(sh, dir, `/${drop}/`, PROPFIND('1'), null);
  t.equal(r.status, 403, 'a share without read scope');
  t.match(message(r.body), /scope/);

  r = await curl(sh, dir, '/no-such-share/', PROPFIND('1'), null);
  t.equal(r.status, 404);
  t.match(message(r.body), /not found/);
  t.equal((await curl(sh, dir, '/', PROPFIND('1'), null)).status, 404, 'the shares prefix itself lists nothing');
});

t.test('a share of several paths, and of one file: the shared paths are the members of its root', async (t) => {
  const { sh, mkShare, usedTokens, dir } = await setup(t);
  const multi = await mkShare({ name: 'multi', paths: ['/pub/a.txt', '/solo.txt', '/pub/sub'] });
  const root = `/shares/${multi}/`;
  let r = await curl(sh, dir, `/${multi}/`, PROPFIND('1'), null);
  t.equal(r.status, 207, r.body);
  t.same(hrefs(r.body), [root, `${root}a.txt`, `${root}solo.txt`, `${root}sub/`]);
  r = await curl(sh, dir, `/${multi}/sub/`, PROPFIND('1'), null);
  t.same(hrefs(r.body), [`${root}sub/`, `${root}sub/b.txt`]);
  t.equal((await curl(sh, dir, `/${multi}/sub/b.txt`, [], null)).body, 'bravo');
  t.equal((await curl(sh, dir, `/${multi}/solo.txt`, [], null)).body, 'solo file');
  t.equal((await curl(sh, dir, `/${multi}/digits.txt`, [], null)).status, 404, 'a sibling of a shared file is not shared');
  t.equal((await curl(sh, dir, `/${multi}/secret.txt`, [], null)).status, 404);
  t.equal((await curl(sh, dir, `/${multi}/`, [], null)).status, 405);
  t.equal((await curl(sh, dir, `/${multi}/`, PROPFIND('infinity'), null)).status, 403, 'Depth infinity refused unless allowed');
  t.equal(await usedTokens(multi), 2);

  const solo = await mkShare({ name: 'solo', paths: ['/solo.txt'] });
  r = await curl(sh, dir, `/${solo}/`, PROPFIND('1'), null);
  t.same(hrefs(r.body), [`/shares/${solo}/`, `/shares/${solo}/solo.txt`]);
  t.equal((await curl(sh, dir, `/${solo}/solo.txt`, [], null)).body, 'solo file');
});

t.test('Depth infinity, when allowed, walks the members of a made-up root too', async (t) => {
  const { sh, mkShare, dir } = await setup(t, { ...WEBDAV, allow_depth_infinity: true });
  const multi = await mkShare({ name: 'multi', paths: ['/solo.txt', '/pub/sub'] });
  const root = `/shares/${multi}/`;
  const r = await curl(sh, dir, `/${multi}/`, PROPFIND('infinity'), null);
  t.equal(r.status, 207);
  t.same(hrefs(r.body), [root, `${root}solo.txt`, `${root}sub/`, `${root}sub/b.txt`]);
});

t.test('rclone copies a share (password, any user name) byte for byte', async (t) => {
  const { sh, home, mkShare, usedTokens, dir } = await setup(t);
  const id = await mkShare({ name: 'pub', paths: ['/pub'], password: 'rclone-pw' });
  const obscured = await run('rclone', ['obscure', 'rclone-pw']);
  const rclone = (args: string[]) => run('rclone', ['--retries', '1', '--low-level-retries', '1', ...args], { env: { RCLONE_CONFIG: '/nonexistent.conf' } });
  const remote = `:webdav,url='${sh.base}/${id}/',vendor=other,user=guest,pass=${obscured.stdout.trim()}:`;
  const ls = await rclone(['lsf', '-R', remote]);
  t.equal(ls.code, 0, 'rclone lsf', { stderr: ls.stderr });
  t.same(ls.stdout.split('\n').filter(Boolean).sort(), ['a.txt', 'digits.txt', 'sub/', 'sub/b.txt']);
  t.equal(await usedTokens(id), 0, 'listing is free');
  const down = path.join(dir, 'down');
  const copy = await rclone(['copy', remote, down]);
  t.equal(copy.code, 0, 'rclone copy', { stderr: copy.stderr });
  t.equal((await run('diff', ['-r', path.join(home, 'pub'), down])).code, 0, 'the same tree, byte for byte');
  t.equal(await usedTokens(id), 3, 'one use per file');
  const put = await rclone(['copyto', path.join(down, 'a.txt'), `${remote}new.txt`]);
  t.not(put.code, 0, 'rclone cannot upload');
  const wrong = `:webdav,url='${sh.base}/${id}/',vendor=other,user=guest,pass=${(await run('rclone', ['obscure', 'nope'])).stdout.trim()}:`;
  t.not((await rclone(['lsf', wrong])).code, 0, 'a wrong password lists nothing');
});

t.test('the option off: /shares/<id> is not served (404)', async (t) => {
  const { sh, mkShare, dir } = await setup(t, { prefix: '/dav' });
  const id = await mkShare({ name: 'pub', paths: ['/pub'] });
  const r = await curl(sh, dir, `/${id}/a.txt`, [], null);
  t.equal(r.status, 404);
  t.equal((await curl(sh, dir, `/${id}/`, PROPFIND('1'), null)).status, 404);
});
