import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TOKENS, type EventBus, type FsEvent } from '@ferry/core';
import { parseScpArgs } from '../src/scp.js';
import { connectSsh, opensshOptions, run, sshKey, startSftp } from './helpers.js';

// The legacy SCP protocol (`scp -O`: the server runs `scp -t` / `scp -f`) with the real OpenSSH client.
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

t.test('parseScpArgs', async (t) => {
  t.same(parseScpArgs(['-v', '-r', '-p', '-d', '-t', '--', '/x']), {
    sink: true,
    source: false,
    recursive: true,
    times: true,
    targetIsDir: true,
    paths: ['/x'],
  });
  t.same(parseScpArgs(['-prf', '/a', '/b']), { sink: false, source: true, recursive: true, times: true, targetIsDir: false, paths: ['/a', '/b'] });
  t.throws(() => parseScpArgs(['-t', '-f', '/x']), /exactly one of -t and -f/);
  t.throws(() => parseScpArgs(['-r', '/x']), /exactly one of -t and -f/);
  t.throws(() => parseScpArgs(['-t', '/a', '/b']), /one target is needed/);
  t.throws(() => parseScpArgs(['-f']), /a source is needed/);
  t.throws(() => parseScpArgs(['-x', '-t', '/a']), /unknown option -x/);
});

t.test('scp -O: put, get, -r, -p, refusals', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const home = await h.addUser('sam', { public_keys: [key.pub], permissions: { '/': ['*'], '/ro': ['list', 'download'] } });
  mkdirSync(path.join(home, 'ro'), { recursive: true });
  const events: FsEvent[] = [];
  t.teardown(h.ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('fs', (e) => void events.push(e)));
  const scp = (...args: string[]) => run('scp', ['-O', '-P', String(h.port), ...opensshOptions(key.file), ...args], dir);
  const remote = (p: string) => `sam@127.0.0.1:${p}`;

  const big = path.join(dir, 'big.bin');
  writeFileSync(big, randomBytes(4 * 1024 * 1024 + 4321));

  await t.test('put and get a few MiB, byte for byte both ways', async (t) => {
    const put = await scp(big, remote('/big.bin'));
    t.equal(put.code, 0, put.stderr);
    t.equal(sha(path.join(home, 'big.bin')), sha(big), 'the uploaded file is the same');
    const get = await scp(remote('/big.bin'), path.join(dir, 'back.bin'));
    t.equal(get.code, 0, get.stderr);
    t.equal(sha(path.join(dir, 'back.bin')), sha(big), 'the downloaded file is the same');
    t.ok(
      events.some((e) => e.action === 'upload' && e.protocol === 'SCP' && e.ssh_cmd === 'scp' && e.virtual_path === '/big.bin' && e.status === 1),
      'an upload event of protocol SCP, ssh_cmd scp',
    );
    t.ok(
      events.some((e) => e.action === 'download' && e.protocol === 'SCP' && e.virtual_path === '/big.bin'),
      'a download event of protocol SCP',
    );
    const into = await scp(path.join(dir, 'back.bin'), remote('/'));
    t.equal(into.code, 0, into.stderr);
    t.ok(existsSync(path.join(home, 'back.bin')), 'a directory target receives the file under its name');
  });

  await t.test('-r both ways, -p keeps the times', async (t) => {
    const tree = path.join(dir, 'tree');
    mkdirSync(path.join(tree, 'sub', 'deeper'), { recursive: true });
    writeFileSync(path.join(tree, 'a.txt'), 'alpha\n');
    writeFileSync(path.join(tree, 'sub', 'b.bin'), randomBytes(70_000));
    writeFileSync(path.join(tree, 'sub', 'deeper', 'c.txt'), '');
    const when = new Date('2020-02-03T04:05:06Z');
    utimesSync(path.join(tree, 'a.txt'), when, when);
    const put = await scp('-r', '-p', tree, remote('/up'));
    t.equal(put.code, 0, put.stderr);
    t.equal(readFileSync(path.join(home, 'up', 'a.txt'), 'utf8'), 'alpha\n');
    t.equal(sha(path.join(home, 'up', 'sub', 'b.bin')), sha(path.join(tree, 'sub', 'b.bin')));
    t.equal(statSync(path.join(home, 'up', 'sub', 'deeper', 'c.txt')).size, 0);
    t.equal(statSync(path.join(home, 'up', 'a.txt')).mtime.getTime(), when.getTime(), '-p: the modification time is kept');

    const back = path.join(dir, 'down');
    const get = await scp('-r', '-p', remote('/up'), back);
    t.equal(get.code, 0, get.stderr);
    t.same(readdirSync(back).sort(), ['a.txt', 'sub']);
    t.equal(sha(path.join(back, 'sub', 'b.bin')), sha(path.join(tree, 'sub', 'b.bin')));
    t.ok(existsSync(path.join(back, 'sub', 'deeper', 'c.txt')));
    t.equal(statSync(path.join(back, 'a.txt')).mtime.getTime(), when.getTime(), '-p on download');

    const noR = await scp(remote('/up'), path.join(dir, 'nor'));
    t.not(noR.code, 0, 'a directory without -r is refused');
    t.match(noR.stderr, /not a regular file/);
  });

  await t.test('refusals: denied path, missing file, a file as a directory target', async (t) => {
    const denied = await scp(path.join(dir, 'big.bin'), remote('/ro/x.bin'));
    t.not(denied.code, 0);
    t.match(denied.stderr, /scp: .*(denied|permission)/i);
    t.notOk(existsSync(path.join(home, 'ro', 'x.bin')), 'nothing written');
    const missing = await scp(remote('/nope.bin'), path.join(dir, 'nope.bin'));
    t.not(missing.code, 0);
    t.match(missing.stderr, /no such file/i);
    t.notOk(existsSync(path.join(dir, 'nope.bin')));
    const escape = await scp(remote('/../../etc/passwd'), path.join(dir, 'passwd'));
    t.not(escape.code, 0, 'no way out of the home');
    const notDir = await scp(big, path.join(dir, 'back.bin'), remote('/big.bin'));
    t.not(notDir.code, 0, 'several files into a file: refused (-d)');
    t.match(notDir.stderr, /not a directory/);
  });

  await t.test('the default scp (SFTP) still works', async (t) => {
    const r = await run('scp', ['-P', String(h.port), ...opensshOptions(key.file), big, remote('/sftp.bin')], dir);
    t.equal(r.code, 0, r.stderr);
    t.equal(sha(path.join(home, 'sftp.bin')), sha(big));
  });
});

t.test('scp -O: quota exceeded leaves nothing', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const home = await h.addUser('quo', { public_keys: [key.pub], quota_size: 1024 * 1024 });
  mkdirSync(home, { recursive: true });
  const file = path.join(dir, 'two.bin');
  writeFileSync(file, randomBytes(2 * 1024 * 1024));
  const r = await run('scp', ['-O', '-P', String(h.port), ...opensshOptions(key.file), file, 'quo@127.0.0.1:/two.bin'], dir);
  t.not(r.code, 0);
  t.match(r.stderr, /quota/i);
  t.notOk(existsSync(path.join(home, 'two.bin')), 'nothing partial');
  t.same(
    readdirSync(home).filter((n) => !n.startsWith('.')),
    [],
    'no temporary file left',
  );
});

t.test('a running scp is listed with protocol SCP and its command, and closed by DELETE', async (t) => {
  const h = await startSftp(t);
  const home = await h.addUser('lis', { password: 'lis-pass-1' });
  mkdirSync(home, { recursive: true });
  const c = await connectSsh({ port: h.port, username: 'lis', password: 'lis-pass-1' });
  const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
  const channel = await new Promise<import('ssh2').ClientChannel>((resolve, reject) =>
    c.exec('scp -t /up.bin', (err, ch) => (err ? reject(err) : resolve(ch))),
  );
  // the sink's first acknowledgement: the session is open, the transfer under way
  const first = await new Promise<Buffer>((resolve) => channel.once('data', resolve));
  t.same([...first], [0]);
  channel.write('C0644 10 up.bin\n');
  const list = JSON.parse((await h.ta.inject('GET', '/api/v2/connections', { token: h.token })).payload) as {
    username: string;
    connection_id: string;
    protocol: string;
    command?: string;
  }[];
  const mine = list.filter((x) => x.username === 'lis');
  t.equal(mine.length, 1);
  t.equal(mine[0]!.protocol, 'SCP');
  t.equal(mine[0]!.command, 'scp -t /up.bin');
  const del = await h.ta.inject('DELETE', `/api/v2/connections/${mine[0]!.connection_id}`, { token: h.token });
  t.equal(del.statusCode, 200, del.payload);
  await closed;
  t.notOk(existsSync(path.join(home, 'up.bin')), 'the interrupted upload left nothing');
});

t.test('scp -t with a raw client: bad names and malformed records are refused', async (t) => {
  const h = await startSftp(t);
  const home = await h.addUser('raw', { password: 'raw-pass-1' });
  mkdirSync(home, { recursive: true });
  const c = await connectSsh({ port: h.port, username: 'raw', password: 'raw-pass-1' });
  t.teardown(() => c.end());
  /** Runs `command`, sends `input` once the server's first byte came, resolves with all it sent and its exit code. */
  const exchange = (command: string, input: string) =>
    new Promise<{ out: string; code: number | null }>((resolve, reject) =>
      c.exec(command, (err, ch) => {
        if (err) return reject(err);
        let out = '';
        let code: number | null = null;
        ch.once('data', () => ch.end(input));
        ch.on('data', (d: Buffer) => (out += d.toString('latin1')));
        ch.on('exit', (n: number | null) => (code = n));
        ch.on('close', () => resolve({ out, code }));
      }),
    );
  const bad = await exchange('scp -t /', 'C0644 3 ../up.txt\nabc\0');
  t.match(bad.out, /^\0\x01scp: invalid name "\.\.\/up\.txt"\n/, 'a name with a slash: a warning');
  t.equal(bad.code, 1);
  t.notOk(existsSync(path.join(home, '..', 'up.txt')));
  const garbage = await exchange('scp -t /', 'Xnonsense\n');
  t.match(garbage.out, /^\0\x02scp: protocol error: unexpected record/, 'an unknown record: a fatal error');
  t.equal(garbage.code, 1);
  const noR = await exchange('scp -t /', 'D0755 0 dir\nE\n');
  t.match(noR.out, /received a directory without -r/);
  t.notOk(existsSync(path.join(home, 'dir')));
  const ok = await exchange('scp -t /one.txt', 'T1600000000 0 1600000000 0\nC0644 3 whatever\nabc\0');
  t.equal(ok.out, '\0\0\0\0', 'every record acknowledged (-p not given: the time is not applied)');
  t.equal(ok.code, 0);
  t.equal(readFileSync(path.join(home, 'one.txt'), 'utf8'), 'abc');
  t.not(statSync(path.join(home, 'one.txt')).mtime.getTime(), 1600000000_000);
  const cut = await exchange('scp -t /cut.bin', `C0644 1000 cut.bin\n${'x'.repeat(500)}`);
  t.equal(cut.code, 1, 'the client left half-way');
  t.notOk(existsSync(path.join(home, 'cut.bin')), 'an interrupted upload leaves nothing');
  const stray = await exchange('scp -t /', 'E\n');
  t.match(stray.out, /^\0\x02scp: protocol error: E without D/);
  const options = await exchange('scp -t -z /', '');
  t.match(options.out, /^\x02scp: unknown option -z\n/);
  t.equal(options.code, 1);
});
