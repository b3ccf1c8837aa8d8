import t, { type Test } from 'tap';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { text } from 'node:stream/consumers';
import { addUser, fileApp, userRow } from '../helpers/user-files.js';
import { FileSessions } from '../../src/vfs/file-sessions.service.js';
import { isFsError } from '../../src/fs/fs-error.js';
import type { FileSession } from '../../src/sdk/file-session.js';

// Writes at an offset and truncation through a file session on the SFTP backend (the SFTP test
// server of scripts/servers/start-sftp.sh, 127.0.0.1:19022): in place on the remote file, with the
// quota counting only the bytes added.
const SFTP = { endpoint: '127.0.0.1:19022', username: 'ferrysftp', password: 'ferrysftp-pass' };

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.setTimeout(1000);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

async function put(s: FileSession, vpath: string, data: string, o: Parameters<FileSession['openWrite']>[1] = {}): Promise<{ size: number }> {
  const w = await s.openWrite(vpath, { size: Buffer.byteLength(data), ...o });
  w.stream.end(Buffer.from(data));
  return w.done;
}

async function read(s: FileSession, vpath: string): Promise<string> {
  const r = await s.openRead(vpath);
  const body = await text(r.stream);
  await r.done;
  return body;
}

async function expectCode(t: Test, p: Promise<unknown>, code: string, message: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(isFsError(err) && err.code === code, `${message} (${code})`, { found: err });
}

if (!(await portOpen(19022))) {
  const why = `no SFTP test server on ${SFTP.endpoint}: run scripts/servers/start-sftp.sh`;
  if (process.env.CI === 'true') t.fail(why);
  else t.plan(0, why);
} else {
  const ta = await fileApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-sftp' }] });
  t.teardown(() => ta.close());
  const prefix = `ferry-test/session-${randomBytes(6).toString('hex')}`;
  await addUser(ta, {
    username: 'remote',
    quota_size: 1000,
    filesystem: {
      provider: 5,
      sftpconfig: { endpoint: SFTP.endpoint, username: SFTP.username, password: { status: 'Plain', payload: SFTP.password }, prefix },
    },
  });
  const sessions = ta.app.container.resolve(FileSessions);

  t.test('resume, append and truncate a remote file', async (t) => {
    const s = await sessions.open({ username: 'remote', ip: '127.0.0.1', protocol: 'SFTP', sessionKey: 'sftp-session' });
    t.teardown(() => s.close());
    const used = async () => Number((await userRow(ta, 'remote')).used_quota_size);
    const before = await used();
    t.same(await put(s, '/f.txt', 'hello'), { size: 5 });
    t.same(await put(s, '/f.txt', ' world', { offset: 5 }), { size: 11 }, 'resumed');
    t.equal(await read(s, '/f.txt'), 'hello world');
    t.equal(await used(), before + 11, 'only the added bytes count');
    await put(s, '/f.txt', 'XY', { offset: 2 });
    t.equal(await read(s, '/f.txt'), 'heXYo world', 'written in place');
    await put(s, '/f.txt', '!', { offset: 5, truncate: true });
    t.equal(await read(s, '/f.txt'), 'heXYo!', 'cut at the offset first');
    t.equal(await used(), before + 6);
    await s.truncate('/f.txt', 2);
    t.equal(await read(s, '/f.txt'), 'he', 'truncated');
    t.equal(await used(), before + 2);
    await expectCode(t, put(s, '/f.txt', 'x', { offset: 3 }), 'INVALID', 'past the end');
    await expectCode(t, put(s, '/none.txt', 'x', { offset: 1 }), 'NOT_FOUND', 'a missing file');
    await s.removeFile('/f.txt');
  });
}
