import t from 'tap';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesystemOfEachProvider, userOn } from '../helpers/provider-options.js';

// A fresh `ferry serve` with the shipped configuration (config/default.yaml,
// no --config file: only where to keep its data, its port and the first
// admin come from the environment) creates users on every storage provider
// 0-6, without any edit of the plugin list.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
// the compiled CLI when the suite runs on the build (CI), else the sources through tap's TypeScript loader
const CLI =
  process.env.FERRY_TEST_USE_DIST === '1'
    ? ['core/dist/src/cli.js']
    : ['--conditions=ferry-src', '--no-warnings', '--import=@tapjs/typescript/import', 'core/src/cli.ts'];

t.test('a fresh start on the shipped configuration creates users on providers 0-6', async (t) => {
  const dir = t.testdir({});
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SERVICE_') && !k.startsWith('TAP')) env[k] = v;
  const p = spawn(process.execPath, [...CLI, 'serve'], {
    cwd: root,
    env: {
      ...env,
      SERVICE_COMMON__DATA_DIR: path.join(dir, 'data'),
      SERVICE_HTTPD__BINDINGS__0__PORT: '0',
      SERVICE_DEFAULT_ADMIN_USERNAME: 'admin',
      SERVICE_DEFAULT_ADMIN_PASSWORD: 'Fresh-Start-Pw-1',
    },
  });
  let out = '';
  p.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => p.on('close', resolve));
  t.teardown(async () => {
    if (p.exitCode === null) p.kill('SIGTERM');
    await exited;
  });
  const base = await new Promise<string>((resolve, reject) => {
    p.stdout.on('data', (d) => {
      out += d;
      const m = /"uri":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`ferry exited ${code}: ${out}`)));
  });

  const tok = await fetch(`${base}/api/v2/token`, { headers: { authorization: 'Basic ' + Buffer.from('admin:Fresh-Start-Pw-1').toString('base64') } });
  t.equal(tok.status, 200, 'the first admin gets a token');
  const headers = { authorization: `Bearer ${((await tok.json()) as { access_token: string }).access_token}`, 'content-type': 'application/json' };
  for (const [kind, filesystem] of filesystemOfEachProvider()) {
    const body = userOn(kind, filesystem, path.join(dir, 'homes'));
    const r = await fetch(`${base}/api/v2/users`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await r.text();
    t.equal(r.status, 201, `a user on provider ${String(filesystem.provider)} (${kind}) is created${r.status === 201 ? '' : `: ${text}`}`);
    const back = await fetch(`${base}/api/v2/users/${String(body.username)}`, { headers });
    t.match(await back.json(), { filesystem: { provider: filesystem.provider } }, `stored on provider ${String(filesystem.provider)}`);
  }
  p.kill('SIGTERM');
  t.equal(await exited, 0, 'stops cleanly');
});
