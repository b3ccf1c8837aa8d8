import t from 'tap';
import { captureLogger } from '@ferry/core/testing';
import type ssh2 from 'ssh2';
import { connectSsh, openSftp, startSftp } from './helpers.js';

// The account and connection rules applied to SSH: max_sessions counts SSH connections (the
// channels of one connection are one session), the login rate limit (scope token), the global
// allow list and the account's own allowed_ip.

const readdir = (s: ssh2.SFTPWrapper) =>
  new Promise<string[]>((resolve, reject) => s.readdir('/', (err, l) => (err ? reject(err) : resolve(l.map((e) => e.filename)))));
const connections = async (h: Awaited<ReturnType<typeof startSftp>>, username: string) => {
  const r = await h.ta.inject('GET', '/api/v2/connections', { token: h.token });
  return (JSON.parse(r.payload) as { username: string; protocol: string }[]).filter((c) => c.username === username);
};

t.test('max_sessions counts SSH connections', async (t) => {
  const { logger, lines } = captureLogger();
  const h = await startSftp(t, { logger });
  await h.addUser('solo', { max_sessions: 1 });
  const login = () => connectSsh({ port: h.port, username: 'solo', password: 'solo-pass-1' });
  const first = await login();
  t.teardown(() => first.end());
  t.same(await readdir(await openSftp(first)), [], 'the first connection works');
  t.same(await readdir(await openSftp(first)), [], 'a second SFTP channel of the same connection is the same session');
  t.equal((await connections(h, 'solo')).length, 1, 'one connection listed');

  const second = await login();
  t.teardown(() => second.end());
  // the channel itself (ssh2's client leaves requests sent on a closed SFTP channel unanswered)
  const channel = await new Promise<ssh2.ClientChannel>((resolve, reject) => second.subsys('sftp', (err, ch) => (err ? reject(err) : resolve(ch))));
  channel.on('data', () => undefined);
  await new Promise<void>((resolve) => channel.once('close', () => resolve()));
  t.pass('the SFTP channel of a second SSH connection is closed: no session');
  t.ok(
    lines.some((l) => l.includes('sftp session refused') && l.includes('too many open sessions')),
    'logged with the reason',
  );
  t.equal((await connections(h, 'solo')).length, 1, 'still one connection listed');

  const gone = new Promise<void>((resolve) => first.once('close', () => resolve()));
  first.end();
  await gone;
  await (async () => {
    while ((await connections(h, 'solo')).length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  })();
  const third = await login();
  t.teardown(() => third.end());
  t.same(await readdir(await openSftp(third)), [], 'once the first one closed, another connection works');
});

t.test('the login rate limit (scope token) applies to SSH logins', async (t) => {
  const { logger, lines } = captureLogger();
  // 3 an hour: the harness's admin token takes one, two SSH logins the others
  const h = await startSftp(t, { config: { rate_limit: { token: { per_host: { average: 3, period: 3_600_000, burst: 3 } } } }, logger });
  await h.addUser('rate');
  const login = () => connectSsh({ port: h.port, username: 'rate', password: 'rate-pass-1' });
  (await login()).end();
  (await login()).end();
  await t.rejects(login(), { message: /All configured authentication methods failed/ }, 'the third password login within the hour is refused');
  t.ok(
    lines.some((l) => l.includes('ssh login refused') && l.includes('rate-limited')),
    'logged with its reason',
  );
});

t.test('the allow list and the account allowed_ip apply to SSH logins', async (t) => {
  const h = await startSftp(t);
  // every client here is 127.0.0.1: listed for FTP and HTTP (the REST calls of the test), not SSH
  const L = '/api/v2/iplists/1';
  const add = await h.ta.inject('POST', L, { token: h.token, payload: { ipornet: '127.0.0.1', protocols: 2 + 8 } });
  t.equal(add.statusCode, 201, add.payload);
  await h.addUser('ally');
  (h.ta.config.common as { allow_list_status: boolean }).allow_list_status = true;
  const login = () => connectSsh({ port: h.port, username: 'ally', password: 'ally-pass-1' });
  await t.rejects(login(), { message: /All configured authentication methods failed/ }, 'not on the allow list for SSH');
  const put = await h.ta.inject('PUT', `${L}/127.0.0.1%2F32`, { token: h.token, payload: { protocols: 1 + 8 } });
  t.equal(put.statusCode, 200, put.payload);
  const c = await login();
  c.end();
  t.pass('listed for SSH: let in');

  await h.addUser('fenced', { filters: { allowed_ip: ['10.0.0.0/8'] } });
  await t.rejects(
    connectSsh({ port: h.port, username: 'fenced', password: 'fenced-pass-1' }),
    { message: /All configured authentication methods failed/ },
    "the account's allowed_ip",
  );
  t.ok(
    h.logs.some((e) => e.username === 'fenced' && e.protocol === 'SSH' && e.event === 1),
    'a failed login event',
  );
});
