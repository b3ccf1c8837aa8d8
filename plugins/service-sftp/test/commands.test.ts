import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TOKENS, type EventBus, type FsEvent } from '@ferry/core';
import { splitWords } from '../src/ssh-commands.js';
import { connectSsh, opensshOptions, run, sshKey, startSftp } from './helpers.js';

// The SSH commands over exec (the real OpenSSH ssh client): hashes, cd, pwd, the allowed list.

t.test('splitWords: quotes and backslashes as a shell splits them, no shell', async (t) => {
  t.same(splitWords('md5sum  /a /b'), ['md5sum', '/a', '/b']);
  t.same(splitWords(`sha1sum '/with space' "/dq \\"x\\"" /back\\ slash`), ['sha1sum', '/with space', '/dq "x"', '/back slash']);
  t.same(splitWords(`a'b'"c" ''`), ['abc', '']);
  t.same(splitWords('echo $(id) ; rm -rf /'), ['echo', '$(id)', ';', 'rm', '-rf', '/'], 'no substitution, no separators');
  t.same(splitWords('   '), []);
  t.throws(() => splitWords("md5sum '/x"), /unterminated quote/);
  t.throws(() => splitWords('md5sum "/x'), /unterminated quote/);
  t.throws(() => splitWords('md5sum /x\\'), /trailing backslash/);
});

t.test('md5sum, sha1sum, sha256sum, sha512sum, cd, pwd; other commands refused', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const home = await h.addUser('cmd', { public_keys: [key.pub], permissions: { '/': ['*'], '/secret': ['list'] } });
  const events: FsEvent[] = [];
  t.teardown(h.ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('fs', (e) => void events.push(e)));
  const data = randomBytes(3 * 1024 * 1024 + 7);
  mkdirSync(path.join(home, 'sub dir'), { recursive: true });
  mkdirSync(path.join(home, 'secret'), { recursive: true });
  writeFileSync(path.join(home, 'file.bin'), data);
  writeFileSync(path.join(home, 'sub dir', 'b.txt'), 'bee\n');
  writeFileSync(path.join(home, 'secret', 'x.txt'), 'hidden\n');
  const ssh = (...command: string[]) => run('ssh', ['-p', String(h.port), ...opensshOptions(key.file), 'cmd@127.0.0.1', ...command]);
  const hex = (algorithm: string, d: Buffer | string) => createHash(algorithm).update(d).digest('hex');

  await t.test('the four hashes as coreutils prints them', async (t) => {
    for (const [cmd, algorithm] of [
      ['md5sum', 'md5'],
      ['sha1sum', 'sha1'],
      ['sha256sum', 'sha256'],
      ['sha512sum', 'sha512'],
    ] as const) {
      const r = await ssh(cmd, '/file.bin');
      t.equal(r.code, 0, r.stderr);
      t.equal(r.stdout, `${hex(algorithm, data)}  /file.bin\n`, cmd);
    }
  });

  await t.test('several paths, quoted names', async (t) => {
    const r = await ssh('sha256sum', '/file.bin', `'/sub dir/b.txt'`);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, `${hex('sha256', data)}  /file.bin\n${hex('sha256', 'bee\n')}  /sub dir/b.txt\n`);
    t.ok(
      events.some((e) => e.action === 'download' && e.protocol === 'SSH' && e.ssh_cmd === 'sha256sum' && e.virtual_path === '/sub dir/b.txt'),
      'the reads are download events of protocol SSH with their ssh_cmd',
    );
  });

  await t.test('a missing file and a denied path: an error on stderr, exit status 1, the others hashed', async (t) => {
    const r = await ssh('md5sum', '/nope.txt', '/secret/x.txt', '/file.bin');
    t.equal(r.code, 1);
    t.match(r.stderr, /md5sum: \/nope\.txt: .*no such file/i);
    t.match(r.stderr, /md5sum: \/secret\/x\.txt: /);
    t.notMatch(r.stdout, /secret/, 'the denied file is not hashed');
    t.equal(r.stdout, `${hex('md5', data)}  /file.bin\n`);
    // no path: standard input (here empty: -n), as coreutils and rclone's detection of the command want it
    const none = await run('ssh', ['-n', '-p', String(h.port), ...opensshOptions(key.file), 'cmd@127.0.0.1', 'sha1sum']);
    t.equal(none.code, 0, none.stderr);
    t.equal(none.stdout, `${hex('sha1', '')}  -\n`);
    const c = await connectSsh({ port: h.port, username: 'cmd', privateKey: readFileSync(key.file) });
    t.teardown(() => c.end());
    const piped = await new Promise<string>((resolve, reject) =>
      c.exec('md5sum - /file.bin', (err, stream) => {
        if (err) return reject(err);
        let out = '';
        stream.on('data', (d: Buffer) => (out += d.toString()));
        stream.on('close', () => resolve(out));
        stream.end('from standard input');
      }),
    );
    t.equal(piped, `${hex('md5', 'from standard input')}  -\n${hex('md5', data)}  /file.bin\n`, 'standard input, then a file');
  });

  await t.test('pwd prints /, cd is accepted', async (t) => {
    const pwd = await ssh('pwd');
    t.equal(pwd.code, 0);
    t.equal(pwd.stdout, '/\n');
    const cd = await ssh('cd', '/sub');
    t.equal(cd.code, 0, cd.stderr);
    t.equal(cd.stdout, '');
  });

  await t.test('anything else is refused, no shell', async (t) => {
    const separators = await ssh('md5sum', 'nope;', 'id', '&&', 'pwd');
    t.equal(separators.code, 1);
    t.equal(separators.stdout, '', 'no second command ran');
    t.match(separators.stderr, /md5sum: nope;: no such file or directory\nmd5sum: id: no such file/);
    for (const command of [['ls', '/'], ['id'], ['rm', '-rf', '/'], ['exec', 'md5sum']]) {
      const r = await ssh(...command);
      t.equal(r.code, 1, command.join(' '));
      t.match(r.stderr, /is not allowed \(no shell is served\)/);
    }
    const quote = await ssh(`md5sum '/file.bin`);
    t.equal(quote.code, 1);
    t.match(quote.stderr, /unterminated quote/);
    const shell = await run('ssh', ['-p', String(h.port), ...opensshOptions(key.file), '-T', 'cmd@127.0.0.1'], dir);
    t.not(shell.code, 0, 'no shell');
  });
});

t.test('enabled_ssh_commands restricts the commands', async (t) => {
  const h = await startSftp(t, { sftp: { enabled_ssh_commands: ['pwd', 'sha256sum', 'unknown-thing'] } });
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const home = await h.addUser('few', { public_keys: [key.pub] });
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'a.txt'), 'a\n');
  const ssh = (...command: string[]) => run('ssh', ['-p', String(h.port), ...opensshOptions(key.file), 'few@127.0.0.1', ...command]);
  const ok = await ssh('sha256sum', '/a.txt');
  t.equal(ok.code, 0, ok.stderr);
  for (const cmd of ['md5sum', 'cd', 'scp', 'unknown-thing']) {
    const r = await ssh(cmd, '/a.txt');
    t.equal(r.code, 1, cmd);
    t.match(r.stderr, new RegExp(`the command "${cmd}" is not allowed`));
  }
  const scp = await run('scp', ['-O', '-P', String(h.port), ...opensshOptions(key.file), 'few@127.0.0.1:/a.txt', path.join(dir, 'a.txt')]);
  t.not(scp.code, 0, 'legacy scp refused when not enabled');
});
