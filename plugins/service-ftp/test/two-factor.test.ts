/**
 * Two-factor logins over FTP: the TOTP code sent at the end of the password
 * (FTP's login has one step), through curl and a raw control connection.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { PASSWORD, RawFtp, run, startFtp } from './helpers.js';

t.test('an account with TOTP on FTP logs in with the password followed by the code', async (t) => {
  const h = await startFtp(t, { ftp: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'plain' }] } });
  const home = await h.addUser('tina');
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'hello.txt'), 'hello');
  const code = await h.ta.enableTotp('tina', PASSWORD('tina'), ['FTP']);

  const pass = async (password: string) => {
    const c = await RawFtp.connect(h.port);
    await c.reply();
    await c.cmd('USER tina');
    const r = await c.cmd(`PASS ${password}`);
    c.close();
    return r;
  };
  t.match(await pass(PASSWORD('tina')), /^530 /, 'the password alone is refused');
  const good = code();
  const wrong = String((Number(good) + 1) % 1_000_000).padStart(6, '0');
  t.match(await pass(`${PASSWORD('tina')}${wrong}`), /^530 /, 'a wrong code is refused');
  t.match(await pass(`not-her-password${good}`), /^530 /, 'a wrong password with the right code is refused');

  const got = await run('curl', ['-sS', '--user', `tina:${PASSWORD('tina')}${good}`, `ftp://127.0.0.1:${h.port}/hello.txt`]);
  t.equal(got.code, 0, got.stderr);
  t.equal(got.stdout, 'hello', 'the password and the code log in and download');
  t.match(await pass(`${PASSWORD('tina')}${good}`), /^530 /, 'the same code is not accepted twice');
});

t.test('an account whose TOTP is for other protocols only: the whole PASS is its password, digits and all', async (t) => {
  const h = await startFtp(t, { ftp: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'plain' }] } });
  await h.addUser('otto', { password: 'ends-in-digits-123456' });
  await h.ta.enableTotp('otto', 'ends-in-digits-123456', ['SSH']);
  const c = await RawFtp.connect(h.port);
  await c.reply();
  await c.cmd('USER otto');
  t.match(await c.cmd('PASS ends-in-digits-123456'), /^230 /, 'not split: logged in');
  c.close();
});
