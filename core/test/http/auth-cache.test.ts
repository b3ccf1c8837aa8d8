import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { addUser, fileApp, PASSWORD } from '../helpers/user-files.js';
import { TEST_ADMIN } from '../../src/testing.js';
import { PasswordCache } from '../../src/accounts/password-cache.js';
import { DefenderService, defenderHostId } from '../../src/security/defender.service.js';

// a verified password is trusted for auth_cache.ttl seconds: share requests, TUS chunks and token requests skip argon2
const ta = await fileApp({
  config: {
    httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] },
    auth_cache: { ttl: 30, max_entries: 100 },
    defender: { enabled: true, threshold: 1000, score_valid: 2 },
  },
});
t.teardown(() => ta.close());
const cache = ta.app.container.resolve(PasswordCache);
const defender = ta.app.container.resolve(DefenderService);
let now = Date.now();
cache.clock = () => now;

const home = await addUser(ta, { username: 'owner' });
mkdirSync(path.join(home, 'pub'), { recursive: true });
mkdirSync(path.join(home, 'drop'), { recursive: true });
writeFileSync(path.join(home, 'pub', 'a.txt'), 'alpha');
const token = await ta.userToken('owner', PASSWORD);
const adminToken = await ta.adminToken();
const basic = (password: string) => ({ username: 'anyone', password });
const mkShare = async (payload: Record<string, unknown>) => {
  const r = await ta.inject('POST', '/api/v2/user/shares', { token, payload });
  if (r.statusCode !== 201) throw new Error(`add share: ${r.statusCode} ${r.payload}`);
  return String(r.headers['x-object-id']);
};
const readId = await mkShare({ name: 'pub', scope: 1, paths: ['/pub'], password: 'open-sesame' });
const dropId = await mkShare({ name: 'drop', scope: 2, paths: ['/drop'], password: 'drop-pw' });

/** argon2 verifications `fn` caused. */
async function hashes(fn: () => Promise<unknown>): Promise<number> {
  const before = cache.verifications;
  await fn();
  return cache.verifications - before;
}

await t.test('share password: verified once, then trusted until the TTL', async (t) => {
  const get = () => ta.inject('GET', `/api/v2/shares/${readId}/files?path=a.txt`, { basic: basic('open-sesame') });
  t.equal(await hashes(async () => t.equal((await get()).statusCode, 200)), 1);
  t.equal(
    await hashes(async () => {
      for (let i = 0; i < 5; i++) t.equal((await get()).statusCode, 200);
    }),
    0,
    'five more requests: no argon2',
  );
  now += 31_000;
  t.equal(await hashes(async () => t.equal((await get()).statusCode, 200)), 1, 'after the TTL the password is verified again');
});

await t.test('wrong passwords are always hashed, refused with 401 and scored by the defender', async (t) => {
  for (let i = 0; i < 3; i++) {
    const n = await hashes(async () => {
      const r = await ta.inject('GET', `/api/v2/shares/${readId}/dirs`, { basic: basic('wrong') });
      t.equal(r.statusCode, 401);
      t.match(JSON.parse(r.payload), { message: 'invalid share password', error: 'Unauthorized' });
    });
    t.equal(n, 1);
  }
  await defender.idle();
  const h = await ta.inject('GET', `/api/v2/defender/hosts/${defenderHostId('127.0.0.1')}`, { token: adminToken });
  t.equal(h.statusCode, 200, h.payload);
  t.ok(JSON.parse(h.payload).score >= 6, 'three wrong share passwords: 3 x score_valid');
  await ta.inject('DELETE', `/api/v2/defender/hosts/${defenderHostId('127.0.0.1')}`, { token: adminToken });
});

await t.test('a share update invalidates what was verified for it; the old password is refused', async (t) => {
  const get = (pw: string) => ta.inject('GET', `/api/v2/shares/${readId}/dirs`, { basic: basic(pw) });
  t.equal((await get('open-sesame')).statusCode, 200);
  t.equal(await hashes(async () => t.equal((await get('open-sesame')).statusCode, 200)), 0);
  const u = await ta.inject('PUT', `/api/v2/user/shares/${readId}`, { token, payload: { name: 'pub', scope: 1, paths: ['/pub'], password: 'new-secret' } });
  t.equal(u.statusCode, 200, u.payload);
  t.equal(await hashes(async () => t.equal((await get('open-sesame')).statusCode, 401)), 1, 'the old password is hashed and refused');
  t.equal(await hashes(async () => t.equal((await get('new-secret')).statusCode, 200)), 1);
  // an update that keeps the password (redacted marker) still invalidates: the share changed
  const keep = await ta.inject('PUT', `/api/v2/user/shares/${readId}`, {
    token,
    payload: { name: 'pub2', scope: 1, paths: ['/pub'], password: '[**redacted**]' },
  });
  t.equal(keep.statusCode, 200, keep.payload);
  t.equal(await hashes(async () => t.equal((await get('new-secret')).statusCode, 200)), 1);
});

await t.test('TUS: the chunks of an upload hash the share password once', async (t) => {
  const auth = 'Basic ' + Buffer.from('x:drop-pw').toString('base64');
  const meta = `share_id ${Buffer.from(dropId).toString('base64')},path ${Buffer.from('big.bin').toString('base64')}`;
  const chunk = 64 * 1024;
  const total = 8 * chunk;
  const body = Buffer.alloc(total, 7);
  let n = 0;
  const spent = await hashes(async () => {
    const c = await ta.server.inject({
      method: 'POST',
      url: '/api/v2/shares-chunked-uploads',
      headers: { authorization: auth, 'tus-resumable': '1.0.0', 'upload-length': String(total), 'upload-metadata': meta },
    });
    t.equal(c.statusCode, 201, c.payload);
    const loc = String(c.headers.location);
    for (let off = 0; off < total; off += chunk) {
      const r = await ta.server.inject({
        method: 'PATCH',
        url: loc,
        headers: { authorization: auth, 'tus-resumable': '1.0.0', 'upload-offset': String(off), 'content-type': 'application/offset+octet-stream' },
        payload: body.subarray(off, off + chunk),
      });
      t.equal(r.statusCode, 204, r.payload);
      n++;
    }
  });
  t.equal(n, 8);
  t.equal(spent, 1, 'one argon2 verification for the creation and 8 chunks');
  t.same(readFileSync(path.join(home, 'drop', 'big.bin')), body);
});

await t.test('token requests: a repeated basic-auth login is hashed once; a password change invalidates it', async (t) => {
  const userToken = () => ta.inject('GET', '/api/v2/user/token', { basic: { username: 'owner', password: PASSWORD } });
  const adminTok = () => ta.inject('GET', '/api/v2/token', { basic: TEST_ADMIN });
  now += 60_000;
  t.equal(
    await hashes(async () => {
      for (let i = 0; i < 4; i++) t.equal((await userToken()).statusCode, 200);
      for (let i = 0; i < 4; i++) t.equal((await adminTok()).statusCode, 200);
    }),
    2,
    'one verification per account',
  );
  t.equal(
    await hashes(async () => t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'owner', password: 'nope' } })).statusCode, 401)),
    1,
  );
  const adminTok2 = await ta.adminToken();
  const ch = await ta.inject('PUT', '/api/v2/users/owner', {
    token: adminTok2,
    payload: { username: 'owner', password: 'changed-password-2', status: 1, permissions: { '/': ['*'] }, home_dir: home },
  });
  t.equal(ch.statusCode, 200, ch.payload);
  t.equal((await userToken()).statusCode, 401, 'the old password no longer works, cached or not');
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'owner', password: 'changed-password-2' } })).statusCode, 200);
});

await t.test('auth_cache.ttl 0 turns the cache off', async (t) => {
  const off = await fileApp({ config: { auth_cache: { ttl: 0 } } });
  t.teardown(() => off.close());
  const c = off.app.container.resolve(PasswordCache);
  const before = c.verifications;
  for (let i = 0; i < 3; i++) t.equal((await off.inject('GET', '/api/v2/token', { basic: TEST_ADMIN })).statusCode, 200);
  t.equal(c.verifications - before, 3);
  t.equal(c.size, 0);
});
