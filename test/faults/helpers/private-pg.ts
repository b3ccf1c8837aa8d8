/**
 * A private PostgreSQL instance for a test that stops and starts its
 * database (never the shared server): initdb + pg_ctl from
 * /usr/lib/postgresql/<version>/bin into a temporary directory, listening on
 * a free port of 127.0.0.1 only. PostgreSQL refuses to run as root: as root,
 * the commands run as the `postgres` system user (runuser).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The bin directory of the newest PostgreSQL installed, or undefined. */
export function postgresBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(path.join(base, v, 'bin', 'pg_ctl')) && existsSync(path.join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(base, versions[0], 'bin') : undefined;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export class PrivatePostgres {
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
    private readonly asUser: { uid: number; gid: number } | undefined,
  ) {}

  /** The connection URL of the `postgres` database (trust authentication on loopback). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private async exec(cmd: string, args: string[]): Promise<void> {
    const file = path.join(this.bin, cmd);
    if (this.asUser) await run('runuser', ['-u', 'postgres', '--', file, ...args], { cwd: this.dir });
    else await run(file, args, { cwd: this.dir });
  }

  static async create(bin: string): Promise<PrivatePostgres> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-faults-pg-'));
    let asUser: { uid: number; gid: number } | undefined;
    if (process.getuid?.() === 0) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: g } = await run('id', ['-g', 'postgres']);
      asUser = { uid: Number(stdout.trim()), gid: Number(g.trim()) };
      await chmod(dir, 0o755);
      await chown(dir, asUser.uid, asUser.gid);
    }
    await mkdir(path.join(dir, 'data'), { mode: 0o700 });
    if (asUser) await chown(path.join(dir, 'data'), asUser.uid, asUser.gid);
    const pg = new PrivatePostgres(bin, dir, await freePort(), asUser);
    await pg.exec('initdb', ['-D', path.join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    await pg.start();
    return pg;
  }

  async start(): Promise<void> {
    const opts = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c fsync=off -c max_connections=50`;
    await this.exec('pg_ctl', ['-D', path.join(this.dir, 'data'), '-l', path.join(this.dir, 'log'), '-o', opts, '-w', '-t', '60', 'start']);
  }

  /** Stops the server (fast: connections are terminated). */
  async stop(): Promise<void> {
    await this.exec('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'fast', '-w', '-t', '60', 'stop']);
  }

  /** Stops the server if it runs and removes its directory. */
  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}
