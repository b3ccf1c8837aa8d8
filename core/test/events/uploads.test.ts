import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { addUser, fileApp, multipart, PASSWORD } from '../helpers/user-files.js';
import { unzip } from '@ferry/testkit';
import { EventManager } from '../../src/event-manager/event-manager.js';
import { processTag } from '../../src/sdk/process-tag.js';

// Execution rules of event rules on real file operations: everything goes
// through the HTTP user file API and the admin API, with the test action
// plugin (type 101: records its executions, fails on demand) and the
// third-party example plugin examples/action-audit-log (type 5000: appends
// a rendered line to a file), loaded from the configuration.
const auditDir = mkdtempSync(path.join(os.tmpdir(), 'ferry-audit-'));
const ta = await fileApp({
  plugins: [
    { name: '@ferry/fs-local' },
    { name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app: 'uploads' } },
    { name: 'ferry-plugin-action-audit-log', path: 'examples/action-audit-log', config: { directory: auditDir } },
  ],
  config: { event_manager: { rules_cache_ttl: 0 } },
});
t.teardown(async () => {
  await ta.close();
  rmSync(auditDir, { recursive: true, force: true });
});
const mgr = ta.app.container.resolve(EventManager);
const admin = await ta.adminToken();
const home = await addUser(ta, { username: 'alice', quota_size: 1_000_000, quota_files: 100 });
const token = await ta.userToken('alice', PASSWORD);
const tmpDir = path.join(ta.dataDir, 'uploads-tmp', processTag());

type Entry = { app: string; rule: string; action: string; params: Record<string, any>; hasPending: boolean; failedActions?: string[] };
const LOG = ((globalThis as any).__ferryActionLog ??= []) as Entry[];
const take = () => {
  const out = LOG.filter((e) => e.app === 'uploads');
  for (const e of out) LOG.splice(LOG.indexOf(e), 1);
  return out;
};
const json = (r: { payload: string }) => JSON.parse(r.payload);
async function api(method: string, url: string, payload?: unknown) {
  const r = await ta.inject(method, url, { token: admin, payload });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.payload}`);
  return r.payload ? json(r) : undefined;
}
const action = (name: string, type: number, options: Record<string, unknown>) => api('POST', '/api/v2/eventactions', { name, type, options });
const setFail = (name: string, fail: boolean) =>
  api('PUT', `/api/v2/eventactions/${name}`, { name, type: 101, options: { test_config: { fail, message: '{{.Event}} {{.VirtualPath}} {{.FileSize}}' } } });
const rule = (name: string, fs_events: string[], paths: string, actions: { name: string; order?: number; relation_options?: Record<string, boolean> }[]) =>
  api('POST', '/api/v2/eventrules', { name, trigger: 1, conditions: { fs_events, options: { fs_paths: [{ pattern: paths }] } }, actions });

const q = encodeURIComponent;
const up = (p: string, body: string) =>
  ta.inject('POST', `/api/v2/user/files/upload?path=${q(p)}&mkdir_parents=true`, {
    token,
    payload: body,
    headers: { 'content-type': 'application/octet-stream' },
  });
const upMultipart = (dir: string, name: string, body: string) => {
  const m = multipart([{ name, data: body }]);
  return ta.inject('POST', `/api/v2/user/files?path=${q(dir)}&mkdir_parents=true`, { token, payload: m.payload, headers: m.headers });
};
const download = (p: string) => ta.inject('GET', `/api/v2/user/files?path=${q(p)}`, { token });
const remove = (p: string) => ta.inject('DELETE', `/api/v2/user/files?path=${q(p)}`, { token });
/** The user's used quota as the admin API reports it. */
const usage = async () => {
  const u = await api('GET', '/api/v2/users/alice');
  return { size: u.used_quota_size as number, files: u.used_quota_files as number };
};
const auditLines = (file: string) => (existsSync(path.join(auditDir, file)) ? readFileSync(path.join(auditDir, file), 'utf8').split('\n').filter(Boolean) : []);
const tmpLeft = () => (existsSync(tmpDir) ? readdirSync(tmpDir) : []);

await action('gate', 101, { test_config: { fail: true } });
await action('scanner', 101, { test_config: { fail: true } });
await action('audit', 5000, { audit_log_config: { file: 'uploads.log', line: '{{.Event}} {{.VirtualPath}} {{.FileSize}} by {{.Name}}' } });
await action('audit-failure', 5000, { audit_log_config: { file: 'failures.log', line: '{{.Rule}}: {{.VirtualPath}} failed ({{.ErrorString}})' } });

t.test('execute_sync + stop_on_failure: a failing action aborts the upload, removes the file, quota unchanged', async (t) => {
  await rule('sync-gate', ['upload'], '/sync/**', [
    { name: 'gate', order: 1, relation_options: { execute_sync: true, stop_on_failure: true } },
    { name: 'audit', order: 2 },
    { name: 'audit-failure', order: 3, relation_options: { is_failure_action: true } },
  ]);
  const before = await usage();
  const r = await up('/sync/a.txt', 'hello sync');
  t.equal(r.statusCode, 403, r.payload);
  t.same(
    json(r),
    { message: 'rejected by event rule "sync-gate": action "gate" failed', error: 'Forbidden' },
    'a JSON error naming the rule, not the action internals',
  );
  t.notOk(existsSync(path.join(home, 'sync', 'a.txt')), 'the file is removed');
  t.equal((await download('/sync/a.txt')).statusCode, 404);
  t.same(await usage(), before, 'quota counters unchanged');
  t.same(tmpLeft(), [], 'no temporary file');
  // multipart uploads go the same way
  const m = await upMultipart('/sync', 'b.txt', 'multi');
  t.equal(m.statusCode, 403, m.payload);
  t.notOk(existsSync(path.join(home, 'sync', 'b.txt')));
  t.same(await usage(), before);
  await mgr.idle();
  const ran = take();
  t.same(
    ran.map((e) => `${e.rule}:${e.action}`),
    ['sync-gate:gate', 'sync-gate:gate'],
    'the sync action ran for each upload',
  );
  t.equal(ran[0]!.params.FileSize, 10, 'after the upload, with its size');
  t.same(auditLines('uploads.log'), [], 'stop_on_failure: the later ordinary action did not run');
  t.same(
    auditLines('failures.log'),
    ['sync-gate: /sync/a.txt failed (gate: test action gate failed)', 'sync-gate: /sync/b.txt failed (gate: test action gate failed)'],
    'the failure action ran for each aborted upload',
  );
});

t.test('execute_before_file_publish: a failing action rejects the upload, no file and no temporary file remain', async (t) => {
  await rule('scan', ['upload'], '/scan/**', [
    { name: 'scanner', relation_options: { execute_before_file_publish: true } },
    { name: 'audit', order: 2 },
  ]);
  const before = await usage();
  const r = await up('/scan/v.bin', 'EICAR-like content');
  t.equal(r.statusCode, 403, r.payload);
  t.same(json(r), { message: 'rejected by event rule "scan": action "scanner" failed', error: 'Forbidden' });
  t.notOk(existsSync(path.join(home, 'scan', 'v.bin')), 'never published');
  t.same(tmpLeft(), [], 'the temporary file is removed');
  t.same(await usage(), before, 'quota counters unchanged');
  await mgr.idle();
  const ran = take();
  t.same(
    ran.map((e) => e.action),
    ['scanner'],
  );
  t.ok(ran[0]!.hasPending, 'the action ran on the pending upload');
  t.same(auditLines('uploads.log'), [], 'the rest of the rule does not run for a rejected upload');
});

t.test('the same rules with succeeding actions: the files are stored and counted', async (t) => {
  await setFail('gate', false);
  await setFail('scanner', false);
  const before = await usage();
  t.equal((await up('/sync/a.txt', 'hello sync')).statusCode, 201);
  t.equal((await upMultipart('/sync', 'b.txt', 'multi')).statusCode, 201);
  t.equal((await up('/scan/v.bin', 'clean')).statusCode, 201);
  t.equal(readFileSync(path.join(home, 'sync', 'a.txt'), 'utf8'), 'hello sync');
  t.equal(readFileSync(path.join(home, 'sync', 'b.txt'), 'utf8'), 'multi');
  t.equal(readFileSync(path.join(home, 'scan', 'v.bin'), 'utf8'), 'clean');
  t.equal((await download('/scan/v.bin')).payload, 'clean');
  t.same(await usage(), { size: before.size + 10 + 5 + 5, files: before.files + 3 });
  t.same(tmpLeft(), []);
  await mgr.idle();
  t.same(
    take()
      .map((e) => `${e.rule}:${e.action}:${e.hasPending}`)
      .sort(),
    ['scan:scanner:true', 'sync-gate:gate:false', 'sync-gate:gate:false'],
  );
  t.same(
    auditLines('uploads.log').sort(),
    ['upload /scan/v.bin 5 by alice', 'upload /sync/a.txt 10 by alice', 'upload /sync/b.txt 5 by alice'],
    'the asynchronous actions ran after',
  );
  t.equal(auditLines('failures.log').length, 2, 'no failure action without a failure');
  await api('DELETE', '/api/v2/eventrules/sync-gate');
  await api('DELETE', '/api/v2/eventrules/scan');
});

t.test('pre-upload, pre-download, pre-delete: sync actions decide whether the operation happens', async (t) => {
  await setFail('gate', true);
  const refused = await ta.inject('POST', '/api/v2/eventrules', {
    token: admin,
    payload: { name: 'pre-async', trigger: 1, conditions: { fs_events: ['pre-upload'] }, actions: [{ name: 'audit' }] },
  });
  t.equal(refused.statusCode, 400);
  t.match(json(refused).message, /fs event "pre-upload" decides whether the operation goes on: the rule needs at least one execute_sync action/);
  // without stop_on_failure: any failing sync action denies a pre-* operation; the other actions still run
  await rule('pre', ['pre-upload', 'pre-download', 'pre-delete'], '/locked/**', [
    { name: 'gate', order: 1, relation_options: { execute_sync: true } },
    { name: 'audit', order: 2 },
  ]);
  mkdirSync(path.join(home, 'locked'), { recursive: true });
  writeFileSync(path.join(home, 'locked', 'kept.txt'), 'old content');
  writeFileSync(path.join(home, 'open.txt'), 'open');
  const before = await usage();

  const u = await up('/locked/new.txt', 'new data');
  t.equal(u.statusCode, 403, u.payload);
  t.same(json(u), { message: 'rejected by event rule "pre": action "gate" failed', error: 'Forbidden' });
  t.notOk(existsSync(path.join(home, 'locked', 'new.txt')), 'denied before anything was written');
  const ow = await up('/locked/kept.txt', 'replacement');
  t.equal(ow.statusCode, 403);
  t.equal(readFileSync(path.join(home, 'locked', 'kept.txt'), 'utf8'), 'old content', 'an overwrite is denied before the old file is touched');
  t.same(await usage(), before, 'quota counters unchanged');
  const d = await download('/locked/kept.txt');
  t.equal(d.statusCode, 403, d.payload);
  t.same(json(d), { message: 'rejected by event rule "pre": action "gate" failed', error: 'Forbidden' });
  const z = await ta.inject('POST', '/api/v2/user/streamzip', { token, payload: ['/locked/kept.txt'] });
  t.equal(z.statusCode, 403, 'zip downloads of a file are denied too');
  const del = await remove('/locked/kept.txt');
  t.equal(del.statusCode, 403, del.payload);
  t.ok(existsSync(path.join(home, 'locked', 'kept.txt')), 'not deleted');
  t.equal((await download('/open.txt')).statusCode, 200, 'paths outside the rule are not concerned');
  t.equal(
    (await ta.inject('HEAD', `/api/v2/user/files?path=${q('/locked/kept.txt')}`, { token })).statusCode,
    200,
    'a HEAD transfers nothing: no pre-download',
  );
  await mgr.idle();
  const ran = take();
  t.same(
    ran.map((e) => `${e.params.Event} ${e.params.VirtualPath} ${e.params.FileSize}`),
    [
      'pre-upload /locked/new.txt 0',
      'pre-upload /locked/kept.txt 11',
      'pre-download /locked/kept.txt 11',
      'pre-download /locked/kept.txt 11',
      'pre-delete /locked/kept.txt 11',
    ],
    'pre events carry the path and the size of the file concerned (0 for a new upload)',
  );
  // asynchronous actions append as they finish, in no promised order (the sync decisions above are in order)
  t.same(
    auditLines('uploads.log')
      .filter((l) => l.startsWith('pre-'))
      .sort(),
    [
      'pre-delete /locked/kept.txt 11 by alice',
      'pre-download /locked/kept.txt 11 by alice',
      'pre-download /locked/kept.txt 11 by alice',
      'pre-upload /locked/kept.txt 11 by alice',
      'pre-upload /locked/new.txt 0 by alice',
    ],
    'without stop_on_failure the asynchronous actions still run',
  );

  // the gate opens: every operation goes through
  await setFail('gate', false);
  t.equal((await up('/locked/new.txt', 'new data')).statusCode, 201);
  t.equal(readFileSync(path.join(home, 'locked', 'new.txt'), 'utf8'), 'new data');
  const ok = await download('/locked/kept.txt');
  t.equal(ok.statusCode, 200);
  t.equal(ok.payload, 'old content');
  const zip = await ta.inject('POST', '/api/v2/user/streamzip', { token, payload: ['/locked/kept.txt'] });
  t.equal(zip.statusCode, 200);
  t.equal(unzip(zip.rawPayload).get('kept.txt')?.toString(), 'old content');
  t.equal((await remove('/locked/kept.txt')).statusCode, 200);
  t.notOk(existsSync(path.join(home, 'locked', 'kept.txt')));
  await mgr.idle();
  t.same(
    take().map((e) => e.params.Event),
    ['pre-upload', 'pre-download', 'pre-download', 'pre-delete'],
  );

  // with stop_on_failure a pre-* failure denies too, and only the failure actions run
  await setFail('gate', true);
  await api('PUT', '/api/v2/eventrules/pre', {
    name: 'pre',
    trigger: 1,
    conditions: { fs_events: ['pre-delete'], options: { fs_paths: [{ pattern: '/locked/**' }] } },
    actions: [
      { name: 'gate', order: 1, relation_options: { execute_sync: true, stop_on_failure: true } },
      { name: 'audit', order: 2 },
      { name: 'audit-failure', order: 3, relation_options: { is_failure_action: true } },
    ],
  });
  const auditBefore = auditLines('uploads.log').length;
  t.equal((await remove('/locked/new.txt')).statusCode, 403);
  t.ok(existsSync(path.join(home, 'locked', 'new.txt')));
  await mgr.idle();
  t.equal(auditLines('uploads.log').length, auditBefore, 'stop_on_failure: the ordinary action did not run');
  t.equal(auditLines('failures.log').at(-1), 'pre: /locked/new.txt failed (gate: test action gate failed)');
  take();
  await api('DELETE', '/api/v2/eventrules/pre');
});

t.test('failure actions run only when another action failed (effect: the audit plugin writes a line)', async (t) => {
  await setFail('gate', false);
  await rule('audited', ['upload'], '/audit/**', [
    { name: 'gate', order: 1 },
    { name: 'audit', order: 2 },
    { name: 'audit-failure', order: 3, relation_options: { is_failure_action: true } },
  ]);
  const failuresBefore = auditLines('failures.log');
  t.equal((await up('/audit/ok.txt', '12345')).statusCode, 201);
  await mgr.idle();
  t.ok(auditLines('uploads.log').includes('upload /audit/ok.txt 5 by alice'), 'the ordinary actions ran');
  t.same(auditLines('failures.log'), failuresBefore, 'nothing failed: the failure action did not run');

  await setFail('gate', true);
  t.equal((await up('/audit/ko.txt', '1234567')).statusCode, 201, 'an asynchronous failure does not affect the upload');
  await mgr.idle();
  t.ok(existsSync(path.join(home, 'audit', 'ko.txt')));
  t.ok(auditLines('uploads.log').includes('upload /audit/ko.txt 7 by alice'), 'no stop_on_failure: the next action still ran');
  t.same(
    auditLines('failures.log'),
    [...failuresBefore, 'audited: /audit/ko.txt failed (gate: test action gate failed)'],
    'the failure action ran once, after the failure',
  );
  take();
  await api('DELETE', '/api/v2/eventrules/audited');
});

t.test('the third-party example plugin (examples/action-audit-log) fires through a real rule', async (t) => {
  const v = await ta.inject('GET', '/api/v2/version', { token: admin });
  t.ok((json(v).features as string[]).includes('ferry-plugin-action-audit-log@1.0.0'), 'loaded from the configuration');
  const bad = await ta.inject('POST', '/api/v2/eventactions', {
    token: admin,
    payload: { name: 'escape', type: 5000, options: { audit_log_config: { file: '../x.log', line: 'l' } } },
  });
  t.equal(bad.statusCode, 400, 'its options schema applies');
  t.match(json(bad).message, /options\.audit_log_config: "file"/);
  const tpl = await ta.inject('POST', '/api/v2/eventactions', {
    token: admin,
    payload: { name: 'bad-tpl', type: 5000, options: { audit_log_config: { file: 'x.log', line: '{{Name}}' } } },
  });
  t.equal(tpl.statusCode, 400, 'its template fields are checked at save time');
  await action('third-party', 5000, {
    audit_log_config: { file: 'third-party.log', line: '{{.Event}}|{{.VirtualPath}}|{{.FileSize}}|{{.Name}}|{{.Protocol}}|{{.ExtName}}' },
  });
  await rule('third', ['upload', 'delete'], '/third/**', [{ name: 'third-party' }]);
  t.equal((await up('/third/report.csv', 'a,b,c\n')).statusCode, 201);
  t.equal((await remove('/third/report.csv')).statusCode, 200);
  t.equal((await up('/elsewhere.txt', 'x')).statusCode, 201);
  await mgr.idle();
  t.same(
    auditLines('third-party.log'),
    ['upload|/third/report.csv|6|alice|HTTP|.csv', 'delete|/third/report.csv|6|alice|HTTP|.csv'],
    'one rendered line per matching operation',
  );
  await api('DELETE', '/api/v2/eventrules/third');
});

t.test('filesystem trigger through HTTP: download, rename, mkdir, rmdir, first-upload and first-download fire their rules only', async (t) => {
  await addUser(ta, { username: 'bob' });
  const bob = await ta.userToken('bob', PASSWORD);
  const as = (method: string, url: string, tk = bob, payload?: string) =>
    ta.inject(method, url, { token: tk, payload, headers: payload === undefined ? {} : { 'content-type': 'application/octet-stream' } });
  await action('audit-ops', 5000, {
    audit_log_config: {
      file: 'ops.log',
      line: '{{.Event}} {{.VirtualPath}}{{if .VirtualTargetPath}} -> {{.VirtualTargetPath}}{{end}} {{.ObjectType}} {{.FileSize}} {{.Status}} by {{.Name}}',
    },
  });
  await action('audit-firsts', 5000, { audit_log_config: { file: 'firsts.log', line: '{{.Event}} {{.VirtualPath}} {{.FileSize}} by {{.Name}}' } });
  await api('POST', '/api/v2/eventrules', {
    name: 'bob-ops',
    trigger: 1,
    conditions: { fs_events: ['download', 'rename', 'mkdir', 'rmdir'], options: { names: [{ pattern: 'bob' }] } },
    actions: [{ name: 'audit-ops' }],
  });
  await api('POST', '/api/v2/eventrules', {
    name: 'bob-firsts',
    trigger: 1,
    conditions: { fs_events: ['first-upload', 'first-download'], options: { names: [{ pattern: 'bob' }] } },
    actions: [{ name: 'audit-firsts' }],
  });

  const ok = async (r: Promise<{ statusCode: number; payload: string }>, code: number, what: string) => {
    const res = await r;
    t.equal(res.statusCode, code, `${what}: ${res.payload}`);
  };
  await ok(as('POST', `/api/v2/user/dirs?path=${q('/d1')}`), 201, 'mkdir');
  await ok(as('POST', `/api/v2/user/files/upload?path=${q('/d1/f.txt')}`, bob, 'hello'), 201, 'first upload');
  await ok(as('POST', `/api/v2/user/files/upload?path=${q('/d1/g.txt')}`, bob, 'hi'), 201, 'second upload');
  await ok(as('GET', `/api/v2/user/files?path=${q('/d1/f.txt')}`), 200, 'first download');
  await ok(as('GET', `/api/v2/user/files?path=${q('/d1/g.txt')}`), 200, 'second download');
  await ok(as('PATCH', `/api/v2/user/files?path=${q('/d1/g.txt')}&target=${q('/d1/h.txt')}`), 200, 'rename file');
  await ok(as('PATCH', `/api/v2/user/dirs?path=${q('/d1')}&target=${q('/d2')}`), 200, 'rename dir');
  await ok(as('DELETE', `/api/v2/user/files?path=${q('/d2/f.txt')}`), 200, 'delete');
  await ok(as('DELETE', `/api/v2/user/files?path=${q('/d2/h.txt')}`), 200, 'delete');
  await ok(as('DELETE', `/api/v2/user/dirs?path=${q('/d2')}`), 200, 'rmdir');
  await ok(as('GET', `/api/v2/user/files?path=${q('/d1/none.txt')}`), 404, 'a failed download');
  // another user's operations do not match the rules' names
  await ok(as('POST', `/api/v2/user/dirs?path=${q('/alice-dir')}`, token), 201, 'mkdir by alice');
  await ok(as('GET', `/api/v2/user/files?path=${q('/open.txt')}`, token), 200, 'download by alice');
  await mgr.idle();
  t.same(
    auditLines('ops.log').sort(),
    [
      'download /d1/f.txt file 5 1 by bob',
      'download /d1/g.txt file 2 1 by bob',
      'mkdir /d1 directory 0 1 by bob',
      'rename /d1 -> /d2 directory 0 1 by bob',
      'rename /d1/g.txt -> /d1/h.txt file 2 1 by bob',
      'rmdir /d2 directory 0 1 by bob',
    ],
    'one line per download, rename, mkdir, rmdir of bob (.ObjectType directory for the renamed directory, file for the renamed file): no upload, delete, nor anything of alice',
  );
  t.same(
    auditLines('firsts.log').sort(),
    ['first-download /d1/f.txt 5 by bob', 'first-upload /d1/f.txt 5 by bob'],
    'first-upload and first-download fire once',
  );
  const counters = await api('GET', '/api/v2/users/bob');
  t.ok(counters.first_upload > 0 && counters.first_download > 0, 'the first transfers are recorded on the user');
  take();
  await api('DELETE', '/api/v2/eventrules/bob-ops');
  await api('DELETE', '/api/v2/eventrules/bob-firsts');
});
