import t from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TOKENS, type EventManager } from '@ferry/core';
import { captureLogger, createTestApp } from '@ferry/core/testing';
import { cIcap, cIcapMissing, deadPort, EICAR, EICAR_THREAT } from './helpers/c-icap.js';
import { startTinyIcapServer } from './helpers/tiny-icap-server.js';

// The action inside a real app: rules on uploads through the HTTP file API
// (run after the upload, or before it is published), the c-icap test
// server's avscan / echo / dlp services, and, for failures, a port where
// nothing listens and the tiny ICAP server's silent service.
const missing = await cIcapMissing();
if (missing) {
  t.plan(0, missing);
  process.exit(0);
}

const cap = captureLogger();
const ta = await createTestApp({
  plugins: [
    { name: '@ferry/fs-local' },
    { name: '@ferry/action-icap' },
    { name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app: 'icap' } },
  ],
  config: { event_manager: { rules_cache_ttl: 0 } },
  logger: cap.logger,
});
t.teardown(() => ta.close());
const tiny = await startTinyIcapServer();
t.teardown(() => tiny.close());
const mgr = ta.app.container.resolve<EventManager>(TOKENS.EventManager);
const admin = await ta.adminToken();
const quarantine = path.join(ta.dataDir, 'icap-quarantine');

async function api(method: string, url: string, payload?: unknown) {
  const r = await ta.inject(method, url, { token: admin, payload });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.payload}`);
  return r.payload ? JSON.parse(r.payload) : undefined;
}
const home = path.join(ta.dataDir, 'homes', 'alice');
mkdirSync(home, { recursive: true });
await api('POST', '/api/v2/users', { username: 'alice', password: 'alice-password-1', status: 1, home_dir: home, permissions: { '/': ['*'] } });
const token = await ta.userToken('alice', 'alice-password-1');
const q = encodeURIComponent;
const upload = (p: string, body: Buffer | string) =>
  ta.inject('POST', `/api/v2/user/files/upload?path=${q(p)}&mkdir_parents=true`, {
    token,
    payload: body,
    headers: { 'content-type': 'application/octet-stream' },
  });

const usage = async () => {
  const u = await api('GET', '/api/v2/users/alice');
  return { size: u.used_quota_size as number, files: u.used_quota_files as number };
};

type Entry = { app: string; rule: string; options: { message: string } };
const LOG = ((globalThis as any).__ferryActionLog ??= []) as Entry[];
const reports = (rule: string) => LOG.filter((e) => e.app === 'icap' && e.rule === rule).map((e) => e.options.message);
for (const name of ['report', 'report-failure']) {
  await api('POST', '/api/v2/eventactions', {
    name,
    type: 101,
    options: { test_config: { message: '{{.IcapOutcome}}|{{.IcapThreat}}|{{range .IcapScans}}{{.Disposition}} {{.QuarantineFile}}{{end}}' } },
  });
}

let n = 0;
/** An ICAP action and an upload rule on /<dir>/** running it, then the report action (as a failure action too). */
async function setup(dir: string, icap: Record<string, unknown>, relation: Record<string, boolean> = {}) {
  const name = `icap-${++n}`;
  await api('POST', '/api/v2/eventactions', { name, type: 17, options: { icap_config: { paths: ['{{.VirtualPath}}'], timeout: 5, ...icap } } });
  await api('POST', '/api/v2/eventrules', {
    name: dir,
    status: 1,
    trigger: 1,
    conditions: { fs_events: ['upload'], options: { fs_paths: [{ pattern: `/${dir}/**` }] } },
    actions: [
      { name, order: 1, relation_options: relation },
      { name: 'report', order: 2 },
      { name: 'report-failure', order: 3, relation_options: { is_failure_action: true } },
    ],
  });
  return name;
}
const quarantined = () => (existsSync(path.join(quarantine, 'alice')) ? readdirSync(path.join(quarantine, 'alice')).filter((f) => !f.endsWith('.json')) : []);

t.test('save time: clear 400s for bad endpoints and options', async (t) => {
  const bad = async (options: Record<string, unknown>, msg: RegExp) => {
    const r = await ta.inject('POST', '/api/v2/eventactions', { token: admin, payload: { name: `bad-${++n}`, type: 17, options: { icap_config: options } } });
    t.equal(r.statusCode, 400, r.payload);
    t.match(JSON.parse(r.payload).message, msg);
  };
  const ok = { endpoint: cIcap('avscan'), paths: ['{{.VirtualPath}}'] };
  await bad({ ...ok, endpoint: 'http://127.0.0.1/avscan' }, /endpoint.*must be an icap:\/\/ URL/);
  await bad({ ...ok, endpoint: 'icaps://127.0.0.1/avscan' }, /icaps:\/\/.*not supported/);
  await bad({ ...ok, endpoint: 'icap://127.0.0.1:1344' }, /must name the ICAP service/);
  await bad({ ...ok, endpoint: undefined }, /endpoint.*required/);
  await bad({ ...ok, method: 'OPTIONS' }, /method.*RESPMOD or REQMOD/);
  await bad({ ...ok, block_action: 4 }, /block_action.*1 \(ignore\), 2 \(delete\), 3 \(quarantine\)/);
  await bad({ ...ok, adapt_action: 5 }, /adapt_action.*4 \(overwrite/);
  await bad({ ...ok, failure_policy: 0 }, /failure_policy/);
  await bad({ ...ok, timeout: 0 }, /timeout.*seconds/);
  await bad({ ...ok, paths: [] }, /paths.*at least one file/);
  await bad({ ...ok, paths: ['/a/../../etc'] }, /not a valid virtual path/);
  await bad({ ...ok, paths: ['{{.VirtualPath'] }, /paths/);
  const r = await ta.inject('POST', '/api/v2/eventactions', {
    token: admin,
    payload: { name: 'good', type: 17, options: { icap_config: { ...ok, method: 'reqmod' } } },
  });
  t.equal(r.statusCode, 201, r.payload);
  t.match(JSON.parse(r.payload).options.icap_config, { method: 'REQMOD', timeout: 60, block_action: 1, adapt_action: 1, failure_policy: 1 });
});

t.test('a clean file passes untouched', async (t) => {
  await setup('clean', { endpoint: cIcap('avscan'), block_action: 2 });
  t.equal((await upload('/clean/a.txt', 'just text')).statusCode, 201);
  await mgr.idle();
  t.equal(readFileSync(path.join(home, 'clean/a.txt'), 'utf8'), 'just text');
  t.same(reports('clean'), ['clean||kept '], 'outputs: clean, nothing done');
  t.ok(
    cap.lines.some((l) => l.includes('icap scan: clean') && l.includes('/clean/a.txt')),
    'logged',
  );
});

for (const [block, expect] of [
  [1, 'kept'],
  [2, 'deleted'],
  [3, 'quarantined'],
] as const) {
  t.test(`EICAR is blocked; block_action ${block}: ${expect}`, async (t) => {
    const dir = `block${block}`;
    await setup(dir, { endpoint: cIcap('avscan'), block_action: block });
    const before = quarantined().length;
    const used = await usage();
    t.equal((await upload(`/${dir}/eicar.com`, EICAR)).statusCode, 201, 'stored, then scanned');
    await mgr.idle();
    t.equal(existsSync(path.join(home, dir, 'eicar.com')), block === 1, `file ${expect}`);
    t.same(await usage(), block === 1 ? { size: used.size + 68, files: used.files + 1 } : used, 'the storage quota follows');
    const [msg] = reports(dir);
    t.match(msg, new RegExp(`^blocked\\|${EICAR_THREAT.replace(/\./g, '\\.')}\\|${expect}`), 'the failure action sees the outcome and threat');
    t.ok(
      cap.lines.some((l) => l.includes('icap scan: blocked') && l.includes(EICAR_THREAT)),
      'logged with the threat',
    );
    if (block === 3) {
      const files = quarantined();
      t.equal(files.length, before + 1);
      const file = files.find((f) => f.endsWith('-eicar.com'))!;
      t.same(readFileSync(path.join(quarantine, 'alice', file)), EICAR, 'quarantined byte for byte');
      const rec = JSON.parse(readFileSync(path.join(quarantine, 'alice', `${file}.json`), 'utf8'));
      t.match(rec, { username: 'alice', path: `/${dir}/eicar.com`, outcome: 'blocked', threat: EICAR_THREAT, size: 68 });
      t.match(msg, new RegExp(`alice/${file.replace(/\./g, '\\.')}$`));
    } else t.equal(quarantined().length, before);
  });
}

t.test('adaptation (c-icap dlp): adapt_action overwrite, delete, quarantine, ignore', async (t) => {
  const secret = 'account SECRET-424242 in here\n';
  for (const [adapt, disp] of [
    [4, 'overwritten'],
    [2, 'deleted'],
    [3, 'quarantined'],
    [1, 'kept'],
  ] as const) {
    const dir = `adapt${adapt}`;
    await setup(dir, { endpoint: cIcap('dlp'), adapt_action: adapt });
    await upload(`/${dir}/memo.txt`, secret);
    await mgr.idle();
    t.match(reports(dir)[0], new RegExp(`^adapted\\|\\|${disp}`), `${adapt}: ${disp}`);
    const file = path.join(home, dir, 'memo.txt');
    if (adapt === 4) t.equal(readFileSync(file, 'utf8'), 'account [REDACTED] in here\n', 'the adapted content replaced the file');
    else if (adapt === 1) t.equal(readFileSync(file, 'utf8'), secret);
    else t.notOk(existsSync(file));
  }
  const left = readdirSync(path.join(quarantine, '.spool'));
  t.same(left, [], 'no adapted content left in the spool');
});

t.test('echo: a message sent back unchanged is clean; REQMOD works too', async (t) => {
  await setup('echo', { endpoint: cIcap('echo'), adapt_action: 2, method: 'REQMOD' });
  const big = Buffer.alloc(300_000, 'z');
  await upload('/echo/a.bin', big);
  await upload('/echo/b.txt', 'tiny');
  await mgr.idle();
  t.same(reports('echo'), ['clean||kept ', 'clean||kept ']);
  t.equal(readFileSync(path.join(home, 'echo/a.bin')).length, big.length);
});

t.test('a stopped service: failure_policy ignore, delete, quarantine', async (t) => {
  const port = await deadPort();
  for (const [policy, disp, fails] of [
    [1, 'kept', false],
    [2, 'deleted', true],
    [3, 'quarantined', true],
  ] as const) {
    const dir = `fail${policy}`;
    await setup(dir, { endpoint: `icap://127.0.0.1:${port}/avscan`, failure_policy: policy });
    await upload(`/${dir}/f.txt`, 'data');
    await mgr.idle();
    const msgs = reports(dir);
    t.equal(msgs.length, fails ? 2 : 1, fails ? 'the action failed: the failure action ran too' : 'ignored: the action succeeded');
    t.match(msgs[0], new RegExp(`^failed\\|\\|${disp}`));
    t.equal(existsSync(path.join(home, dir, 'f.txt')), policy === 1);
  }
  t.ok(
    cap.lines.some((l) => l.includes('icap scan: failed') && l.includes('ECONNREFUSED')),
    'the failure is logged',
  );
});

t.test('the timeout: a service that never answers', async (t) => {
  await setup('slow', { endpoint: `icap://127.0.0.1:${tiny.port}/silent`, timeout: 1, failure_policy: 3 });
  const t0 = Date.now();
  await upload('/slow/s.txt', 'data');
  await mgr.idle();
  t.ok(Date.now() - t0 < 4000, 'given up after about the timeout');
  t.match(reports('slow')[0], /^failed\|\|quarantined/);
  t.ok(cap.lines.some((l) => l.includes('did not answer within 1 s')));
});

t.test('before publish: a blocked upload is refused and never visible; fail-open with failure_policy ignore', async (t) => {
  await setup('gate', { endpoint: cIcap('avscan'), block_action: 3 }, { execute_before_file_publish: true });
  const r = await upload('/gate/eicar.com', EICAR);
  t.equal(r.statusCode, 403, r.payload);
  t.notOk(existsSync(path.join(home, 'gate/eicar.com')), 'never published');
  await mgr.idle();
  t.ok(
    quarantined().some((f) => f.endsWith('-eicar.com')),
    'quarantined from the pending upload',
  );
  t.match(reports('gate'), [/^blocked\|Eicar.*\|rejected alice\//], 'the failure action ran with the outcome');
  t.equal((await upload('/gate/ok.txt', 'fine')).statusCode, 201);
  t.equal(readFileSync(path.join(home, 'gate/ok.txt'), 'utf8'), 'fine');

  await setup('gate1', { endpoint: cIcap('avscan'), block_action: 1 }, { execute_before_file_publish: true });
  t.equal((await upload('/gate1/eicar.com', EICAR)).statusCode, 403, 'block_action ignore: refused all the same before publish');
  t.notOk(existsSync(path.join(home, 'gate1/eicar.com')));
  await mgr.idle();
  t.match(reports('gate1'), [/^blocked\|Eicar.*\|rejected $/], 'reported as rejected, nothing quarantined');

  const port = await deadPort();
  await setup('open', { endpoint: `icap://127.0.0.1:${port}/x`, failure_policy: 1 }, { execute_before_file_publish: true });
  t.equal((await upload('/open/x.txt', 'unscanned')).statusCode, 201, 'the service is down: the upload goes through');
  await setup('closed', { endpoint: `icap://127.0.0.1:${port}/x`, failure_policy: 2 }, { execute_before_file_publish: true });
  t.equal((await upload('/closed/x.txt', 'unscanned')).statusCode, 403, 'failure_policy delete refuses it');
  await setup('redact', { endpoint: cIcap('dlp'), adapt_action: 4 }, { execute_before_file_publish: true });
  t.equal((await upload('/redact/m.txt', 'SECRET-1')).statusCode, 403, 'adapted content cannot replace a pending upload: refused');
  await mgr.idle();
});

t.test('paths[] names other files of the user', async (t) => {
  mkdirSync(path.join(home, 'other'), { recursive: true });
  writeFileSync(path.join(home, 'other/virus.com'), EICAR);
  await setup('trigger', { endpoint: cIcap('avscan'), block_action: 2, paths: ['/other/virus.com', '/other/missing.txt', '{{.VirtualPath}}'] });
  await upload('/trigger/t.txt', 'clean');
  await mgr.idle();
  t.notOk(existsSync(path.join(home, 'other/virus.com')), 'the named file was scanned and deleted');
  t.match(reports('trigger')[0], /^blocked\|Eicar/);
  t.ok(
    cap.lines.some((l) => l.includes('/other/missing.txt') && l.includes('icap scan: failed')),
    'a missing file is a failure of that path',
  );
});
