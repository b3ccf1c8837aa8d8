import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import SftpClient from 'ssh2-sftp-client';
import { connectSsh, defenderScore as score, enableTotp, openSftp, sftpBatch, sshKey, startSftp } from './helpers.js';
import type ssh2 from 'ssh2';

// Logins over SSH through the login service: every method, the multi-step and second-factor logins,
// and the refusals with their login events and defender scores.
const DEFENDER = { defender: { enabled: true, threshold: 1000, score_invalid: 3, score_valid: 2, observation_time: 60 } };

/** Logs in with ssh2-sftp-client and lists '/'; resolves with the names. */
async function listWith(port: number, config: Record<string, unknown>): Promise<string[]> {
  const c = new SftpClient();
  await c.connect({ host: '127.0.0.1', port, readyTimeout: 20_000, ...config });
  try {
    return (await c.list('/')).map((e) => e.name).sort();
  } finally {
    await c.end();
  }
}

/** An ssh2 client answering keyboard-interactive prompts with `answer(prompt)`. */
function keyboardClient(port: number, username: string, answer: (prompt: string) => string, extra: Partial<ssh2.ConnectConfig> = {}) {
  return new Promise<ssh2.Client>((resolve, reject) => {
    void import('ssh2').then(({ default: ssh2mod }) => {
      const c = new ssh2mod.Client();
      c.on('keyboard-interactive', (_name, _instructions, _lang, prompts, finish) => finish(prompts.map((p) => answer(p.prompt))));
      c.once('ready', () => resolve(c));
      c.once('error', reject);
      c.connect({ host: '127.0.0.1', port, username, tryKeyboard: true, readyTimeout: 20_000, ...extra });
    });
  });
}

t.test('logins', async (t) => {
  const h = await startSftp(t, { config: DEFENDER });
  const dir = t.testdir({});
  const key = await sshKey(dir);

  await t.test('password', async (t) => {
    const home = await h.addUser('paula');
    const c = new SftpClient();
    await c.connect({ host: '127.0.0.1', port: h.port, username: 'paula', password: 'paula-pass-1', readyTimeout: 20_000 });
    t.teardown(() => c.end());
    await c.put(Buffer.from('by password'), '/p.txt');
    t.equal(readFileSync(path.join(home, 'p.txt'), 'utf8'), 'by password');
    t.same(await listWith(h.port, { username: 'paula', password: 'paula-pass-1' }), ['p.txt']);
  });

  await t.test('keyboard-interactive with a TOTP code', async (t) => {
    await h.addUser('kira');
    const code = await enableTotp(h, 'kira');
    const prompts: string[] = [];
    const c = await keyboardClient(h.port, 'kira', (p) => {
      prompts.push(p);
      return /code/i.test(p) ? code() : 'kira-pass-1';
    });
    t.teardown(() => c.end());
    t.equal(prompts.length, 2, 'the password, then the code');
    const sftp = await openSftp(c);
    const names = await new Promise<string[]>((resolve, reject) =>
      sftp.readdir('/', (err, list) => (err ? reject(err) : resolve(list.map((e) => e.filename)))),
    );
    t.same(names, []);
  });

  await t.test('a password, then the code as a keyboard-interactive step', async (t) => {
    await h.addUser('otto');
    const code = await enableTotp(h, 'otto');
    const prompts: string[] = [];
    const c = await keyboardClient(
      h.port,
      'otto',
      (p) => {
        prompts.push(p);
        return code();
      },
      { password: 'otto-pass-1' },
    );
    c.end();
    t.equal(prompts.length, 1, 'only the code is asked after the password');
    t.match(prompts[0], /code/i);
    await t.rejects(
      keyboardClient(h.port, 'otto', () => '000000', { password: 'otto-pass-1' }),
      'a wrong code is refused',
    );
  });

  await t.test('a key then a password (partial success)', async (t) => {
    const other = await sshKey(dir, 'partial_key');
    await h.addUser('pete', {
      public_keys: [other.pub],
      filters: { denied_login_methods: ['publickey', 'password', 'keyboard-interactive', 'publickey+keyboard-interactive'] },
    });
    const privateKey = readFileSync(other.file);
    const c = await connectSsh({
      port: h.port,
      username: 'pete',
      authHandler: [
        { type: 'publickey', username: 'pete', key: privateKey },
        { type: 'password', username: 'pete', password: 'pete-pass-1' },
      ] as unknown as ssh2.ConnectConfig['authHandler'],
    });
    c.end();
    t.pass('the key then the password let the user in');
    await t.rejects(
      connectSsh({ port: h.port, username: 'pete', privateKey }),
      { message: /All configured authentication methods failed/ },
      'the key alone does not',
    );
    const batch = await sftpBatch({ port: h.port, user: 'pete', key: other.file, dir, lines: ['ls /'] });
    t.not(batch.code, 0, 'OpenSSH in batch mode cannot type the password');
  });

  await t.test('refusals: bad password (event and score), disabled user, denied protocol', async (t) => {
    await h.addUser('bob', { public_keys: [key.pub] });
    const before = await score(h);
    await t.rejects(listWith(h.port, { username: 'bob', password: 'wrong' }), { message: /authentication methods failed/ });
    t.ok(
      h.logs.some((e) => e.event === 1 && e.username === 'bob' && e.protocol === 'SSH'),
      'a failed login event names the user and SSH',
    );
    t.ok((await score(h)) > before, 'the failure scores the host in the defender');

    await h.addUser('dora', { status: 0, public_keys: [key.pub] });
    await t.rejects(listWith(h.port, { username: 'dora', password: 'dora-pass-1' }), { message: /authentication methods failed/ }, 'a disabled user');
    const disabledKey = await sftpBatch({ port: h.port, user: 'dora', key: key.file, dir, lines: ['ls /'] });
    t.not(disabledKey.code, 0, 'a disabled user with a key');

    await h.addUser('pia', { filters: { denied_protocols: ['SSH'] }, public_keys: [key.pub] });
    await t.rejects(listWith(h.port, { username: 'pia', password: 'pia-pass-1' }), { message: /authentication methods failed/ }, 'SSH denied');
    t.ok(h.logs.some((e) => e.username === 'pia' && e.protocol === 'SSH' && e.event === 1));

    const ok = await sftpBatch({ port: h.port, user: 'bob', key: key.file, dir, lines: ['ls /'] });
    t.equal(ok.code, 0, 'the key of an allowed user still works: ' + ok.stderr);
  });
});

t.test('a banned host is dropped before the key exchange', async (t) => {
  const h = await startSftp(t, { config: { defender: { enabled: true, threshold: 5, score_invalid: 3, score_valid: 3, observation_time: 60, ban_time: 10 } } });
  await h.addUser('carl');
  const wrong = () => connectSsh({ port: h.port, username: 'carl', password: 'wrong' });
  await t.rejects(wrong(), { message: /All configured authentication methods failed/ }, 'a refused login before the ban');
  await t.rejects(wrong(), { message: /All configured authentication methods failed/ }, 'the second one bans the host (score 6, threshold 5)');
  const err = await connectSsh({ port: h.port, username: 'carl', password: 'carl-pass-1' }).then(
    () => null,
    (e: Error & { level?: string }) => e,
  );
  t.ok(err, 'the connection fails');
  t.not(err?.level, 'client-authentication', 'before any authentication');
  t.match(err?.message ?? '', /handshake|closed|ECONNRESET|lost/i);
});

t.test('a client that leaves without trying to log in scores no_auth', async (t) => {
  const h = await startSftp(t, { config: { defender: { enabled: true, threshold: 1000, score_no_auth: 4, observation_time: 60 } } });
  t.equal(await score(h), 0);
  await connectSsh({ port: h.port, username: 'nobody', authHandler: [] as unknown as ssh2.ConnectConfig['authHandler'] }).then(
    (c) => c.end(),
    () => undefined,
  );
  await new Promise<void>((resolve) => {
    const poll = async () => ((await score(h)) > 0 ? resolve() : setTimeout(() => void poll(), 20));
    void poll();
  });
  t.equal(await score(h), 4, 'the host scored no_auth');
});
