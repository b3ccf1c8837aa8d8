import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { addUser, fileApp, PASSWORD } from '../helpers/user-files.js';
import { captureLogger } from '../../src/testing.js';
import { FileSessions } from '../../src/vfs/file-sessions.service.js';

// filters.start_directory: the directory a session starts in (FileSession.startDirectory, what
// the SFTP and FTP services and the web client start from), '/' when unset, missing or not a
// directory (logged); a primary group's is taken (placeholders interpolated) when the user has none.
const { logger, lines } = captureLogger();
const ta = await fileApp({ logger });
t.teardown(() => ta.close());
const sessions = ta.app.container.resolve(FileSessions);
const token = await ta.adminToken();

let keys = 0;
async function startOf(username: string): Promise<string> {
  const s = await sessions.open({ username, ip: '127.0.0.1', protocol: 'SFTP', sessionKey: `start-${++keys}` });
  try {
    return await s.startDirectory();
  } finally {
    await s.close();
  }
}

const home = await addUser(ta, { username: 'sd', filters: { start_directory: '/in/box' } });
mkdirSync(path.join(home, 'in', 'box'), { recursive: true });
writeFileSync(path.join(home, 'file.txt'), 'x');

t.test('an existing directory is where the session starts', async (t) => {
  t.equal(await startOf('sd'), '/in/box');
});

t.test("unset or empty: '/'", async (t) => {
  await addUser(ta, { username: 'sd-none' });
  await addUser(ta, { username: 'sd-empty', filters: { start_directory: '' } });
  t.equal(await startOf('sd-none'), '/');
  t.equal(await startOf('sd-empty'), '/');
});

t.test("missing or not a directory: '/' and a warning naming the user and the directory", async (t) => {
  await addUser(ta, { username: 'sd-missing', filters: { start_directory: '/nowhere' } });
  const fileHome = await addUser(ta, { username: 'sd-file', filters: { start_directory: '/file.txt' } });
  writeFileSync(path.join(fileHome, 'file.txt'), 'x');
  const before = lines.length;
  t.equal(await startOf('sd-missing'), '/');
  t.equal(await startOf('sd-file'), '/');
  const warned = lines
    .slice(before)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => /start directory/.test(String(l.msg)));
  t.same(
    warned.map((l) => [l.user, l.start_directory, l.level]),
    [
      ['sd-missing', '/nowhere', 40],
      ['sd-file', '/file.txt', 40],
    ],
  );
  t.match(String(warned[1]!.reason), /not a directory/);
});

t.test("a primary group's start directory, placeholders interpolated; the user's own wins", async (t) => {
  const r = await ta.inject('POST', '/api/v2/groups', {
    token,
    payload: { name: 'g-start', user_settings: { filters: { start_directory: '/drop/%username%' } } },
  });
  t.equal(r.statusCode, 201, r.payload);
  const gHome = await addUser(ta, { username: 'sd-g', groups: [{ name: 'g-start', type: 1 }] });
  mkdirSync(path.join(gHome, 'drop', 'sd-g'), { recursive: true });
  t.equal(await startOf('sd-g'), '/drop/sd-g');
  const ownHome = await addUser(ta, { username: 'sd-own', groups: [{ name: 'g-start', type: 1 }], filters: { start_directory: '/mine' } });
  mkdirSync(path.join(ownHome, 'mine'));
  t.equal(await startOf('sd-own'), '/mine');
});

t.test('the web session tells the web client where to open (POST and GET /api/v2/user/web-session)', async (t) => {
  const login = await ta.server.inject({ method: 'POST', url: '/api/v2/user/web-session', payload: { username: 'sd', password: PASSWORD } });
  t.equal(login.statusCode, 200, login.payload);
  t.equal(JSON.parse(login.payload).start_directory, '/in/box');
  const cookie = String(([] as string[]).concat(login.headers['set-cookie'] ?? [])[0]).split(';')[0]!;
  const get = await ta.server.inject({ method: 'GET', url: '/api/v2/user/web-session', headers: { cookie } });
  t.equal(get.statusCode, 200, get.payload);
  t.equal(JSON.parse(get.payload).start_directory, '/in/box');
  const missing = await ta.server.inject({ method: 'POST', url: '/api/v2/user/web-session', payload: { username: 'sd-missing', password: PASSWORD } });
  t.equal(missing.statusCode, 200, missing.payload);
  t.equal(JSON.parse(missing.payload).start_directory, '/', 'a missing start directory: the root');

  // max_sessions reached by another connection: the web session opens all the same, at the root
  const busyHome = await addUser(ta, { username: 'sd-busy', max_sessions: 1, filters: { start_directory: '/in' } });
  mkdirSync(path.join(busyHome, 'in'));
  const other = await sessions.open({ username: 'sd-busy', ip: '127.0.0.1', protocol: 'FTP', sessionKey: 'busy' });
  t.teardown(() => other.close());
  const busy = await ta.server.inject({ method: 'POST', url: '/api/v2/user/web-session', payload: { username: 'sd-busy', password: PASSWORD } });
  t.equal(busy.statusCode, 200, busy.payload);
  t.equal(JSON.parse(busy.payload).start_directory, '/', 'no file session to check it with: the root');
});
