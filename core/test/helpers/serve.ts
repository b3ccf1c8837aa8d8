import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
// the compiled CLI when the suite runs on the build (CI), else the sources through tap's TypeScript loader
const CLI =
  process.env.FERRY_TEST_USE_DIST === '1'
    ? ['core/dist/src/cli.js']
    : ['--conditions=ferry-src', '--no-warnings', '--import=@tapjs/typescript/import', 'core/src/cli.ts'];

export interface ServeProcess {
  /** The first binding's base URL, e.g. http://127.0.0.1:40123. */
  base: string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `ferry serve` on the shipped configuration (config/default.yaml, no
 * --config file) from the repository root, with `env` added to this
 * process's environment minus its SERVICE_* and TAP* variables; resolves once
 * it logs that it listens. `nodeArgs` go before the CLI (e.g. --import). The
 * test's teardown stops it if the test did not.
 */
export async function startServe(t: Test, env: Record<string, string>, nodeArgs: string[] = []): Promise<ServeProcess> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SERVICE_') && !k.startsWith('TAP')) clean[k] = v;
  // the shipped SFTP, WebDAV and FTP services on any free port: parallel test files must not collide on 2022 / 8090 / 2121
  const sftpPort = {
    SERVICE_PLUGINS__SERVICE_SFTP__CONFIG__BINDINGS__0__PORT: '0',
    SERVICE_PLUGINS__SERVICE_WEBDAV__CONFIG__BINDINGS__0__PORT: '0',
    SERVICE_PLUGINS__SERVICE_FTP__CONFIG__BINDINGS__0__PORT: '0',
  };
  const p = spawn(process.execPath, [...nodeArgs, ...CLI, 'serve'], { cwd: root, env: { ...clean, ...sftpPort, ...env } });
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
  return {
    base,
    stop: () => {
      if (p.exitCode === null) p.kill('SIGTERM');
      return exited;
    },
  };
}
