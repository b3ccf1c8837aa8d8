import t from 'tap';
import { existsSync, rmSync } from 'node:fs';
import { addFolder, addUser, fileApp } from '../helpers/user-files.js';
import { FileSessions } from '../../src/vfs/file-sessions.service.js';
import { FsErrorCode, isFsError } from '../../src/fs/fs-error.js';

// filters.disable_fs_checks: a session's storage is made without checking or creating its root
// (the local home directory, a virtual folder's mapped path); without it a missing root is created.
const ta = await fileApp();
t.teardown(() => ta.close());
const sessions = ta.app.container.resolve(FileSessions);

let keys = 0;
async function listRoot(username: string): Promise<unknown> {
  const s = await sessions.open({ username, ip: '127.0.0.1', protocol: 'FTP', sessionKey: `fsc-${++keys}` });
  try {
    for await (const page of await s.list('/')) void page;
    return null;
  } catch (err) {
    return err;
  } finally {
    await s.close();
  }
}

t.test('without the flag, a missing home directory and folder root are created at first use', async (t) => {
  const mapped = await addFolder(ta, 'f-checked');
  const home = await addUser(ta, { username: 'checked', folders: [{ name: 'f-checked', virtual_path: '/vf' }] });
  rmSync(home, { recursive: true });
  rmSync(mapped, { recursive: true });
  t.equal(await listRoot('checked'), null);
  t.ok(existsSync(home), 'the home directory was created');
  const s = await sessions.open({ username: 'checked', ip: '127.0.0.1', protocol: 'FTP', sessionKey: `fsc-${++keys}` });
  await s.stat('/vf/');
  await s.list('/vf');
  await s.close();
  t.ok(existsSync(mapped), "the folder's root was created");
});

t.test('with disable_fs_checks, neither is checked nor created', async (t) => {
  const mapped = await addFolder(ta, 'f-unchecked');
  const home = await addUser(ta, { username: 'unchecked', filters: { disable_fs_checks: true }, folders: [{ name: 'f-unchecked', virtual_path: '/vf' }] });
  rmSync(home, { recursive: true });
  rmSync(mapped, { recursive: true });
  const err = await listRoot('unchecked');
  t.ok(isFsError(err, FsErrorCode.NotFound), 'the missing home is an error like any missing path', { found: err });
  t.notOk(existsSync(home), 'the home directory was not created');
  const s = await sessions.open({ username: 'unchecked', ip: '127.0.0.1', protocol: 'FTP', sessionKey: `fsc-${++keys}` });
  t.teardown(() => s.close());
  let written: unknown = null;
  try {
    const w = await s.openWrite('/vf/x.txt', { size: 1 });
    w.stream.end(Buffer.from('x'));
    await w.done;
  } catch (err) {
    written = err;
  }
  t.ok(isFsError(written), 'an upload into the folder whose root is missing fails', { found: written });
  t.notOk(existsSync(mapped), "the folder's root was not created");
});
