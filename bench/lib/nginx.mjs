// nginx for benchmarks (the Debian package, installed by bench/setup-nginx.sh):
// a configuration text rendered with {{PORT}} (a free loopback port) and
// {{PREFIX}} (its own directory under `scratch`, for pid, logs and temp
// files) plus the caller's own placeholders, run in the foreground.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { benchDir, freePort, waitPort } from './common.mjs';

/**
 * Starts nginx with `conf` (a template); `vars` fills other {{NAME}}
 * placeholders. The process is added to `children`. Resolves to { url, proc }.
 */
export async function startNginx({ conf, scratch, children, vars = {} }) {
  const setup = spawnSync('bash', [path.join(benchDir, 'setup-nginx.sh')], { stdio: 'inherit' });
  if (setup.status !== 0) throw new Error('nginx could not be installed (bench/setup-nginx.sh)');
  const port = await freePort();
  const prefix = path.join(scratch, `nginx-${port}`);
  mkdirSync(prefix, { recursive: true });
  let text = conf.replaceAll('{{PORT}}', String(port)).replaceAll('{{PREFIX}}', prefix);
  for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`{{${k}}}`, String(v));
  const confFile = path.join(prefix, 'nginx.conf');
  writeFileSync(confFile, text);
  const bin = spawnSync('bash', ['-c', 'command -v nginx || echo /usr/sbin/nginx'], { encoding: 'utf8' }).stdout.trim();
  const proc = spawn(bin, ['-c', confFile, '-p', prefix, '-e', path.join(prefix, 'error.log')], { stdio: 'ignore' });
  children.push(proc);
  await waitPort(port);
  return { url: `http://127.0.0.1:${port}`, proc };
}
