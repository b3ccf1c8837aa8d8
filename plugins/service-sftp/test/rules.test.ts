import t from 'tap';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sftpBatch, sshKey, startSftp } from './helpers.js';

// Event rules and bandwidth limits apply to SFTP as they do to HTTP: a synchronous rule on uploads
// has run when the client's CLOSE is answered, a failing pre-upload rule refuses the upload (nothing
// is left), a rule limited to another protocol does not fire, and the user's bandwidth limits slow
// the transfers down.

t.test('event rules on SFTP uploads', async (t) => {
  const h = await startSftp(t, { backends: ['@ferry/fs-local', '@ferry/action-fs'] });
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const home = await h.addUser('rita', { public_keys: [key.pub] });
  const sftp = (lines: string[]) => sftpBatch({ port: h.port, user: 'rita', key: key.file, dir, lines });
  const admin = h.token;
  const action = (name: string, fs_config: unknown) =>
    h.ta.inject('POST', '/api/v2/eventactions', { token: admin, payload: { name, type: 9, options: { fs_config } } });
  const rule = (name: string, fs_events: string[], actionName: string, options: Record<string, unknown>) =>
    h.ta.inject('POST', '/api/v2/eventrules', {
      token: admin,
      payload: {
        name,
        status: 1,
        trigger: 1,
        conditions: { fs_events, options },
        actions: [{ name: actionName, order: 1, relation_options: { execute_sync: true, stop_on_failure: true } }],
      },
    });
  t.equal((await action('copy-in', { type: 6, copy: [{ key: '{{.VirtualPath}}', value: '/copies/{{.ObjectName}}' }] })).statusCode, 201);
  t.equal((await action('need-flag', { type: 4, exist: ['/ready.flag'] })).statusCode, 201);
  t.equal((await rule('copy-sftp', ['upload'], 'copy-in', { fs_paths: [{ pattern: '/in/*' }], protocols: ['SFTP'] })).statusCode, 201);
  t.equal((await rule('copy-http-only', ['upload'], 'copy-in', { fs_paths: [{ pattern: '/web/*' }], protocols: ['HTTP'] })).statusCode, 201);
  t.equal((await rule('gate', ['pre-upload'], 'need-flag', { fs_paths: [{ pattern: '/gated/*' }] })).statusCode, 201);

  const data = randomBytes(300 * 1024);
  writeFileSync(path.join(dir, 'f.bin'), data);
  const up = await sftp(['mkdir /in', 'mkdir /web', 'mkdir /gated', 'put f.bin /in/f.bin', 'put f.bin /web/f.bin']);
  t.equal(up.code, 0, up.stderr);
  // execute_sync: the copy was made before the upload's CLOSE was answered
  t.same(readFileSync(path.join(home, 'copies/f.bin')), data, 'the synchronous rule copied the SFTP upload');
  t.same(readdirSync(path.join(home, 'copies')), ['f.bin'], 'the HTTP-only rule did not fire for SFTP');

  const gated = await sftp(['put f.bin /gated/f.bin']);
  t.not(gated.code, 0, 'a failing pre-upload rule refuses the upload');
  t.notOk(existsSync(path.join(home, 'gated/f.bin')), 'and nothing is left');
  writeFileSync(path.join(home, 'ready.flag'), '');
  const open = await sftp(['put f.bin /gated/f.bin']);
  t.equal(open.code, 0, open.stderr);
  t.same(readFileSync(path.join(home, 'gated/f.bin')), data, 'once the rule passes, the upload goes through');
});

t.test('bandwidth limits slow SFTP transfers down', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);
  // KB/s, as the API counts them; the limit is a floor on the time, whatever the machine's load
  await h.addUser('bert', { public_keys: [key.pub], upload_bandwidth: 256, download_bandwidth: 256 });
  const data = randomBytes(768 * 1024);
  writeFileSync(path.join(dir, 'f.bin'), data);
  const sftp = (lines: string[]) => sftpBatch({ port: h.port, user: 'bert', key: key.file, dir, lines });
  let start = process.hrtime.bigint();
  const up = await sftp(['put f.bin /f.bin']);
  const upSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  t.equal(up.code, 0, up.stderr);
  start = process.hrtime.bigint();
  const down = await sftp(['get /f.bin back.bin']);
  const downSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  t.equal(down.code, 0, down.stderr);
  t.same(readFileSync(path.join(dir, 'back.bin')), data, 'the same bytes back');
  // 768 KiB at 256 KB/s: about 3 s each way; a burst allowance aside, never under 1.5 s
  t.ok(upSeconds >= 1.5, `the upload was throttled (${upSeconds.toFixed(2)} s)`);
  t.ok(downSeconds >= 1.5, `the download was throttled (${downSeconds.toFixed(2)} s)`);
});
