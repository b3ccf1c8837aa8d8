import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { opensshOptions, run, sftpBatch, sshKey, startSftp } from './helpers.js';
import { pooledPadding } from '../src/ssh2-module.js';
import { packetSlabs } from '@ferry/core';

// OpenSSH's clients talk to the service as it ships: ssh2 loaded by the service, its packets padded from the pool
t.equal(pooledPadding, true, 'ssh2 loaded through src/ssh2-module.ts');

// The real OpenSSH clients (sftp and scp in batch mode, key login) against the service.
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

t.test('key login: put, get, ls, rename, rm, mkdir, rmdir, scp, reput', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const home = await h.addUser('kate', { public_keys: [key.pub] });
  const sftp = (lines: string[]) => sftpBatch({ port: h.port, user: 'kate', key: key.file, dir, lines });

  const big = path.join(dir, 'big.bin');
  writeFileSync(big, randomBytes(5 * 1024 * 1024 + 12345));
  writeFileSync(path.join(dir, 'small.txt'), 'hello sftp\n');

  await t.test('put and get a few MiB, byte for byte both ways', async (t) => {
    const reused = packetSlabs.reused;
    const r = await sftp(['put big.bin /big.bin', 'get /big.bin back.bin']);
    t.equal(r.code, 0, r.stderr);
    t.equal(sha(path.join(home, 'big.bin')), sha(big), 'the uploaded file is the same');
    t.equal(sha(path.join(dir, 'back.bin')), sha(big), 'the downloaded file is the same');
    // 5 MiB in 32 KiB packets: about 160, built in reused buffers (core's SDK, pooledSshPackets)
    t.ok(packetSlabs.reused - reused > 100, `the download's packets were built in reused buffers (${packetSlabs.reused - reused})`);
  });

  await t.test('mkdir, ls, rename, rm, rmdir', async (t) => {
    const r = await sftp(['mkdir /docs', 'put small.txt /docs/a.txt', 'ls -l /docs', 'rename /docs/a.txt /docs/b.txt', 'ls /docs']);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /-rw\S*\s+1 kate\s+kate\s+11 .* a\.txt/, 'ls -l shows the long name');
    t.match(r.stdout, /b\.txt/);
    t.ok(existsSync(path.join(home, 'docs/b.txt')));
    t.notOk(existsSync(path.join(home, 'docs/a.txt')));
    const refused = await sftp(['rmdir /docs']);
    t.not(refused.code, 0, 'a directory that is not empty is not removed');
    t.ok(existsSync(path.join(home, 'docs/b.txt')));
    const removed = await sftp(['rm /docs/b.txt', 'rmdir /docs']);
    t.equal(removed.code, 0, removed.stderr);
    t.notOk(existsSync(path.join(home, 'docs')));
  });

  await t.test('errors reach the client', async (t) => {
    const missing = await sftp(['get /nope.txt nope.txt']);
    t.not(missing.code, 0);
    t.match(missing.stderr, /not found|No such file/i);
    const link = await sftp(['ln -s /big.bin /link']);
    t.not(link.code, 0, 'symbolic links are refused');
  });

  await t.test('scp (SFTP-based) put and get', async (t) => {
    const put = await run('scp', ['-P', String(h.port), ...opensshOptions(key.file), '-v', path.join(dir, 'small.txt'), `kate@127.0.0.1:/scp.txt`]);
    t.equal(put.code, 0, put.stderr);
    t.comment(JSON.stringify(put));
    t.equal(readFileSync(path.join(home, 'scp.txt'), 'utf8'), 'hello sftp\n');
    const get = await run('scp', ['-P', String(h.port), ...opensshOptions(key.file), `kate@127.0.0.1:/big.bin`, path.join(dir, 'scp.bin')]);
    t.equal(get.code, 0, get.stderr);
    t.equal(sha(path.join(dir, 'scp.bin')), sha(big));
  });

  await t.test('put -p keeps the modification time', async (t) => {
    const when = new Date('2021-06-15T12:00:00Z');
    utimesSync(path.join(dir, 'small.txt'), when, when);
    const r = await sftp(['put -p small.txt /timed.txt']);
    t.equal(r.code, 0, r.stderr);
    t.equal(statSync(path.join(home, 'timed.txt')).mtime.getTime(), when.getTime());
  });

  await t.test('shell and commands are refused with a message', async (t) => {
    const r = await run('ssh', ['-p', String(h.port), ...opensshOptions(key.file), 'kate@127.0.0.1', 'ls', '/']);
    t.equal(r.code, 1);
    t.match(r.stderr, /the command "ls" is not allowed \(no shell is served\)/);
  });

  await t.test('reput resumes an interrupted upload', async (t) => {
    // the first half is on the server, as an interrupted upload leaves it
    writeFileSync(path.join(home, 'resumed.bin'), readFileSync(big).subarray(0, 2 * 1024 * 1024));
    const r = await sftp(['reput big.bin /resumed.bin']);
    t.equal(r.code, 0, r.stderr);
    t.equal(statSync(path.join(home, 'resumed.bin')).size, statSync(big).size);
    t.equal(sha(path.join(home, 'resumed.bin')), sha(big), 'the resumed file is the same');
    const reget = await sftp(['reget /big.bin part.bin']);
    t.equal(reget.code, 0, reget.stderr);
  });
});
