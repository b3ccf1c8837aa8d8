/** Independent readers for the tests: Info-ZIP's unzip and Python's zipfile (Debian packages unzip, python3). */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';

interface Teardown {
  teardown(fn: () => void): void;
}

/** A scratch directory removed when the test ends. */
export function scratch(t: Teardown): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'zip-writer-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Reads the whole archive into a file and returns its path. */
export async function toFile(t: Teardown, zip: Readable): Promise<string> {
  const file = path.join(scratch(t), 'a.zip');
  const chunks: Buffer[] = [];
  for await (const c of zip) chunks.push(c as Buffer);
  writeFileSync(file, Buffer.concat(chunks));
  return file;
}

const PY_READ = `
import hashlib, json, sys, zipfile
mode = sys.argv[2]
with zipfile.ZipFile(sys.argv[1]) as z:
    bad = z.testzip() if mode == 'all' else None
    out = []
    for i in z.infolist():
        e = {'name': i.filename, 'size': i.file_size, 'csize': i.compress_size, 'method': i.compress_type,
             'offset': i.header_offset, 'flags': i.flag_bits, 'attr': i.external_attr, 'time': list(i.date_time),
             'dir': i.is_dir()}
        if mode == 'all' or (mode == 'small' and i.file_size < 1 << 20):
            e['sha256'] = hashlib.sha256(z.read(i)).hexdigest()
        out.append(e)
    print(json.dumps({'bad': bad, 'entries': out}))
`;

export interface PyEntry {
  name: string;
  size: number;
  csize: number;
  method: number;
  offset: number;
  flags: number;
  attr: number;
  /** [year, month, day, hour, minute, second] */
  time: number[];
  dir: boolean;
  sha256?: string;
}

/**
 * Python's zipfile view of an archive. `all`: testzip() (every CRC) and the
 * SHA-256 of every entry; `small`: SHA-256 of entries under 1 MiB; `list`: no reading.
 */
export function pyRead(file: string, mode: 'all' | 'small' | 'list' = 'all'): { bad: string | null; entries: PyEntry[] } {
  const out = execFileSync('python3', ['-c', PY_READ, file, mode], { maxBuffer: 256 << 20 }).toString();
  return JSON.parse(out) as { bad: string | null; entries: PyEntry[] };
}

/** `unzip -tq`: throws (with unzip's output) unless every entry tests fine. */
export function unzipTest(file: string): string {
  return execFileSync('unzip', ['-tq', file], { maxBuffer: 64 << 20 }).toString();
}

export const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
