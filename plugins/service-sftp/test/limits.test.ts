import t from 'tap';
import net from 'node:net';
import ssh2 from 'ssh2';
import { connectSsh, startSftp } from './helpers.js';

// The connection limits of the configuration: banner, idle timeout, login grace time, max auth tries.
t.test('banner, idle timeout, login grace time', async (t) => {
  // no grace time here: a login slowed by a loaded machine must not be cut before the idle timeout is seen
  const h = await startSftp(t, { sftp: { banner: 'Ferry test server', idle_timeout: 1, login_grace_time: 0 } });
  await h.addUser('lim', { password: 'lim-pass-1' });

  await t.test('the banner is shown before the login; an idle connection is closed', async (t) => {
    let banner = '';
    const c = new ssh2.Client();
    c.on('banner', (m: string) => (banner += m));
    const ready = new Promise<void>((resolve, reject) => {
      c.once('ready', () => resolve());
      c.once('error', reject);
      c.once('close', () => reject(new Error('closed before the login')));
    });
    const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
    c.connect({ host: '127.0.0.1', port: h.port, username: 'lim', password: 'lim-pass-1' });
    await ready;
    t.match(banner, /Ferry test server/);
    await closed;
    t.pass('closed once idle');
  });

  await t.test('a client that does not log in within the grace time is cut', async (t) => {
    const g = await startSftp(t, { sftp: { login_grace_time: 1 } });
    const s = net.connect(g.port, '127.0.0.1');
    s.on('data', () => undefined);
    s.write('SSH-2.0-silent\r\n');
    await new Promise<void>((resolve) => s.once('close', () => resolve()));
    t.pass('closed');
  });
});

t.test('max auth tries', async (t) => {
  const h = await startSftp(t, { sftp: { max_auth_tries: 2, login_grace_time: 0 } });
  await h.addUser('lim', { password: 'lim-pass-1' });
  await t.test('the connection is closed after max_auth_tries failures', async (t) => {
    const before = h.logs.filter((e) => e.username === 'lim' && e.event === 1).length;
    const attempts = ['one', 'two', 'three'].map((password) => ({ type: 'password', username: 'lim', password }));
    await t.rejects(connectSsh({ port: h.port, username: 'lim', authHandler: attempts as unknown as ssh2.ConnectConfig['authHandler'] }));
    t.equal(h.logs.filter((e) => e.username === 'lim' && e.event === 1).length - before, 2, 'two refused logins, no third');
  });
});
