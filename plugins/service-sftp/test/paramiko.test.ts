import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { paramiko } from './clients.js';
import { enableTotp, sshKey, startSftp } from './helpers.js';

// paramiko (python3-paramiko) against the service: key, password and keyboard-interactive logins
// with a TOTP code, every file operation, resuming an interrupted upload, refusals.
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

t.test('paramiko', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const data = randomBytes(2 * 1024 * 1024 + 4321);
  const local = path.join(dir, 'data.bin');
  writeFileSync(local, data);

  await t.test('key login: put, get, listdir, stat, rename, chmod, remove, mkdir, rmdir', async (t) => {
    const home = await h.addUser('pam', { public_keys: [key.pub] });
    const back = path.join(dir, 'back.bin');
    const r = await paramiko({
      port: h.port,
      user: 'pam',
      key: key.file,
      ops: [
        { op: 'mkdir', path: '/in' },
        { op: 'put', local, remote: '/in/data.bin' },
        { op: 'get', remote: '/in/data.bin', local: back },
        { op: 'listdir', path: '/in' },
        { op: 'stat', path: '/in/data.bin' },
        { op: 'rename', from: '/in/data.bin', to: '/in/moved.bin' },
        { op: 'chmod', path: '/in/moved.bin', mode: 0o600 },
        { op: 'listdir', path: '/in' },
        { op: 'rmdir', path: '/in' },
        { op: 'remove', path: '/in/moved.bin' },
        { op: 'rmdir', path: '/in' },
        { op: 'listdir', path: '/' },
      ],
    });
    t.equal(r.auth, 'ok', r.error ?? '');
    const [mkdir, put, get, list, stat, rename, chmod, list2, rmdirFull, remove, rmdir, root] = r.results!;
    t.same(mkdir, { ok: true });
    t.same(put, { ok: data.length }, 'put: the size paramiko checked after the upload');
    t.same(get, { ok: true });
    t.equal(sha(readFileSync(back)), sha(data), 'the bytes back are the bytes sent');
    t.same(list, { ok: ['data.bin'] });
    t.equal((stat?.ok as { size: number }).size, data.length);
    t.equal((stat?.ok as { mode: number }).mode & 0o170000, 0o100000, 'a regular file');
    t.same(rename, { ok: true });
    t.same(chmod, { ok: true }, 'chmod is accepted (permissions are not stored)');
    t.same(list2, { ok: ['moved.bin'] });
    t.match(rmdirFull, { error: /not empty|Failure/i }, 'a directory that is not empty stays');
    t.same(remove, { ok: true });
    t.same(rmdir, { ok: true });
    t.same(root, { ok: [] });
    t.same(readdirSync(home), [], 'nothing left on disk');
  });

  await t.test('password login; keyboard-interactive with the TOTP code', async (t) => {
    const home = await h.addUser('tom');
    const byPassword = await paramiko({ port: h.port, user: 'tom', password: 'tom-pass-1', ops: [{ op: 'put', local, remote: '/p.bin' }] });
    t.equal(byPassword.auth, 'ok', byPassword.error ?? '');
    t.same(byPassword.results, [{ ok: data.length }]);
    t.equal(sha(readFileSync(path.join(home, 'p.bin'))), sha(data));

    const code = await enableTotp(h, 'tom');
    const interactive = await paramiko({
      port: h.port,
      user: 'tom',
      password: 'tom-pass-1',
      code: code(),
      interactive: true,
      ops: [{ op: 'listdir', path: '/' }],
    });
    t.equal(interactive.auth, 'ok', interactive.error ?? '');
    t.equal(interactive.prompts?.length, 2, 'the password, then the code');
    t.match(interactive.prompts?.[1], /code/i);
    t.same(interactive.results, [{ ok: ['p.bin'] }]);

    // another account: a code is accepted once
    await h.addUser('tim');
    const timCode = await enableTotp(h, 'tim');
    const passwordThenCode = await paramiko({ port: h.port, user: 'tim', password: 'tim-pass-1', code: timCode(), ops: [{ op: 'listdir', path: '/' }] });
    t.equal(passwordThenCode.auth, 'ok', passwordThenCode.error ?? '');
    t.equal(passwordThenCode.prompts?.length, 1, 'after the password only the code is asked');
    t.same(passwordThenCode.results, [{ ok: [] }]);

    const noCode = await paramiko({ port: h.port, user: 'tom', password: 'tom-pass-1', ops: [{ op: 'listdir', path: '/' }] });
    t.equal(noCode.auth, 'failed', 'the password alone is not enough once TOTP is on for SSH');
    const wrongCode = await paramiko({ port: h.port, user: 'tom', password: 'tom-pass-1', code: code() === '000000' ? '111111' : '000000', interactive: true });
    t.equal(wrongCode.auth, 'failed', 'a wrong code is refused');
  });

  await t.test('resuming an interrupted upload: append and seek+write', async (t) => {
    const home = await h.addUser('res', { public_keys: [key.pub] });
    const half = path.join(dir, 'half.bin');
    writeFileSync(half, data.subarray(0, 1024 * 1024 + 5));
    const cut = await paramiko({ port: h.port, user: 'res', key: key.file, ops: [{ op: 'abandon', local, remote: '/cut.bin', bytes: 1024 * 1024 }] });
    t.same(cut.results?.[0], { ok: 1024 * 1024 });
    // the server sees the channel close: the aborted new upload leaves nothing
    for (let i = 0; i < 200 && existsSync(path.join(home, 'cut.bin')); i++) await new Promise((r) => setTimeout(r, 25));
    t.notOk(existsSync(path.join(home, 'cut.bin')), 'a new upload cut short leaves no partial file');

    const r = await paramiko({
      port: h.port,
      user: 'res',
      key: key.file,
      ops: [
        { op: 'put', local: half, remote: '/appended.bin' },
        { op: 'append', local, remote: '/appended.bin', from: 1024 * 1024 + 5 },
        { op: 'put', local: half, remote: '/sought.bin' },
        { op: 'seek_write', local, remote: '/sought.bin', from: 1024 * 1024 + 5 },
        { op: 'stat', path: '/sought.bin' },
      ],
    });
    t.equal(r.auth, 'ok', r.error ?? '');
    const rest = data.length - (1024 * 1024 + 5);
    t.same(r.results?.slice(0, 4), [{ ok: 1024 * 1024 + 5 }, { ok: rest }, { ok: 1024 * 1024 + 5 }, { ok: rest }]);
    t.equal((r.results?.[4]?.ok as { size: number }).size, data.length);
    t.equal(sha(readFileSync(path.join(home, 'appended.bin'))), sha(data), 'appended: the whole file');
    t.equal(sha(readFileSync(path.join(home, 'sought.bin'))), sha(data), 'written at the offset: the whole file');
  });

  await t.test('refusals: bad password, denied path, quota, missing file, disabled user', async (t) => {
    const home = await h.addUser('ref', { public_keys: [key.pub], quota_size: 1024 * 1024, permissions: { '/': ['*'], '/ro': ['list', 'download'] } });
    // large enough for the refusal to reach a WRITE (paramiko ignores the status of CLOSE)
    const over = path.join(dir, 'over.bin');
    writeFileSync(over, randomBytes(16 * 1024 * 1024));
    const bad = await paramiko({ port: h.port, user: 'ref', password: 'wrong' });
    t.equal(bad.auth, 'failed');
    t.match(bad.error, /Authentication failed/i);
    const r = await paramiko({
      port: h.port,
      user: 'ref',
      key: key.file,
      ops: [
        { op: 'mkdir', path: '/ro' },
        { op: 'put', local, remote: '/ro/x.bin' },
        { op: 'put', local: over, remote: '/big.bin' },
        { op: 'stat', path: '/nope' },
        { op: 'listdir', path: '/' },
      ],
    });
    t.equal(r.auth, 'ok', r.error ?? '');
    const [mkdir, denied, quota, missing, list] = r.results!;
    t.same(mkdir, { ok: true });
    t.match(denied, { errno: 13 }, 'a denied path: EACCES (PERMISSION_DENIED)');
    t.match(quota, { error: /size quota exceeded/ }, 'over the quota: a WRITE fails with the reason');
    t.match(missing, { errno: 2 }, 'a missing file: ENOENT');
    t.same(list, { ok: ['ro'] }, 'nothing partial is listed');
    t.same(readdirSync(home), ['ro']);
    t.notOk(existsSync(path.join(home, 'big.bin')));
    t.equal(statSync(path.join(home, 'ro')).isDirectory(), true);

    await h.addUser('off', { status: 0, public_keys: [key.pub] });
    const disabled = await paramiko({ port: h.port, user: 'off', key: key.file });
    t.equal(disabled.auth, 'failed', 'a disabled user cannot log in with a key');
    const disabledPassword = await paramiko({ port: h.port, user: 'off', password: 'off-pass-1' });
    t.equal(disabledPassword.auth, 'failed', 'nor with the password');
  });
});
