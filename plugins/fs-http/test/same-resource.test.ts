import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createTestApp } from '@ferry/core/testing';
import { createUserWithFolders } from '@ferry/testkit';
import { API_KEY, PASSWORD, USER, startServer } from './fixtures/server.js';

// equality_check_mode through the core: a move between two mounts on the same httpfs
// endpoint is one rename on the server (the reference server renames with
// rename(2), so the file keeps its inode); mounts that are not the same resource
// are streamed (a new file). Observed on the server's directory.

const plain = (payload: string) => ({ status: 'Plain', payload });

t.test('cross-mount moves on the same endpoint are server-side renames', async (t) => {
  const srv = await startServer(t);
  const app = await createTestApp({ plugins: [{ name: '@ferry/fs-http' }] });
  t.teardown(() => app.close());
  const { call } = await createUserWithFolders(t, app, {
    // home: Basic credentials, mode 1 (the endpoint alone decides)
    home: { provider: 6, httpconfig: { endpoint: srv.url, username: USER, password: plain(PASSWORD), equality_check_mode: 1 } },
    folders: {
      // same endpoint, API key only: mode 1 on both sides makes it the same resource
      lax: { provider: 6, httpconfig: { endpoint: `${srv.url}/`, api_key: plain(API_KEY), equality_check_mode: 1 } },
      // same endpoint, API key only, mode 0: the usernames differ, so it is streamed
      strict: { provider: 6, httpconfig: { endpoint: srv.url, api_key: plain(API_KEY) } },
    },
  });
  const q = encodeURIComponent;
  const onDisk = (rel: string) => path.join(srv.root, rel);

  await call('POST', `/api/v2/user/files/upload?path=${q('/in/a.txt')}&mkdir_parents=true`, Buffer.from('renamed on the server'));
  const ino = statSync(onDisk('in/a.txt')).ino;
  await call('PATCH', `/api/v2/user/files?path=${q('/in/a.txt')}&target=${q('/lax/b.txt')}`);
  t.equal(statSync(onDisk('b.txt')).ino, ino, 'mode 1 on both sides: one rename on the server, the file kept its inode');
  t.throws(() => statSync(onDisk('in/a.txt')), 'the source is gone');

  await call('POST', `/api/v2/user/file-actions/move?path=/in&target=${q('/lax/in2')}`);
  t.ok(statSync(onDisk('in2')).isDirectory(), 'a directory is renamed on the server too');

  await call('PATCH', `/api/v2/user/files?path=${q('/b.txt')}&target=${q('/strict/c.txt')}`);
  t.not(statSync(onDisk('c.txt')).ino, ino, 'mode 0 with different usernames: streamed into a new file');
  t.equal(readFileSync(onDisk('c.txt'), 'utf8'), 'renamed on the server');
  t.throws(() => statSync(onDisk('b.txt')), 'and the source removed');

  await call('POST', `/api/v2/user/file-actions/copy?path=${q('/c.txt')}&target=${q('/lax/d.txt')}`);
  t.equal(readFileSync(onDisk('d.txt'), 'utf8'), 'renamed on the server', 'copies stream (the protocol has no copy route)');
});
