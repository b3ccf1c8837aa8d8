import t, { type Test } from 'tap';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TOKENS, type EventManager } from '@ferry/core';
import { captureLogger, createTestApp } from '@ferry/core/testing';
import { actionConformance, runAction, saveActionOptions } from '@ferry/testkit';
import { childEnv, commandActionDef, INHERITED_ENV } from '../src/index.js';

// Real executables written by the test (POSIX shell scripts run without a
// shell by the action: the kernel reads the #! line).
const dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-cmd-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const script = (name: string, body: string): string => {
  const p = path.join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
};
/** Writes each argument NUL-terminated to $OUT and the environment (NUL-separated) to $OUT.env. */
const recordArgs = script('record-args', 'printf "%s\\0" "$@" > "$OUT"\nenv -0 > "$OUT.env"');
/** Writes its first argument to $OUT. */
const writeArg = script('write-arg', 'printf "%s" "$1" > "$OUT"');
const failing = script('failing', 'echo "half done" \necho "boom: the input is not valid" >&2\nexit 3');
/** Starts a grandchild (pid in $PIDS) and waits for it. */
const hang = script('hang', 'sleep 1000 &\necho $! > "$PIDS"\necho $$ >> "$PIDS"\nwait');
/** Leaves a grandchild holding stdout open and exits 0 at once. */
const leaveBehind = script('leave-behind', 'sleep 1000 &\necho $! > "$PIDS"\nexit 0');
const chatty = script('chatty', 'head -c 1048576 /dev/zero | tr "\\0" "x"\nhead -c 300000 /dev/zero | tr "\\0" "e" >&2');
const notListed = script('not-listed', 'exit 0');
const ALLOWED = [recordArgs, writeArg, failing, hang, leaveBehind, chatty, '/bin/true'];

const allowed: { list: readonly string[] } = { list: ALLOWED };
const def = commandActionDef({ allowed: () => allowed.list, outputLimit: 64 * 1024, killGraceMs: 500 });
const out = (name: string) => path.join(dir, name);
const read = (p: string) => readFileSync(p, 'utf8');
const args0 = (p: string) => read(p).split('\0').slice(0, -1);
const env0 = (p: string) =>
  Object.fromEntries(
    read(p)
      .split('\0')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

/** True while a process exists and is not a zombie. */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(read(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
};
const pidsFile = out('pids');
const noneAlive = async (t: Test) => {
  const pids = existsSync(pidsFile) ? read(pidsFile).split('\n').filter(Boolean).map(Number) : [];
  t.ok(pids.length > 0, 'the command recorded its pids');
  for (let i = 0; i < 50 && pids.some(alive); i++) await sleep(50);
  for (const pid of pids) t.notOk(alive(pid), `process ${pid} (command or grandchild) is gone`);
  rmSync(pidsFile, { force: true });
};

await actionConformance(t, {
  name: 'action-command',
  def,
  valid: { cmd: '/bin/true' },
  invalid: [
    { options: { args: ['x'] }, field: 'cmd' },
    { options: { cmd: notListed }, field: 'hook.enabled_action_commands' },
    { options: { cmd: 'true' }, field: 'cmd' },
    { options: { cmd: '/bin/true', timeout: 0 }, field: 'timeout' },
    { options: { cmd: '/bin/true', timeout: 121 }, field: 'timeout' },
    { options: { cmd: '/bin/true', timeout: 1.5 }, field: 'timeout' },
    { options: { cmd: '/bin/true', args: 'a b' }, field: 'args' },
    { options: { cmd: '/bin/true', env_vars: [{ key: '1BAD', value: 'x' }] }, field: 'key' },
    {
      options: {
        cmd: '/bin/true',
        env_vars: [
          { key: 'A', value: '1' },
          { key: 'A', value: '2' },
        ],
      },
      field: 'env_vars',
    },
    // an unknown member (shell) is dropped, never used: refused here for the known one
    { options: { cmd: '/bin/true', shell: true, timeout: 0 }, field: 'timeout' },
  ],
  template: {
    options: (tpl) => ({ cmd: writeArg, args: [tpl], env_vars: [{ key: 'OUT', value: out('tpl') }] }),
    observe: async () => read(out('tpl')),
  },
  failing: { options: { cmd: failing }, reason: /exited with code 3: boom: the input is not valid/ },
  hanging: { options: { cmd: hang, timeout: 1, env_vars: [{ key: 'PIDS', value: pidsFile }] }, within: 4000, message: /timed out after 1 s/ },
  longRunning: { cmd: hang, timeout: 120, env_vars: [{ key: 'PIDS', value: pidsFile }] },
  afterStop: noneAlive,
});

t.test('arguments go to the executable as an array, never through a shell', async (t) => {
  const marker = out('injected');
  const tricky = [`$(touch ${marker})`, `; touch ${marker}`, '`id`', 'two words', '', 'quote \' " \\', '*', '{{ not a template after rendering }}'];
  await runAction(def, {
    cmd: recordArgs,
    args: [...tricky.slice(0, -1), '{{"{{"}} not a template after rendering }}'],
    env_vars: [{ key: 'OUT', value: out('args') }],
  });
  t.same(args0(out('args')), tricky, 'each argument arrives verbatim, empty ones included');
  t.notOk(existsSync(marker), 'nothing was interpreted by a shell');
});

t.test('templated args and env values are rendered from the event', async (t) => {
  await runAction(
    def,
    {
      cmd: recordArgs,
      args: ['{{.VirtualPath}}', '{{.FileSize}}', '--user={{.Name}}'],
      env_vars: [
        { key: 'OUT', value: out('ev') },
        { key: 'FERRY_EVENT', value: '{{.Event}} {{.ObjectName}}' },
      ],
    },
    { event: { virtual_path: '/in/report 1.csv', file_size: 42, username: 'bob' } },
  );
  t.same(args0(out('ev')), ['/in/report 1.csv', '42', '--user=bob']);
  t.equal(env0(out('ev.env')).FERRY_EVENT, 'upload report 1.csv');
});

t.test('the child gets a minimal environment plus the configured variables', async (t) => {
  process.env.FERRY_TEST_SERVER_SECRET = 'must-not-leak';
  t.teardown(() => delete process.env.FERRY_TEST_SERVER_SECRET);
  await runAction(def, {
    cmd: recordArgs,
    env_vars: [
      { key: 'OUT', value: out('env') },
      { key: 'MY_VAR', value: 'a=b c' },
      { key: 'LANG', value: 'C' },
    ],
  });
  const env = env0(out('env.env'));
  t.notOk('FERRY_TEST_SERVER_SECRET' in env, 'server variables are not inherited');
  t.equal(env.MY_VAR, 'a=b c', 'a configured variable');
  t.equal(env.LANG, 'C', 'a configured variable overrides an inherited one');
  t.ok(env.PATH, 'PATH is set');
  const allowedNames = new Set<string>([...INHERITED_ENV, 'OUT', 'MY_VAR', 'PWD', 'SHLVL', '_']);
  // tap's process tracking adds NODE_OPTIONS and _TAPJS_* to every child it sees spawned (not the action)
  const tapAdded = (k: string) => k === 'NODE_OPTIONS' || k.startsWith('_TAPJS_');
  t.same(
    Object.keys(env).filter((k) => !allowedNames.has(k) && !tapAdded(k)),
    [],
    `only ${INHERITED_ENV.join(', ')} and the configured variables (plus what sh itself sets)`,
  );
  t.same(childEnv([], {}), { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' }, 'a default PATH when the server has none');
});

t.test('failures: exit codes, signals, missing executables', async (t) => {
  await t.rejects(runAction(def, { cmd: failing }), { message: `command "${failing}" exited with code 3: boom: the input is not valid` });
  const gone = path.join(dir, 'vanished');
  allowed.list = [...ALLOWED, gone];
  t.teardown(() => (allowed.list = ALLOWED));
  await t.rejects(runAction(def, { cmd: gone }), { message: `cannot run command "${gone}": ENOENT` });
  const selfKill = script('self-kill', 'kill -9 $$');
  allowed.list = [...ALLOWED, selfKill];
  await t.rejects(runAction(def, { cmd: selfKill }), { message: `command "${selfKill}" was killed by SIGKILL` });
});

t.test('the allow list is checked again at run time', async (t) => {
  const stored = { cmd: writeArg, args: ['x'], env_vars: [{ key: 'OUT', value: out('late') }] };
  await t.resolves(saveActionOptions(def, stored), 'saved while listed');
  allowed.list = ALLOWED.filter((c) => c !== writeArg);
  t.teardown(() => (allowed.list = ALLOWED));
  const run = commandActionDef({ allowed: () => allowed.list, outputLimit: 1024, killGraceMs: 100 }).create({
    cmd: writeArg,
    args: ['x'],
    timeout: 5,
    env_vars: [{ key: 'OUT', value: out('late') }],
  });
  const { logger } = captureLogger();
  await t.rejects(
    (await run).execute({ trigger: 6, ruleName: 'r', actionName: 'a', params: {}, render: (s) => s, signal: new AbortController().signal, logger }),
    { message: `command "${writeArg}" is not allowed: it is not listed in hook.enabled_action_commands (SERVICE_HOOK__ENABLED_ACTION_COMMANDS)` },
  );
  t.notOk(existsSync(out('late')), 'not run');
});

t.test('a grandchild left running after a successful exit does not hold the action and is killed with the group', async (t) => {
  const started = Date.now();
  await runAction(def, { cmd: leaveBehind, env_vars: [{ key: 'PIDS', value: pidsFile }] });
  t.ok(Date.now() - started < 3000, `done in ${Date.now() - started} ms although the grandchild holds stdout`);
  await noneAlive(t);
});

t.test('stdout and stderr are logged, bounded', async (t) => {
  const { logger, lines } = captureLogger();
  await runAction(def, { cmd: chatty }, { logger });
  const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'command action finished');
  t.ok(line, 'a log line for the run');
  t.equal((line!.stdout as string).length, 64 * 1024, 'stdout kept up to output_limit');
  t.equal(line!.stdout_bytes, 1048576, 'the full size is counted');
  t.equal((line!.stderr as string).length, 64 * 1024);
  t.equal(line!.stderr_bytes, 300000);
  t.equal(line!.truncated, true);
  t.equal(line!.exit_code, 0);
});

// ---- through the server: POST /api/v2/eventactions and a rule that runs the command on upload ----
t.test('through HTTP: save-time validation and a rule running the command', async (t) => {
  const ta = await createTestApp({
    plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/action-command', config: { output_limit: 4096 } }],
    config: { hook: { enabled_action_commands: [recordArgs, hang] }, event_manager: { rules_cache_ttl: 0 } },
  });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  const post = (url: string, payload: unknown) => ta.inject('POST', url, { token, payload });

  const bad = await post('/api/v2/eventactions', { name: 'nope', type: 2, options: { cmd_config: { cmd: notListed } } });
  t.equal(bad.statusCode, 400);
  t.equal(
    JSON.parse(bad.payload).message,
    `options.cmd_config: "cmd" "${notListed}" is not allowed: add it to hook.enabled_action_commands (SERVICE_HOOK__ENABLED_ACTION_COMMANDS)`,
  );
  const badTimeout = await post('/api/v2/eventactions', { name: 'slow', type: 2, options: { cmd_config: { cmd: recordArgs, timeout: 600 } } });
  t.equal(badTimeout.statusCode, 400);
  t.equal(JSON.parse(badTimeout.payload).message, 'options.cmd_config: "timeout" must be between 1 and 120 seconds');
  const badTpl = await post('/api/v2/eventactions', { name: 'tpl', type: 2, options: { cmd_config: { cmd: recordArgs, args: ['{{.Name'] } } });
  t.equal(badTpl.statusCode, 400);
  t.match(JSON.parse(badTpl.payload).message, /^options\.cmd_config\.args\[0\]: invalid template/);

  const outFile = out('http-run');
  const ok = await post('/api/v2/eventactions', {
    name: 'record',
    type: 2,
    options: {
      cmd_config: { cmd: recordArgs, args: ['{{.Event}}', '{{.VirtualPath}}', '{{.FileSize}}'], timeout: 10, env_vars: [{ key: 'OUT', value: outFile }] },
    },
  });
  t.equal(ok.statusCode, 201, ok.payload);
  const got = await ta.inject('GET', '/api/v2/eventactions/record', { token });
  t.same(JSON.parse(got.payload).options, {
    cmd_config: { cmd: recordArgs, args: ['{{.Event}}', '{{.VirtualPath}}', '{{.FileSize}}'], timeout: 10, env_vars: [{ key: 'OUT', value: outFile }] },
  });
  const dflt = await post('/api/v2/eventactions', { name: 'defaults', type: 2, options: { cmd_config: { cmd: recordArgs } } });
  t.same(JSON.parse(dflt.payload).options, { cmd_config: { cmd: recordArgs, args: [], timeout: 30, env_vars: [] } }, 'defaults stored');

  const rule = await post('/api/v2/eventrules', {
    name: 'on-upload',
    trigger: 1,
    conditions: { fs_events: ['upload'], options: { fs_paths: [{ pattern: '/in/*.csv' }] } },
    actions: [{ name: 'record', order: 1, relation_options: { execute_sync: true } }],
  });
  t.equal(rule.statusCode, 201, rule.payload);
  const home = path.join(ta.dataDir, 'alice');
  mkdirSync(home, { recursive: true });
  const user = await post('/api/v2/users', { username: 'alice', password: 'alice-password-1', status: 1, permissions: { '/': ['*'] }, home_dir: home });
  t.equal(user.statusCode, 201, user.payload);
  const utok = await ta.userToken('alice', 'alice-password-1');
  const up = await ta.inject('POST', `/api/v2/user/files/upload?path=${encodeURIComponent('/in/data 1.csv')}&mkdir_parents=true`, {
    token: utok,
    payload: 'a,b\n1,2\n',
    headers: { 'content-type': 'application/octet-stream' },
  });
  t.ok(up.statusCode < 300, `upload ${up.statusCode} ${up.payload}`);
  t.same(args0(outFile), ['upload', '/in/data 1.csv', '8'], 'the command ran with the rendered arguments before the upload answered');

  // an on-demand rule whose command times out: the run is recorded as failed
  const slow = await post('/api/v2/eventactions', {
    name: 'hang',
    type: 2,
    options: { cmd_config: { cmd: hang, timeout: 1, env_vars: [{ key: 'PIDS', value: pidsFile }] } },
  });
  t.equal(slow.statusCode, 201, slow.payload);
  t.equal((await post('/api/v2/eventrules', { name: 'manual', trigger: 6, actions: [{ name: 'hang', order: 1 }] })).statusCode, 201);
  const mgr = ta.app.container.resolve<EventManager>(TOKENS.EventManager);
  const execs: { action: string; ok: boolean; error?: string }[] = [];
  const off = mgr.onExecution((e) => execs.push(e));
  t.teardown(off);
  t.equal((await post('/api/v2/eventrules/run/manual', {})).statusCode, 202);
  await mgr.idle();
  t.match(execs, [{ action: 'hang', ok: false, error: `command "${hang}" timed out after 1 s: its process group was killed` }]);
  await noneAlive(t);
});
