import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import t from 'tap';
import { liveBufferGrowth, writeRandomHex } from '@ferry/testkit';
import { REPORT_ZIP_LEVEL, writeZip } from '../src/event-report.action.js';

// The zip of a compressed event report (type 19), written with
// @ferry/zip-writer: read back by Info-ZIP's unzip and Python's zipfile
// (Debian packages unzip, python3) with the CSVs' names, modes, times and
// bytes, deflated at level 6; written under a temporary name and renamed,
// so a file that cannot be read, or fails midway, leaves nothing.

const PY_LIST = `
import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    print(json.dumps({'bad': z.testzip(), 'entries': [
        {'name': i.filename, 'size': i.file_size, 'csize': i.compress_size, 'method': i.compress_type,
         'mode': i.external_attr >> 16, 'time': list(i.date_time), 'data': z.read(i).decode('utf-8')}
        for i in z.infolist()]}))
`;
interface PyEntry {
  name: string;
  size: number;
  csize: number;
  method: number;
  mode: number;
  time: number[];
  data: string;
}
const pyList = (file: string) => JSON.parse(execFileSync('python3', ['-c', PY_LIST, file]).toString()) as { bad: string | null; entries: PyEntry[] };

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'event-report-zip-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A CSV of `rows` rows (about 100 bytes each). */
function csv(file: string, rows: number): Buffer {
  const lines = ['timestamp,action,username,virtual_path,file_size'];
  for (let i = 0; i < rows; i++)
    lines.push(`2026-11-28T10:${String(i % 60).padStart(2, '0')}:00.000Z,upload,user${i % 37},/in/${randomBytes(6).toString('hex')}.csv,${i * 131}`);
  const data = Buffer.from(lines.join('\r\n') + '\r\n');
  writeFileSync(file, data, { mode: 0o600 });
  return data;
}

t.test('a report zip: the CSVs under their names, mode 0600, times and bytes kept, level 6', async (t) => {
  const dir = scratch(t);
  mkdirSync(path.join(dir, 'work'));
  const fsCsv = csv(path.join(dir, 'work/fs.csv'), 3000);
  const logCsv = csv(path.join(dir, 'work/log.csv'), 3);
  chmodSync(path.join(dir, 'work/fs.csv'), 0o600);
  chmodSync(path.join(dir, 'work/log.csv'), 0o600);
  const mtime = new Date(2026, 10, 28, 9, 15, 42);
  utimesSync(path.join(dir, 'work/fs.csv'), mtime, mtime);
  const zipPath = path.join(dir, 'report.zip');
  await writeZip(zipPath, [path.join(dir, 'work/fs.csv'), path.join(dir, 'work/log.csv')], path.join(dir, 'work/report.zip'));
  t.match(execFileSync('unzip', ['-tq', zipPath]).toString(), /No errors detected/);
  const { bad, entries } = pyList(zipPath);
  t.equal(bad, null, 'every CRC checks');
  t.same(
    entries.map((e) => [e.name, e.size, e.mode, e.method]),
    [
      ['fs.csv', fsCsv.length, 0o100600, 8],
      ['log.csv', logCsv.length, 0o100600, 8],
    ],
  );
  t.equal(entries[0]!.data, fsCsv.toString());
  t.equal(entries[1]!.data, logCsv.toString());
  t.same(entries[0]!.time, [2026, 11, 28, 9, 15, 42], 'modification time kept');
  t.equal(REPORT_ZIP_LEVEL, 6);
  t.equal(entries[0]!.csize, deflateRawSync(fsCsv, { level: 6 }).length, 'deflated at level 6');
  t.same(readdirSync(path.join(dir, 'work')).sort(), ['fs.csv', 'log.csv'], 'the temporary archive was renamed');
});

t.test('a large report is streamed: live buffer memory stays flat', async (t) => {
  const dir = scratch(t);
  mkdirSync(path.join(dir, 'work'));
  // 32 MiB of random hex digits: deflate halves it, so holding the file (32 MiB) or the archive (17 MiB) shows
  const size = 32 << 20;
  writeRandomHex(path.join(dir, 'work/fs.csv'), size);
  const zipPath = path.join(dir, 'report.zip');
  const { grew, samples } = await liveBufferGrowth(() => writeZip(zipPath, [path.join(dir, 'work/fs.csv')], path.join(dir, 'work/report.zip')));
  t.comment(`live buffers grew by ${(grew / 2 ** 20).toFixed(1)} MiB at most (${samples} samples)`);
  t.ok(samples >= 3, `${samples} samples taken while zipping`);
  // 0.3 MiB in flight, measured beside other tests
  t.ok(grew < 4 << 20, `live buffer memory grew by ${grew} bytes while zipping ${size} bytes`);
  t.match(execFileSync('unzip', ['-tq', zipPath]).toString(), /No errors detected/);
});

t.test('a file failing midway (a directory: opened, then its read fails) leaves no archive, even temporary', async (t) => {
  const dir = scratch(t);
  mkdirSync(path.join(dir, 'work/provider.csv'), { recursive: true });
  csv(path.join(dir, 'work/fs.csv'), 5000); // over 64 KiB: part of the archive is written before the failure
  const zipPath = path.join(dir, 'report.zip');
  const tmpPath = path.join(dir, 'work/report.zip');
  await t.rejects(writeZip(zipPath, [path.join(dir, 'work/fs.csv'), path.join(dir, 'work/provider.csv')], tmpPath), { code: 'EISDIR' });
  t.notOk(existsSync(zipPath), 'no archive');
  t.notOk(existsSync(tmpPath), 'no temporary archive');
});

t.test('a file that cannot be read leaves no archive', async (t) => {
  const dir = scratch(t);
  mkdirSync(path.join(dir, 'work'));
  csv(path.join(dir, 'work/fs.csv'), 10);
  const zipPath = path.join(dir, 'report.zip');
  const tmpPath = path.join(dir, 'work/report.zip');
  await t.rejects(writeZip(zipPath, [path.join(dir, 'work/fs.csv'), path.join(dir, 'work/gone.csv')], tmpPath), { code: 'ENOENT' });
  t.notOk(existsSync(zipPath));
  t.notOk(existsSync(tmpPath));
});

t.test('the archive cannot be written: the write error, nothing left', async (t) => {
  const dir = scratch(t);
  mkdirSync(path.join(dir, 'work'));
  csv(path.join(dir, 'work/fs.csv'), 10);
  const zipPath = path.join(dir, 'report.zip');
  await t.rejects(writeZip(zipPath, [path.join(dir, 'work/fs.csv')], path.join(dir, 'missing-dir/report.zip')), { code: 'ENOENT' });
  t.notOk(existsSync(zipPath));
});
