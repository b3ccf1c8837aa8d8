/**
 * A real `ferry serve` killed with SIGKILL while 50 uploads are in flight
 * (half of them complete and being published, half stalled mid-body), then
 * started again on the same state: what the crash left in the temp area and
 * beside the destinations (hidden copies of a cross-device publication) is
 * gone as soon as the server listens again, no partial file is visible, and
 * the quota counters of the user and of the virtual folder equal what is on
 * disk. Run twice: data directory (temp area) on the homes' device, and on
 * another device (/dev/shm) so publication copies into hidden files.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { createPgDatabase, usePostgres } from '@ferry/core/testing';
import { otherDeviceDir } from '@ferry/testkit';
import { ADMIN, call, createUser, serve, streamUpload, token, walk, writeConfig, type Server, type UploadOutcome } from './helpers/ferry.js';

const UPLOADS = 50;
/** Uploads sent whole (the others stop half-way). */
const COMPLETE = 25;
const SIZE = 4 * 1024 * 1024;
const PASSWORD = 'crash-user-password-1';

/** The content of upload `i`: one byte value repeated (a partial or mixed file is told at once). */
const fill = (i: number) => (i * 7 + 1) % 251;

async function scenario(t: Test, crossDevice: boolean): Promise<void> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'ferry-faults-crash-'));
  t.teardown(() => rm(base, { recursive: true, force: true }));
  let dataDir = path.join(base, 'data');
  if (crossDevice) {
    const other = await otherDeviceDir(base);
    if (!other) {
      t.plan(0, 'no directory on another device (set FERRY_TEST_XDEV_DIR)');
      return;
    }
    t.teardown(() => rm(other, { recursive: true, force: true }));
    dataDir = other;
  }
  let databaseUrl: string | undefined;
  if (usePostgres()) {
    const db = await createPgDatabase();
    t.teardown(() => db.drop());
    databaseUrl = db.url;
  }
  const home = path.join(base, 'homes', 'u1');
  const folderDir = path.join(base, 'folders', 'vf');
  const config = writeConfig(base, { dataDir, databaseUrl });

  let server: Server = await serve(config);
  t.teardown(() => server.kill('SIGKILL'));
  const admin = await token(server.url, 'admin', ADMIN.username, ADMIN.password);
  t.equal((await call(`${server.url}/api/v2/folders`, 'POST', { token: admin, body: { name: 'vf', mapped_path: folderDir } })).status, 201);
  const userToken = await createUser(t, server.url, admin, {
    username: 'u1',
    password: PASSWORD,
    home,
    // the folder has its own (unlimited) quota: its counters move, the user's do not
    more: { virtual_folders: [{ name: 'vf', virtual_path: '/vf', quota_size: 0, quota_files: 0 }] },
  });

  // 50 uploads, 30 to the home and 20 to the virtual folder
  const vpath = (i: number) => (i % 5 < 3 ? `/f${i}` : `/vf/f${i}`);
  const uploads = Array.from({ length: UPLOADS }, (_, i) => streamUpload(server.url, userToken, vpath(i), SIZE));
  const answered: UploadOutcome[] = [];
  for (const u of uploads) void u.outcome.then((o) => answered.push(o));
  const published = () => answered.filter((o) => 'status' in o && o.status === 201).length;
  // the stalled half first: each sends half its body and waits
  await Promise.all(uploads.slice(COMPLETE).map((u, k) => u.send(Buffer.alloc(SIZE / 2, fill(COMPLETE + k)))));
  // The moment of the kill: a hidden copy beside a destination (cross-device: the complete half
  // sent at once), or some uploads published while others are still arriving (same device: the
  // complete half in two waves, the kill as the second one is sent; answers to uploads that end
  // together can come back together, their counters stored by one commit, so waiting for a count
  // of answers alone could see them all).
  const firstWave = crossDevice ? COMPLETE : 12;
  uploads.slice(0, firstWave).forEach((u, i) => u.end(Buffer.alloc(SIZE, fill(i))));
  let sawHidden = false;
  for (;;) {
    if (crossDevice) {
      const names = [...(await readdir(home).catch(() => [])), ...(await readdir(folderDir).catch(() => []))];
      if (names.some((n) => n.startsWith('.ferry-tmp-'))) {
        sawHidden = true;
        break;
      }
    } else if (published() >= 8) break;
    if (answered.length >= firstWave) break;
    await new Promise((r) => setImmediate(r));
  }
  uploads.slice(firstWave, COMPLETE).forEach((u, k) => u.end(Buffer.alloc(SIZE, fill(firstWave + k))));
  await new Promise((r) => setImmediate(r));
  const answeredAtKill = answered.length;
  await server.kill('SIGKILL');
  if (crossDevice) t.ok(sawHidden, 'killed while a cross-device publication was copying into a hidden file');
  t.ok(answeredAtKill < COMPLETE, `killed with uploads in flight (${answeredAtKill} of the ${COMPLETE} complete ones answered)`);
  for (const u of uploads) u.destroy();
  await Promise.all(uploads.map((u) => u.outcome));

  const leftInTemp = (await readdir(path.join(dataDir, 'uploads-tmp')).catch(() => [])).length;
  const leftInJournal = (await readdir(path.join(dataDir, 'uploads-journal')).catch(() => [])).length;
  t.ok(leftInTemp > 0 && leftInJournal > 0, `the crash left temp data (${leftInTemp}) and journal entries (${leftInJournal})`);

  server = await serve(config);
  const pid = server.proc.pid!;
  // checked at once, as soon as the server listens again (no sweep delay)
  const ownOnly = (names: string[]) => names.filter((n) => !n.startsWith(`${pid}-`));
  t.same(ownOnly(await readdir(path.join(dataDir, 'uploads-tmp'))), [], "the temp area holds nothing of the dead process's");
  t.same(ownOnly(await readdir(path.join(dataDir, 'uploads-journal'))), [], 'the journal of the dead process is gone');
  const homeTree = await walk(home);
  const folderTree = await walk(folderDir);
  t.same(
    [...homeTree.names, ...folderTree.names].filter((n) => path.basename(n).toLowerCase().startsWith('.ferry-tmp-')),
    [],
    'no hidden copy left beside the destinations',
  );
  t.match(server.output(), /quota counters touched by uploads interrupted by a crash rescanned/, 'start-up rescanned the counters the crash left behind');

  // every visible file is one whole upload
  for (const [tree, dir] of [
    [homeTree, home],
    [folderTree, folderDir],
  ] as const) {
    for (const [rel, size] of tree.files) {
      const i = Number(/^f(\d+)$/.exec(rel)?.[1] ?? NaN);
      t.ok(i >= 0 && i < COMPLETE, `${rel}: only complete uploads are visible`);
      t.equal(size, SIZE, `${rel}: whole size`);
      t.ok((await readFile(path.join(dir, rel))).equals(Buffer.alloc(SIZE, fill(i))), `${rel}: its own content`);
    }
  }

  const admin2 = await token(server.url, 'admin', ADMIN.username, ADMIN.password);
  const user = (await call(`${server.url}/api/v2/users/u1`, 'GET', { token: admin2 })).json<{ used_quota_size: number; used_quota_files: number }>();
  const folder = (await call(`${server.url}/api/v2/folders/vf`, 'GET', { token: admin2 })).json<{ used_quota_size: number; used_quota_files: number }>();
  t.same([user.used_quota_size, user.used_quota_files], [homeTree.size, homeTree.files.size], "the user's counters equal the disk");
  t.same([folder.used_quota_size, folder.used_quota_files], [folderTree.size, folderTree.files.size], "the folder's counters equal the disk");

  // and the node works: a new upload goes through
  const again = streamUpload(server.url, await token(server.url, 'user', 'u1', PASSWORD), '/after', 1024);
  again.end(Buffer.alloc(1024, 1));
  t.match(await again.outcome, { status: 201 }, 'uploads work after the restart');
  await server.kill('SIGTERM');
}

t.test('SIGKILL during 50 uploads, temp area on the homes device', (t) => scenario(t, false));
t.test('SIGKILL during 50 uploads, temp area on another device (hidden copies beside the destinations)', (t) => scenario(t, true));
