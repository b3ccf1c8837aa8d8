import type { FileInfo } from '@ferry/core';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function modeString(info: FileInfo): string {
  const m = info.mode & 0o777 || (info.isDir ? 0o755 : 0o644);
  let s = info.isDir ? 'd' : '-';
  for (let shift = 6; shift >= 0; shift -= 3) {
    const b = (m >> shift) & 7;
    s += (b & 4 ? 'r' : '-') + (b & 2 ? 'w' : '-') + (b & 1 ? 'x' : '-');
  }
  return s;
}

/** One line of LIST, in the `ls -l` form clients parse (UTC times). */
export function listLine(info: FileInfo, now = Date.now()): string {
  const t = info.mtime;
  const recent = Math.abs(now - t.getTime()) < 180 * 86400_000;
  const when = `${MONTHS[t.getUTCMonth()]} ${String(t.getUTCDate()).padStart(2)} ${recent ? `${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}` : ` ${t.getUTCFullYear()}`}`;
  return `${modeString(info)} 1 ftp ftp ${String(info.size).padStart(12)} ${when} ${info.name}\r\n`;
}

/** YYYYMMDDHHMMSS in UTC (MDTM, MLSx modify=). */
export function ftpTime(d: Date): string {
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
}

/** Parses YYYYMMDDHHMMSS[.sss] (UTC); null when malformed. */
export function parseFtpTime(s: string): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{1,3}))?$/.exec(s);
  if (!m) return null;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, m[7] ? +m[7].padEnd(3, '0') : 0));
  return Number.isNaN(d.getTime()) || ftpTime(d) !== s.slice(0, 14) ? null : d;
}

/** The facts of one MLSD/MLST entry (RFC 3659), followed by a space and the name. */
export function mlsxFacts(info: FileInfo, perm: string, type?: string): string {
  return `type=${type ?? (info.isDir ? 'dir' : 'file')};size=${info.size};modify=${ftpTime(info.mtime)};perm=${perm};`;
}
