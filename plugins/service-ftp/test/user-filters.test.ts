import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { PASSWORD, RawFtp, run, startFtp } from './helpers.js';

// User filters over FTP: start_directory (the first working directory), is_anonymous (read-only;
// the login names anonymous and ftp are ordinary account names).
t.test('user filters over FTP', async (t) => {
  const h = await startFtp(t, { ftp: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'plain' }] } });
  const url = `ftp://127.0.0.1:${h.port}`;
  const dir = t.testdir({ 'x.txt': 'start here\n' });

  async function login(t: Test, username: string): Promise<RawFtp> {
    const c = await RawFtp.connect(h.port);
    t.match(await c.reply(), /^220 /);
    t.match(await c.cmd(`USER ${username}`), /^331 /);
    t.match(await c.cmd(`PASS ${PASSWORD(username)}`), /^230 /, `${username} logged in`);
    return c;
  }

  t.test('start_directory: PWD answers it, relative paths start from it, CDUP leaves it', async (t) => {
    const home = await h.addUser('stella', { filters: { start_directory: '/in/box' } });
    mkdirSync(path.join(home, 'in', 'box'), { recursive: true });
    const c = await login(t, 'stella');
    t.teardown(() => c.close());
    t.match(await c.cmd('PWD'), /^257 "\/in\/box" /);
    t.match(await c.cmd('CDUP'), /^250 Directory changed to \/in\./, 'a starting point, not a jail');
    // curl's URL paths are relative to the login directory
    const up = await run('curl', ['-sS', '--user', `stella:${PASSWORD('stella')}`, '-T', path.join(dir, 'x.txt'), `${url}/x.txt`]);
    t.equal(up.code, 0, up.stderr);
    t.equal(readFileSync(path.join(home, 'in', 'box', 'x.txt'), 'utf8'), 'start here\n', 'the upload went into the start directory');
    t.notOk(existsSync(path.join(home, 'x.txt')));
  });

  t.test("start_directory missing or a file: the session starts in '/'", async (t) => {
    await h.addUser('stan', { filters: { start_directory: '/gone' } });
    const fileHome = await h.addUser('stu', { filters: { start_directory: '/f.txt' } });
    mkdirSync(fileHome, { recursive: true });
    writeFileSync(path.join(fileHome, 'f.txt'), 'f');
    for (const u of ['stan', 'stu']) {
      const c = await login(t, u);
      t.match(await c.cmd('PWD'), /^257 "\/" /, `${u}: the root`);
      c.close();
    }
  });

  t.test('is_anonymous: accounts named anonymous and ftp download; STOR, MKD, DELE, RNFR refused with 550', async (t) => {
    for (const u of ['anonymous', 'ftp']) {
      const home = await h.addUser(u, { filters: { is_anonymous: true } });
      mkdirSync(home, { recursive: true });
      writeFileSync(path.join(home, 'pub.txt'), 'public\n');
      const auth = ['-sS', '--user', `${u}:${PASSWORD(u)}`];
      const down = await run('curl', [...auth, '-o', path.join(dir, `${u}.txt`), `${url}/pub.txt`]);
      t.equal(down.code, 0, down.stderr);
      t.equal(readFileSync(path.join(dir, `${u}.txt`), 'utf8'), 'public\n', `${u}: the download`);
      const up = await run('curl', [...auth, '-T', path.join(dir, 'x.txt'), `${url}/x.txt`]);
      t.equal(up.code, 25, `${u}: the upload failed (curl 25: STOR refused)`);
      t.match(up.stderr, /550/);
      t.notOk(existsSync(path.join(home, 'x.txt')));
      const c = await login(t, u);
      t.match(await c.cmd('MKD new'), /^550 /, 'MKD');
      t.match(await c.cmd('DELE pub.txt'), /^550 /, 'DELE');
      t.match(await c.cmd('RNFR pub.txt'), /^350 /);
      t.match(await c.cmd('RNTO moved.txt'), /^550 /, 'RNTO');
      c.close();
      t.ok(existsSync(path.join(home, 'pub.txt')), 'nothing changed');
      t.notOk(existsSync(path.join(home, 'new')));
    }
  });
});
