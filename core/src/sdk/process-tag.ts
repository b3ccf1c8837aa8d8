/**
 * Names the running process so that files it leaves in a shared directory
 * (uploads in progress, the upload journal) can be told from those of a
 * process that died: `<pid>-<start time>`, where the start time is the
 * kernel's (clock ticks since boot, /proc/<pid>/stat field 22), so a pid
 * reused by another process after a crash or a reboot does not match.
 * Without /proc (not Linux) the start time is 0 and only the pid is checked.
 */
import { readFileSync } from 'node:fs';

/** The form of a tag: digits, a dash, digits. */
const TAG = /^(\d+)-(\d+)$/;

/** Field 22 of /proc/<pid>/stat (starttime), or null when it cannot be read. */
function startTime(pid: number | 'self'): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  // the command name (field 2) is in parentheses and may hold spaces or ')': split after the last ')'
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): starttime (field 22) is fields[19]
  return fields[19] ?? null;
}

let own: string | undefined;

/** The tag of this process (computed once). */
export function processTag(): string {
  own ??= `${process.pid}-${startTime('self') ?? 0}`;
  return own;
}

/** True for a name of the form processTag() returns. */
export function isProcessTag(name: string): boolean {
  return TAG.test(name);
}

/**
 * True when the process a tag names is still running (this process
 * included). A tag of another form is never alive.
 */
export function processTagAlive(tag: string): boolean {
  const m = TAG.exec(tag);
  if (!m) return false;
  if (tag === processTag()) return true;
  const pid = Number(m[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (m[2] !== '0') {
    const st = startTime(pid);
    // no /proc entry: the process is gone; another start time: the pid was reused
    return st !== null && st === m[2];
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
