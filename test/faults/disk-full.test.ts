/**
 * The disk fills during an upload: the home lives on a small tmpfs (8 MiB,
 * mounted by the test: needs root) while the temp area is on the main disk,
 * so the upload is received whole and the publication's copy beside the
 * destination runs out of space. The answer is a clean 4xx with a JSON
 * message, nothing is half-written (no file, no hidden copy, the tmpfs as
 * empty as before), the quota counters do not move, and an upload that fits
 * goes through afterwards. Skipped where a tmpfs cannot be mounted.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { createPgDatabase, usePostgres } from '@ferry/core/testing';
import { ADMIN, call, createUser, serve, streamUpload, token, writeConfig } from './helpers/ferry.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const PASSWORD = 'disk-full-password-1';

t.test('disk full during an upload: clean 4xx JSON, nothing half-written, quota unchanged', async (t) => {
  const base = await mkdtemp(path.join(os.tmpdir(), 'ferry-faults-full-'));
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const small = path.join(base, 'small');
  await mkdir(small);
  const mounted =
    process.getuid?.() === 0 &&
    (await run('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', small]).then(
      () => true,
      () => false,
    ));
  if (!mounted) {
    t.plan(0, 'cannot mount a small tmpfs here (needs root)');
    return;
  }
  t.teardown(() => run('umount', ['-l', small]).catch(() => undefined));
  let databaseUrl: string | undefined;
  if (usePostgres()) {
    const db = await createPgDatabase();
    t.teardown(() => db.drop());
    databaseUrl = db.url;
  }
  const home = path.join(small, 'u1');
  const server = await serve(writeConfig(base, { databaseUrl }));
  t.teardown(() => server.kill('SIGKILL'));
  const admin = await token(server.url, 'admin', ADMIN.username, ADMIN.password);
  const userToken = await createUser(t, server.url, admin, { username: 'u1', password: PASSWORD, home });
  const usage = async () => {
    const u = (await call(`${server.url}/api/v2/users/u1`, 'GET', { token: admin })).json<{ used_quota_size: number; used_quota_files: number }>();
    return [u.used_quota_size, u.used_quota_files];
  };
  await mkdir(home, { recursive: true });
  const free = async () => {
    const s = await statfs(small);
    return s.bfree * s.bsize;
  };
  const freeBefore = await free();

  const big = streamUpload(server.url, userToken, '/big.bin', 12 * MiB);
  big.end(Buffer.alloc(12 * MiB, 7));
  const answer = await big.outcome;
  t.ok('status' in answer && answer.status >= 400 && answer.status < 500, `a 4xx answer: ${JSON.stringify(answer)}`);
  if ('status' in answer) {
    const body = JSON.parse(answer.body) as { message?: unknown; error?: unknown };
    t.type(body.message, 'string', 'a JSON message');
    t.type(body.error, 'string', 'a JSON error');
  }
  t.same(await readdir(home), [], 'nothing in the home: no file, no hidden copy');
  t.equal(await free(), freeBefore, 'the space is given back');
  t.same(await usage(), [0, 0], 'quota counters unchanged');
  const tmpLeft = await readdir(path.join(base, 'data', 'uploads-tmp')).catch(() => [] as string[]);
  for (const d of tmpLeft) t.same(await readdir(path.join(base, 'data', 'uploads-tmp', d)), [], 'the temp area holds nothing of it');

  const fits = streamUpload(server.url, userToken, '/fits.bin', 1 * MiB);
  fits.end(Buffer.alloc(MiB, 8));
  t.match(await fits.outcome, { status: 201 }, 'an upload that fits goes through');
  t.same(await usage(), [MiB, 1], 'and is counted');
  await server.kill('SIGTERM');
});
