import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createTestApp } from '@ferry/core/testing';
import { createUserWithFolders } from '@ferry/testkit';
import { closeAllPools, sameSftpServer, sftpProvider, type SftpFs } from '../src/index.js';
import { ENDPOINT, PASSWORD, PORT, SFTP_DIR, USER, randomPrefix, requireSftpServer } from './fixtures/sftp-server.js';

// equality_check_mode and private key + passphrase logins against the test sshd
// (scripts/servers/start-sftp.sh). Server-side moves are observed on the server's
// disk: a rename keeps the file's inode, a streamed copy writes a new file.

const HOME = path.join(SFTP_DIR, 'home', USER);
const KEY_PASSPHRASE = 'ferrysftp-key-passphrase';
const plain = (payload: string) => ({ status: 'Plain', payload });

t.test('sameSftpServer() (equality_check_mode)', async (t) => {
  const a = { endpoint: ENDPOINT, username: 'a' };
  t.ok(sameSftpServer(a, { endpoint: ENDPOINT, username: 'a' }), 'mode 0: same endpoint and username');
  t.ok(sameSftpServer(a, { endpoint: `127.0.0.1:${PORT}`, username: 'a', prefix: '/elsewhere' }), 'the prefix does not matter');
  t.notOk(sameSftpServer(a, { endpoint: ENDPOINT, username: 'b' }), 'mode 0: usernames differ');
  t.notOk(sameSftpServer(a, { endpoint: `localhost:${PORT}`, username: 'a' }), 'another endpoint');
  t.ok(sameSftpServer({ ...a, endpoint: 'SFTP.example.com:22' }, { ...a, endpoint: 'sftp.example.com:22' }), 'host names ignore case');
  t.ok(sameSftpServer({ ...a, equality_check_mode: 1 }, { endpoint: ENDPOINT, username: 'b', equality_check_mode: 1 }), 'mode 1 on both: endpoint only');
  t.notOk(sameSftpServer({ ...a, equality_check_mode: 1 }, { endpoint: ENDPOINT, username: 'b' }), 'a mode 0 side keeps its username check');
  t.equal(sftpProvider().sameResource, sameSftpServer, 'the provider exposes the hook');
});

t.test('against the test server', async (t) => {
  if (!(await requireSftpServer(t))) return;
  t.teardown(() => closeAllPools());

  t.test('private key + passphrase login', async (t) => {
    const key = readFileSync(path.join(SFTP_DIR, 'client_key_passphrase'), 'utf8');
    t.match(key, /BEGIN OPENSSH PRIVATE KEY/);
    const provider = sftpProvider();
    const scope = { username: 'u', dataDir: t.testdir() };
    const fs = (await provider.create(
      { endpoint: ENDPOINT, username: USER, private_key: key, key_passphrase: KEY_PASSPHRASE, prefix: randomPrefix('pp') },
      scope,
    )) as SftpFs;
    t.teardown(async () => {
      await fs.remove('/', { recursive: true }).catch(() => undefined);
      await fs.close();
    });
    const h = await fs.openWrite('/hello.txt');
    h.stream.end('signed with an encrypted key');
    await h.done;
    t.equal((await fs.stat('/hello.txt')).size, 'signed with an encrypted key'.length, 'logged in with the key and its passphrase');
    const wrong = (await provider.create(
      { endpoint: ENDPOINT, username: USER, private_key: key, key_passphrase: 'not-the-passphrase', prefix: randomPrefix('pp') },
      scope,
    )) as SftpFs;
    await t.rejects(wrong.stat('/'), 'a wrong passphrase cannot log in');
    await wrong.close();
    const schema = provider.optionsSchema.validate({ endpoint: ENDPOINT, username: USER, private_key: plain(key), key_passphrase: plain(KEY_PASSPHRASE) });
    t.error(schema.error, 'an encrypted key with its passphrase passes the schema');
  });

  t.test('moves across mounts on the same server are renames on the server', async (t) => {
    const run = randomPrefix('same');
    const app = await createTestApp({ plugins: [{ name: '@ferry/fs-sftp' }] });
    t.teardown(async () => {
      await app.close();
      const cleaner = (await sftpProvider().create(
        { endpoint: ENDPOINT, username: USER, password: PASSWORD, prefix: run },
        { username: 'c', dataDir: t.testdir() },
      )) as SftpFs;
      await cleaner.remove('/', { recursive: true }).catch(() => undefined);
      await cleaner.close();
    });
    const sftpconfig = (prefix: string, extra: Record<string, unknown> = {}) => ({
      endpoint: ENDPOINT,
      username: USER,
      password: plain(PASSWORD),
      prefix: `${run}/${prefix}`,
      ...extra,
    });
    const { admin, call } = await createUserWithFolders(t, app, {
      home: { provider: 5, sftpconfig: sftpconfig('home') },
      folders: {
        same: { provider: 5, sftpconfig: sftpconfig('same') },
        // the same sshd through another endpoint string: not the same resource, so streamed
        other: { provider: 5, sftpconfig: sftpconfig('other', { endpoint: `localhost:${PORT}` }) },
      },
      user: { quota_files: 100 },
    });
    const onDisk = (rel: string) => path.join(HOME, run, rel);
    const upload = (vpath: string, body: string) =>
      call('POST', `/api/v2/user/files/upload?path=${encodeURIComponent(vpath)}&mkdir_parents=true`, Buffer.from(body));

    await upload('/a.txt', 'moved by the server');
    const usedFiles = async () =>
      (JSON.parse((await app.inject('GET', '/api/v2/users/mover', { token: admin })).payload) as { used_quota_files: number }).used_quota_files;
    t.equal(await usedFiles(), 1, 'the upload is counted in the home');
    const ino = statSync(onDisk('home/a.txt')).ino;
    await call('PATCH', `/api/v2/user/files?path=/a.txt&target=${encodeURIComponent('/same/a.txt')}`);
    t.equal(statSync(onDisk('same/a.txt')).ino, ino, 'same server: the file kept its inode (one rename, no bytes through Ferry)');
    t.throws(() => statSync(onDisk('home/a.txt')), 'the source is gone');

    await upload('/dir/sub/b.txt', 'a tree');
    const treeIno = statSync(onDisk('home/dir/sub/b.txt')).ino;
    await call('POST', `/api/v2/user/file-actions/move?path=/dir&target=${encodeURIComponent('/same/dir')}`);
    t.equal(statSync(onDisk('same/dir/sub/b.txt')).ino, treeIno, 'a directory is moved by one rename too');
    t.throws(() => statSync(onDisk('home/dir')));

    await call('PATCH', `/api/v2/user/files?path=${encodeURIComponent('/same/a.txt')}&target=${encodeURIComponent('/other/a.txt')}`);
    t.not(statSync(onDisk('other/a.txt')).ino, ino, 'another endpoint: streamed into a new file');
    t.equal(readFileSync(onDisk('other/a.txt'), 'utf8'), 'moved by the server');
    t.throws(() => statSync(onDisk('same/a.txt')), 'and the source removed');

    // folders without a quota of their own count in the user's: moves keep the total
    t.equal(await usedFiles(), 2, 'server-side and streamed moves keep the quota counters balanced');
  });
});
