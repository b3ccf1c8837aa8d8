/** Running the real client programs the front-ends' tests drive (curl, lftp, rclone, cadaver, openssl ...). */
import { execFile } from 'node:child_process';

/** A program's exit code and output. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program (`env` added to this process's, `input` written to its
 * stdin); resolves with its exit code and output, never rejects on a failing
 * exit (only when it cannot be started).
 */
export function run(cmd: string, args: string[], o: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { cwd: o.cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...o.env } }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
    if (o.input !== undefined) child.stdin?.end(o.input);
  });
}
