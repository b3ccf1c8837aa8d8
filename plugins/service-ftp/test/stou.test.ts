/** STOU: a store under a name no file has, named in the 150 reply (RFC 1123 4.1.2.9), with ftplib and a raw connection. */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { PASSWORD, RawFtp, run, startFtp } from './helpers.js';

t.test('STOU', async (t) => {
  const h = await startFtp(t, { ftp: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'plain' }] } });
  const home = await h.addUser('uma');
  mkdirSync(path.join(home, 'in'), { recursive: true });
  writeFileSync(path.join(home, 'in', 'scan.pdf'), 'the first scan');
  await h.addUser('vic', { permissions: { '/': ['list', 'download'] } });

  /** One STOU of `body` on a raw connection: the 150 and final replies. */
  const stou = async (user: string, arg: string, body: string) => {
    const c = await RawFtp.connect(h.port);
    await c.reply();
    await c.cmd(`USER ${user}`);
    await c.cmd(`PASS ${PASSWORD(user)}`);
    await c.cmd('CWD /in').catch(() => '');
    const port = Number(/\(\|\|\|(\d+)\|\)/.exec(await c.cmd('EPSV'))![1]);
    const data = net.connect({ port, host: '127.0.0.1' });
    await new Promise<void>((resolve) => data.once('connect', () => resolve()));
    const opening = await c.cmd(`STOU${arg ? ` ${arg}` : ''}`);
    if (!opening.startsWith('150')) {
      data.destroy();
      c.close();
      return { opening, done: '' };
    }
    data.end(body);
    const done = await c.reply();
    c.close();
    return { opening, done };
  };

  const first = await stou('uma', 'scan.pdf', 'the second scan');
  const name = /^150 FILE: (\S+)$/.exec(first.opening)?.[1];
  t.match(name, /^scan\.pdf\.[0-9a-f]{8}$/, 'an existing name gets a unique suffix, named in the 150 reply');
  t.match(first.done, /^226 /);
  t.equal(readFileSync(path.join(home, 'in', 'scan.pdf'), 'utf8'), 'the first scan', 'the existing file is untouched');
  t.equal(readFileSync(path.join(home, 'in', name!), 'utf8'), 'the second scan');

  const free = await stou('uma', 'new.pdf', 'fresh');
  t.equal(free.opening, '150 FILE: new.pdf', 'a free name is used as given');
  t.equal(readFileSync(path.join(home, 'in', 'new.pdf'), 'utf8'), 'fresh');

  const bare = await stou('uma', '', 'no name');
  t.equal(bare.opening, '150 FILE: ftp-upload', 'without an argument');

  const refused = await stou('vic', 'x.txt', 'nope');
  t.match(refused.opening + refused.done, /^(550|553) |\n(550|553) /, 'no upload permission: refused');
  t.same(readdirSync(path.join(home, 'in')).sort(), ['ftp-upload', name!, 'new.pdf', 'scan.pdf'].sort(), 'nothing else was written');

  const py = [
    'import ftplib, io, sys',
    'f = ftplib.FTP()',
    'f.connect("127.0.0.1", int(sys.argv[1]))',
    'f.login("uma", sys.argv[2])',
    'print(f.storbinary("STOU scan.pdf", io.BytesIO(b"by ftplib")))',
    'f.quit()',
  ].join('\n');
  const r = await run('python3', ['-c', py, String(h.port), PASSWORD('uma')]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^226 /, "ftplib's STOU completes");
  const stored = readdirSync(home).filter((n) => n.startsWith('scan.pdf'));
  t.same(stored, ['scan.pdf'], 'ftplib stored scan.pdf in its home (a free name there)');
});
