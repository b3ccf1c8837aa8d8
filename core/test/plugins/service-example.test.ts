import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { captureLogger, createTestApp, type TestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import { UPLOAD_JOURNAL_DIR } from '../../src/vfs/upload-journal.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { FsEvent, LogEvent } from '../../src/events/event-types.js';
import { connectLine } from '../../../examples/service-line/client.js';

// The example service plugin of examples/service-line: a line-based TCP
// front-end over Ferry's login service and file sessions, protocol FTP.
const example = { name: 'ferry-plugin-service-line', path: 'examples/service-line' };
const USER = { username: 'liner', password: 'liner-password-1' };

async function createUser(ta: TestApp, token: string, home: string, extra: Record<string, unknown> = {}) {
  const r = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: { ...USER, status: 1, permissions: { '/': ['*'] }, home_dir: home, ...extra },
  });
  if (r.statusCode !== 201) throw new Error(r.payload);
}

const portOf = async (ta: TestApp, token: string) => {
  const r = await ta.inject('GET', '/api/v2/status', { token });
  return r.result as { line: { is_active: boolean; bindings: { address: string; port: number }[] | null } };
};

t.test('the example service starts after crash recovery, before the node listens', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'ferry-line-'));
  // an upload journal left by a crashed process: recovery rescans its user at start-up
  const dead = path.join(dataDir, UPLOAD_JOURNAL_DIR, '999999999-12345');
  mkdirSync(dead, { recursive: true });
  writeFileSync(path.join(dead, 'a'), JSON.stringify({ username: 'gone-user' }));
  const { logger, lines } = captureLogger();
  const ta = await createTestApp({ dataDir, logger, plugins: [{ name: '@ferry/fs-local' }, example] });
  t.teardown(async () => {
    await ta.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await ta.app.start();
  const messages = lines.map((l) => JSON.parse(l) as { msg: string; service?: string });
  const at = (pred: (m: { msg: string; service?: string }) => boolean) => messages.findIndex(pred);
  const recovered = at((m) => m.msg.startsWith('quota counters touched by uploads interrupted by a crash'));
  const started = at((m) => m.msg === 'service started' && m.service === 'lined');
  const listening = at((m) => m.msg === 'listening');
  t.ok(recovered >= 0, 'the crash recovery ran');
  t.ok(started > recovered, 'the service started after it');
  t.ok(listening > started, 'the HTTP server listened after the service started');
});

t.test('login, ls, mkdir with their events, /status, /connections and DELETE /connections/{id}', async (t) => {
  const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, example] });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  t.same((await portOf(ta, token)).line, { is_active: false, bindings: null }, 'inactive until the node starts');
  await ta.app.start();
  const status = (await portOf(ta, token)).line;
  t.equal(status.is_active, true);
  t.equal(status.bindings?.length, 1);
  t.equal(status.bindings![0]!.address, '127.0.0.1');
  const port = status.bindings![0]!.port;
  t.ok(port > 0, 'the binding names the port bound');

  const home = t.testdir({ 'hello.txt': 'hi' });
  await createUser(ta, token, home);
  const bus = ta.app.container.resolve<EventBus>(TOKENS.EventBus);
  const logs: LogEvent[] = [];
  const fsEvents: FsEvent[] = [];
  t.teardown(bus.on('log', (e) => void logs.push(e)));
  t.teardown(bus.on('fs', (e) => void fsEvents.push(e)));

  const c = await connectLine(port);
  t.teardown(() => c.close());
  t.same(await c.send('ls /'), ['ERR log in first: user NAME PASSWORD']);
  t.match(await c.send(`user ${USER.username} wrong-password`), [/^ERR /], 'a wrong password is refused');
  t.same(await c.send(`user ${USER.username} ${USER.password}`), ['OK logged in']);
  t.same(await c.send('ls /'), ['- 2 hello.txt', 'OK']);
  t.same(await c.send('mkdir /made'), ['OK']);
  t.same(await c.send('mkdir /made'), ['ERR /made: already exists'], 'errors are answered, the session goes on');
  t.match(await c.send('ls /'), [/^- 2 hello.txt$|^d \d+ made$/, /^- 2 hello.txt$|^d \d+ made$/, 'OK']);
  t.same(await c.send('rm /made'), ['ERR unknown command']);

  t.same(
    logs.map((e) => [e.event, e.protocol, e.username]),
    [
      [1, 'FTP', USER.username],
      [5, 'FTP', USER.username],
    ],
    'the login events name the protocol',
  );
  t.same(
    fsEvents.map((e) => [e.action, e.protocol, e.virtual_path, e.status]),
    [['mkdir', 'FTP', '/made', 1]],
    'the filesystem events name the protocol',
  );

  const listed = await ta.inject('GET', '/api/v2/connections', { token });
  const conns = listed.result as { connection_id: string; protocol: string; username: string; remote_address: string }[];
  t.equal(conns.length, 1);
  t.match(conns[0], { protocol: 'FTP', username: USER.username, remote_address: '127.0.0.1' });
  t.equal(fsEvents[0]!.session_id, conns[0]!.connection_id, 'the events carry the connection id');

  const closed = await ta.inject('DELETE', `/api/v2/connections/${conns[0]!.connection_id}`, { token });
  t.equal(closed.statusCode, 200);
  await c.closed;
  t.pass('the client socket was closed by the service');
  t.same((await ta.inject('GET', '/api/v2/connections', { token })).result, [], 'no connection left');
  const again = await ta.inject('DELETE', `/api/v2/connections/${conns[0]!.connection_id}`, { token });
  t.equal(again.statusCode, 404);
});

t.test('account restrictions apply to the protocol, and stopping the node tells the clients', async (t) => {
  const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, example] });
  let stopped = false;
  t.teardown(() => (stopped ? undefined : ta.close()));
  const token = await ta.adminToken();
  await ta.app.start();
  const port = (await portOf(ta, token)).line.bindings![0]!.port;
  await createUser(ta, token, t.testdir({}), { filters: { denied_protocols: ['FTP'] } });
  const denied = await connectLine(port);
  t.teardown(() => denied.close());
  t.match(await denied.send(`user ${USER.username} ${USER.password}`), [/^ERR .*FTP/], 'denied_protocols FTP refuses the login');
  await createUser(ta, token, t.testdir({}), { username: 'liner2', filters: { denied_protocols: ['SSH', 'HTTP'] } });
  const ok = await connectLine(port);
  t.same(await ok.send(`user liner2 ${USER.password}`), ['OK logged in'], 'other protocols denied: logged in');
  await ta.close();
  stopped = true;
  t.equal(await ok.nextLine(), 'BYE the server is stopping');
  await ok.closed;
  t.pass('the connection ended with the node');
});

t.test('the defender scores failed logins of the service and bans the host from it', async (t) => {
  const ta = await createTestApp({
    plugins: [{ name: '@ferry/fs-local' }, example],
    config: { defender: { enabled: true, threshold: 2, score_valid: 1 } },
  });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  await ta.app.start();
  const port = (await portOf(ta, token)).line.bindings![0]!.port;
  await createUser(ta, token, t.testdir({}));
  const c = await connectLine(port);
  t.teardown(() => c.close());
  t.match(await c.send(`user ${USER.username} wrong-1`), [/^ERR /]);
  t.match(await c.send(`user ${USER.username} wrong-2`), [/^ERR /], 'the second failure reaches the threshold');
  const banned = await connectLine(port);
  t.equal(await banned.nextLine(), 'ERR your address is banned', 'a new client from the host is refused before it logs in');
  await banned.closed;
  t.match(await c.send(`user ${USER.username} ${USER.password}`), [/^ERR .*banned/i], 'the login service refuses the banned host too');
});
