import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { opensshOptions, run, type Run } from './helpers.js';

// Runners for the real SFTP clients the tests drive (installed by scripts/servers/start-clients.sh):
// rclone, lftp and paramiko (Debian's python3-paramiko).

/** rclone without any configuration file: remotes are connection strings. */
export function rclone(args: string[], cwd?: string): Promise<Run> {
  return run('rclone', ['--retries', '1', '--low-level-retries', '1', ...args], cwd, { RCLONE_CONFIG: '/nonexistent.conf' });
}

export interface RcloneLogin {
  port: number;
  user: string;
  key?: string;
  password?: string;
  /**
   * 'none' (the default): no SSH commands. 'unix': rclone finds its hash commands itself (it runs
   * `md5sum` and `sha1sum` on an empty input) and hashes files with them. (Left out, rclone 1.60 detects
   * the shell with `echo`, which Ferry refuses, and falls back to 'none'.)
   */
  shell?: 'none' | 'unix';
}

/** An rclone sftp connection string (`:sftp,...:`) for a login; a password is obscured as rclone wants it. */
export async function rcloneRemote(o: RcloneLogin): Promise<string> {
  const parts = ['sftp', 'host=127.0.0.1', `port=${o.port}`, `user=${o.user}`];
  if (o.key) parts.push(`key_file=${o.key}`);
  if (o.password !== undefined) {
    const obscured = await run('rclone', ['obscure', o.password]);
    if (obscured.code !== 0) throw new Error(obscured.stderr);
    parts.push(`pass=${obscured.stdout.trim()}`);
  }
  parts.push(`shell_type=${o.shell ?? 'none'}`);
  return `:${parts.join(',')}:`;
}

/**
 * lftp over sftp:// with OpenSSH as its connect program (key login); the commands run in order and
 * the first failing one ends lftp with a non-zero exit code.
 */
export function lftp(o: { port: number; user: string; key: string; dir: string; commands: string[] }): Promise<Run> {
  const ssh = ['ssh', '-a', '-x', ...opensshOptions(o.key)].join(' ');
  const script = [`set sftp:connect-program '${ssh}'`, 'set cmd:fail-exit yes', 'set net:max-retries 1', ...o.commands, 'bye'].join('; ');
  return run('lftp', ['-u', `${o.user},`, '-e', script, `sftp://127.0.0.1:${o.port}`], o.dir);
}

/** One paramiko operation (see paramiko-client.py). */
export type ParamikoOp = { op: string } & Record<string, unknown>;
export interface ParamikoResult {
  auth: 'ok' | 'failed';
  /** The login's failure. */
  error?: string;
  /** The keyboard-interactive prompts answered. */
  prompts?: string[];
  /** The SFTP channel's failure to open. */
  sftp?: string;
  results?: { ok?: unknown; error?: string; errno?: number | null }[];
}

/** Debian's python3 (paramiko is a Debian package: another python3 on PATH does not have it). */
const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./paramiko-client.py', import.meta.url));

/** Logs in with paramiko (key, password, keyboard-interactive with `code`) and runs `ops`. */
export function paramiko(spec: {
  port: number;
  user: string;
  key?: string;
  password?: string;
  code?: string;
  interactive?: boolean;
  ops?: ParamikoOp[];
}): Promise<ParamikoResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve(JSON.parse(stdout) as ParamikoResult);
      } catch {
        reject(new Error(`paramiko-client.py exited with ${code}: ${stderr}${stdout}`));
      }
    });
    child.stdin.end(JSON.stringify(spec));
  });
}

/** The SHA-256 of a local file, in hex. */
export const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Every file under `root` with its hash, by relative path. */
export function tree(root: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const p = path.posix.join(rel, e.name);
    if (e.isDirectory()) Object.assign(out, tree(root, p));
    else out[p] = sha(path.join(root, p));
  }
  return out;
}
