/**
 * `ferry serve` in a terminal prints readable lines and a banner with every
 * listening address and the generated admin password; through a pipe it
 * prints JSON lines as before. Both name the address bound (127.0.0.1),
 * not the host name. The terminal's format is asked for with
 * FERRY_LOG_FORMAT=pretty (what a TTY on stdout selects): a pseudo-TTY from
 * script(1) gave no output to a child of node on this machine.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI =
  process.env.FERRY_TEST_USE_DIST === '1'
    ? ['core/dist/src/cli.js']
    : ['--conditions=ferry-src', '--no-warnings', '--import=@tapjs/typescript/import', 'core/src/cli.ts'];

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('SERVICE_') && !k.startsWith('TAP') && k !== 'FERRY_LOG_FORMAT' && k !== 'NO_COLOR') out[k] = v;
  return { ...out, ...extra };
}

function config(dir: string): string {
  const file = path.join(dir, 'ferry.yaml');
  writeFileSync(file, `common:\n  data_dir: ${path.join(dir, 'data')}\nhttpd:\n  bindings:\n    - port: 0\nplugins: []\n`);
  return file;
}

/** Runs `command` (argv) until `done(output)` holds, then stops it. */
function runUntil(command: string[], done: (out: string) => boolean, extraEnv: Record<string, string> = {}): Promise<string> {
  const p = spawn(command[0]!, command.slice(1), { cwd: root, env: env(extraEnv) });
  let out = '';
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!done(out)) return;
      p.stdout.off('data', onData);
      p.kill('SIGTERM');
    };
    const onData = (d: Buffer) => {
      out += d;
      check();
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', (d) => (out += d));
    p.on('close', () => (done(out) ? resolve(out) : reject(new Error(`exited before it was done: ${out}`))));
  });
}

t.test('in a terminal: readable lines, then a banner with the bound address and the generated password', async (t) => {
  const dir = t.testdir({});
  const command = [process.execPath, ...CLI, 'serve', '--config', config(dir)];
  const out = await runUntil(command, (o) => /Ferry is ready[\s\S]*first admin.*\n/.test(o) || /"msg":"listening"/.test(o), {
    FERRY_LOG_FORMAT: 'pretty',
  });
  t.notMatch(out, /^\{"level"/m, 'no JSON line');
  t.match(out, /^\d\d:\d\d:\d\d WARN {2}created the first admin with a generated password/m);
  const listening = /^\d\d:\d\d:\d\d INFO {2}listening on (http:\/\/127\.0\.0\.1:(\d+)) \(REST API\)$/m.exec(out);
  t.ok(listening, 'the listening line names the bound address');
  t.notMatch(out, new RegExp(`http://${os.hostname()}:`), 'not the host name');
  const banner = out.slice(out.indexOf('Ferry is ready'));
  t.match(banner, new RegExp(`REST API {5}${listening?.[1]?.replace(/\./g, '\\.')}\\n`));
  const password = /first admin {2}admin, password (\S+) \(generated: shown only this once, change it now\)/.exec(banner)?.[1];
  t.ok(password && password.length >= 16, 'the generated password is in the banner');
  t.match(out, new RegExp(`generated_password=${password}`), 'the same as on the log line');
});

t.test('through a pipe: JSON lines as before, naming the bound address', async (t) => {
  const dir = t.testdir({});
  const out = await runUntil([process.execPath, ...CLI, 'serve', '--config', config(dir)], (o) => /"msg":"listening"/.test(o));
  const lines = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const listening = lines.find((l) => l.msg === 'listening');
  t.match(listening, { uri: /^http:\/\/127\.0\.0\.1:\d+$/, serves: 'REST API', service: 'ferry' });
  t.ok(
    lines.some((l) => typeof l.generated_password === 'string'),
    'the generated password is on its JSON line',
  );
  t.notMatch(out, /Ferry is ready/, 'no banner');
});
