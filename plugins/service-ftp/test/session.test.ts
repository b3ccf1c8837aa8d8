import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { PASSWORD, RawFtp, run, startFtp } from './helpers.js';

/** A free port of 127.0.0.1 (bound, then released). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

t.test('sessions: ABOR, idle timeout, clients per host, passive port range, lftp', async (t) => {
  const passivePort = await freePort();
  const h = await startFtp(t, {
    ftp: {
      bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'plain' }],
      idle_timeout: 1,
      max_clients_per_host: 3,
      passive_port_range: { start: passivePort, end: passivePort },
    },
  });
  const home = await h.addUser('gus');
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'big.bin'), Buffer.alloc(64 * 1024 * 1024));
  const login = async () => {
    const c = await RawFtp.connect(h.port);
    await c.reply();
    await c.cmd('USER gus');
    t.match(await c.cmd(`PASS ${PASSWORD('gus')}`), /^230 /);
    return c;
  };

  t.test('passive port from the range; ABOR stops a download', async (t) => {
    t.same((await h.status()).passive_port_range, { start: passivePort, end: passivePort });
    const c = await login();
    const epsv = await c.cmd('EPSV');
    t.equal(epsv, `229 Entering Extended Passive Mode (|||${passivePort}|)`);
    const data = net.connect({ port: passivePort, host: '127.0.0.1' });
    data.on('error', () => undefined);
    // the client reads nothing: the transfer stays in progress until ABOR
    data.pause();
    c.send('RETR big.bin\r\n');
    t.match(await c.reply(), /^150 /);
    c.send('ABOR\r\n');
    t.match(await c.reply(), /^426 /, 'the transfer answers 426');
    t.match(await c.reply(), /^226 /, 'ABOR answers 226');
    t.match(await c.cmd('NOOP'), /^200 /);
    data.destroy();
    c.close();
  });

  t.test('idle timeout closes a logged-in connection', async (t) => {
    const c = await login();
    t.match(await c.reply(), /^421 .*idle/);
    t.equal(await c.reply(), '', 'closed');
  });

  t.test('lftp on plain FTP: put, get with resume, mirror', async (t) => {
    const dir = t.testdir({ 'a.txt': 'first', tree: { 'b.txt': 'second', deep: { 'c.txt': 'third' } } });
    const script = [
      'set net:max-retries 1',
      `put ${path.join(dir, 'a.txt')} -o /a.txt`,
      `mirror -R ${path.join(dir, 'tree')} /tree`,
      `get /a.txt -o ${path.join(dir, 'a-back.txt')}`,
      `mirror /tree ${path.join(dir, 'tree-back')}`,
      'bye',
    ].join('; ');
    const r = await run('lftp', ['-u', `gus,${PASSWORD('gus')}`, '-e', script, `ftp://127.0.0.1:${h.port}`]);
    t.equal(r.code, 0, r.stderr);
    t.equal(readFileSync(path.join(home, 'tree', 'deep', 'c.txt'), 'utf8'), 'third');
    t.equal(readFileSync(path.join(dir, 'a-back.txt'), 'utf8'), 'first');
    t.equal(readFileSync(path.join(dir, 'tree-back', 'deep', 'c.txt'), 'utf8'), 'third');
  });
  // last: the connections it opens may still count for a moment after they close
  t.test('clients per host', async (t) => {
    // connections of the earlier tests may still count for a moment: retry a refused greeting
    const admitted = async () => {
      for (;;) {
        const c = await RawFtp.connect(h.port);
        if ((await c.reply()).startsWith('220')) return c;
        c.close();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const open = [await admitted(), await admitted(), await admitted()];
    const fourth = await RawFtp.connect(h.port);
    t.match(await fourth.reply(), /^421 /, 'the fourth connection is refused');
    for (const c of open) c.close();
  });
});
