import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
// CI builds every package before the suite (FERRY_TEST_USE_DIST=1): run the compiled CLI
// then; otherwise compile the sources on the fly through tap's TypeScript loader.
const CLI =
  process.env.FERRY_TEST_USE_DIST === '1'
    ? ['core/dist/src/cli.js']
    : ['--conditions=ferry-src', '--no-warnings', '--import=@tapjs/typescript/import', 'core/src/cli.ts'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SERVICE_') && !k.startsWith('TAP')) env[k] = v;
  return { ...env, ...extra };
}

function run(args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [...CLI, ...args], { cwd: root, env: cleanEnv(extraEnv) });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `ferry serve`, waits for the listening line, returns the base URL and the process. */
function serve(args: string[], extraEnv: Record<string, string> = {}) {
  const p = spawn(process.execPath, [...CLI, 'serve', ...args], { cwd: root, env: cleanEnv(extraEnv) });
  let out = '';
  let err = '';
  p.stderr.on('data', (d) => (err += d));
  const ready = new Promise<string>((resolve, reject) => {
    p.stdout.on('data', (d) => {
      out += d;
      const m = /"uri":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/.exec(out);
      if (m) resolve(m[1]!);
    });
    p.on('close', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  const stop = () =>
    new Promise<number | null>((resolve) => {
      if (p.exitCode !== null) return resolve(p.exitCode);
      p.on('close', (code) => resolve(code));
      p.kill('SIGTERM');
    });
  return { ready, stop, output: () => out + err };
}

function writeConfig(dir: string, extra = ''): string {
  const file = path.join(dir, 'ferry.yaml');
  writeFileSync(file, `common:\n  data_dir: data\nhttpd:\n  bindings:\n    - port: 0\nplugins: []\n${extra}`);
  return file;
}

t.test('--version and usage', async (t) => {
  const v = await run(['--version']);
  t.equal(v.code, 0);
  t.match(v.stdout, /^ferry 0\.1\.0 \(commit \S+, built \S+\)\n$/);
  const u = await run(['frobnicate']);
  t.equal(u.code, 2);
  t.match(u.stderr, /unknown command "frobnicate"/);
  const none = await run([]);
  t.equal(none.code, 2);
  t.match(none.stdout, /usage: ferry/);
});

t.test('a bad configuration value exits non-zero naming the key', async (t) => {
  const dir = t.testdir({});
  const r = await run(['serve', '--config', writeConfig(dir)], { SERVICE_HTTPD__BINDINGS__0__PORT: 'eighty' });
  t.equal(r.code, 78);
  t.match(r.stderr, /httpd\.bindings\.0\.port/);
  const r2 = await run(['initprovider', '--config', path.join(dir, 'missing.yaml')]);
  t.not(r2.code, 0);
  t.match(r2.stderr, /cannot read config file/);
});

t.test('initprovider creates and migrates the database', async (t) => {
  const dir = t.testdir({});
  const r = await run(['initprovider', '--config', writeConfig(dir)]);
  t.equal(r.code, 0, r.stderr);
  t.ok(existsSync(path.join(dir, 'data', 'ferry.db')));
  t.match(r.stdout, /database initialised/);
  const again = await run(['initprovider', '--config', writeConfig(dir)]);
  t.match(again.stdout, /database already up to date/);
});

t.test('serve: first admin with a generated password printed once, healthz, token, clean shutdown', async (t) => {
  const dir = t.testdir({});
  const cfg = writeConfig(dir);
  const s = serve(['--config', cfg]);
  const base = await s.ready;
  const m = /"username":"admin","generated_password":"([^"]+)"/.exec(s.output());
  t.ok(m, 'generated password logged');
  const h = await fetch(`${base}/healthz`);
  t.equal(h.status, 200);
  t.equal(h.headers.get('content-type')?.split(';')[0], 'text/plain');
  t.equal(await h.text(), 'ok');
  const tok = await fetch(`${base}/api/v2/token`, { headers: { authorization: 'Basic ' + Buffer.from(`admin:${m![1]}`).toString('base64') } });
  t.equal(tok.status, 200);
  t.equal(await s.stop(), 0);

  const s2 = serve(['--config', cfg]);
  await s2.ready;
  t.notMatch(s2.output(), /generated_password/, 'printed only on the first run');
  await s2.stop();
});

t.test('serve: credentials, tokens and keys never reach the log', async (t) => {
  const dir = t.testdir({});
  const s = serve(['--config', writeConfig(dir, 'log:\n  level: debug\n')], {
    SERVICE_DEFAULT_ADMIN_USERNAME: 'boss',
    SERVICE_DEFAULT_ADMIN_PASSWORD: 'Sup3r-Secret-Pw',
  });
  const base = await s.ready;
  const basic = 'Basic ' + Buffer.from('boss:Sup3r-Secret-Pw').toString('base64');
  const tok = (await (await fetch(`${base}/api/v2/token`, { headers: { authorization: basic } })).json()) as { access_token: string };
  await fetch(`${base}/api/v2/token`, { headers: { authorization: 'Basic ' + Buffer.from('boss:Wrong-Guess-Pw').toString('base64') } });
  const headers = { authorization: `Bearer ${tok.access_token}`, 'content-type': 'application/json' };
  await fetch(`${base}/api/v2/admin/profile`, { method: 'PUT', headers, body: JSON.stringify({ allow_api_key_auth: true }) });
  const k = (await (
    await fetch(`${base}/api/v2/apikeys`, { method: 'POST', headers, body: JSON.stringify({ name: 'k', scope: 1, admin: 'boss' }) })
  ).json()) as { key: string };
  await fetch(`${base}/api/v2/admins`, { headers: { 'x-service-api-key': k.key } });
  await fetch(`${base}/api/v2/admins`, { method: 'POST', headers, body: JSON.stringify({ username: 'x', password: 'Another-Secret-9', permissions: ['*'] }) });
  await fetch(`${base}/api/v2/admins?limit=9999`, { headers });
  await s.stop();
  const log = s.output();
  t.match(log, /"msg":"request"/, 'requests are logged');
  t.match(log, /"reqId":/, 'with a request id');
  for (const secret of ['Sup3r-Secret-Pw', 'Wrong-Guess-Pw', tok.access_token, k.key, k.key.split('.')[1]!, 'Another-Secret-9']) {
    t.notOk(log.includes(secret), `log does not contain ${secret.slice(0, 6)}...`);
  }
});

t.test('serve: sets V8 heap growth from common.heap_growing_percent', async (t) => {
  const dir = t.testdir({});
  const logged = /"flag":"--heap-growing-percent=(\d+)"/;
  const s = serve(['--config', writeConfig(dir, 'log:\n  level: debug\n')]);
  await s.ready;
  await s.stop();
  t.equal(logged.exec(s.output())?.[1], '100', 'the default');
  const off = serve(['--config', writeConfig(dir, 'log:\n  level: debug\n')], { SERVICE_COMMON__HEAP_GROWING_PERCENT: '0' });
  await off.ready;
  await off.stop();
  t.notMatch(off.output(), logged, '0: V8 decides');
});

t.test('serve: a plugin that cannot load stops the start naming it', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'ferry.yaml');
  writeFileSync(file, `common:\n  data_dir: data\nhttpd:\n  bindings:\n    - port: 0\nplugins:\n  - name: ferry-plugin-that-is-not-installed\n`);
  const r = await run(['serve', '--config', file]);
  t.equal(r.code, 1);
  t.match(r.stderr, /plugin ferry-plugin-that-is-not-installed: package is not installed/);
});
