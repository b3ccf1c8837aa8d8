import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fillZip, ZipWriter } from '@ferry/zip-writer';
import type { ActionTypeDef, RecordedKind } from '@ferry/core';
import { eventReportConfigSchema } from './config.schema.js';
import type { PluginHost } from '@ferry/core';

/** One CSV of a report: the events of one kind. */
export interface EventReportFile {
  Type: RecordedKind;
  /** File name of the CSV (inside the zip when the report is compressed). */
  Name: string;
  Rows: number;
}

/**
 * `.EventReports[]`: one entry per report file an event report action
 * wrote. A compressed report is one zip holding a CSV per event kind; an
 * uncompressed one is a CSV per kind (one entry each).
 */
export interface EventReport {
  /** The event kind of a CSV; the kinds joined with "," for a zip. */
  Type: string;
  /** Local path of the report file (attach it with an email action, upload it...). */
  Path: string;
  /** Its base name. */
  Name: string;
  /** `csv` or `zip`. */
  Format: 'csv' | 'zip';
  /** Event rows in the file (every CSV of a zip together). */
  Rows: number;
  /** The CSVs in the file: one for a CSV report. */
  Files: EventReportFile[];
  Start: Date;
  End: Date;
}

const COLUMNS: Record<RecordedKind, string[]> = {
  fs: [
    'timestamp',
    'action',
    'username',
    'virtual_path',
    'virtual_target_path',
    'file_size',
    'status',
    'protocol',
    'ip',
    'session_id',
    'elapsed',
    'fs_provider',
    'bucket',
    'endpoint',
    'role',
    'instance_id',
  ],
  provider: ['timestamp', 'action', 'object_type', 'object_name', 'username', 'ip', 'role', 'instance_id'],
  log: ['timestamp', 'event', 'protocol', 'username', 'ip', 'message', 'role', 'instance_id'],
};

/** RFC 4180 field; cells starting with = + - @ are prefixed with ' so spreadsheets do not run them. */
export function csvCell(v: unknown): string {
  let s = v === undefined || v === null ? '' : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** UTC stamp to the second: 20260102T030405. */
const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, '').slice(0, 15);
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '_');

/**
 * Streams `source` into a new file (mode 0600) at `file`; resolves once the
 * file is closed, and rejects, after it is closed, when the source or a
 * write fails: the caller can remove the file right away.
 */
async function writeFileFrom(file: string, source: Readable): Promise<void> {
  const out = createWriteStream(file, { mode: 0o600 });
  const closed = new Promise<void>((resolve) => out.once('close', () => resolve()));
  try {
    await pipeline(source, out);
    await closed;
  } catch (err) {
    // a failure before the file was opened closes it once open: never create it behind the caller
    out.destroy();
    source.destroy();
    await closed;
    throw err;
  }
}

/**
 * Publishes files whole: `write` writes each file at its `tmp` path (out of
 * sight, on the same filesystem: the run's hidden working directory), then
 * each is renamed to its `final` path, so a user never sees a partial file.
 * A file already at a final name is replaced, as when written in place. If
 * `write` or a rename fails, the temporary files are removed and the files
 * published so far taken back (a file one replaced is put back, through a
 * hard link kept in the working directory until the last file is
 * published), then the error is thrown: the run leaves nothing.
 */
export async function publishFiles<T>(files: { tmp: string; final: string }[], write: () => Promise<T>): Promise<T> {
  const published: { final: string; kept: string | undefined }[] = [];
  try {
    const result = await write();
    for (const [i, f] of files.entries()) {
      // the last rename never needs undoing: only the files before it keep what they replace
      const kept = i < files.length - 1 ? `${f.tmp}.earlier` : undefined;
      const keeps =
        kept !== undefined &&
        (await link(f.final, kept).then(
          () => true,
          (e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? false : Promise.reject(e)),
        ));
      try {
        await rename(f.tmp, f.final);
      } catch (err) {
        if (keeps) await rm(kept, { force: true });
        throw err;
      }
      published.push({ final: f.final, kept: keeps ? kept : undefined });
    }
    await Promise.all(published.map((p) => p.kept && rm(p.kept, { force: true })));
    return result;
  } catch (err) {
    for (const p of published.reverse()) {
      // best effort: the first error is the one thrown
      await (p.kept ? rename(p.kept, p.final) : rm(p.final, { force: true })).catch(() => undefined);
    }
    await Promise.all(files.map((f) => rm(f.tmp, { force: true })));
    throw err;
  }
}

/** Writes the CSV of the recorded events of one kind, as they come, until `signal` aborts; returns the number of rows. */
async function writeCsv(file: string, kind: RecordedKind, events: AsyncIterable<object>, signal: AbortSignal): Promise<number> {
  let rows = 0;
  async function* lines() {
    yield COLUMNS[kind].join(',') + '\r\n';
    for await (const event of events) {
      signal.throwIfAborted();
      const e = event as Record<string, unknown>;
      const row = COLUMNS[kind].map((c) => (c === 'timestamp' ? new Date(Math.floor(Number(e.timestamp) / 1_000_000)).toISOString() : e[c]));
      yield row.map(csvCell).join(',') + '\r\n';
      rows++;
    }
  }
  await writeFileFrom(file, Readable.from(lines(), { objectMode: false }));
  return rows;
}

/**
 * Deflate level of zipped reports. 6, as archiver wrote them before: a
 * report is kept and often mailed, CSVs deflate about 10% smaller than at
 * level 1, and a report is written once per run, off any request.
 */
export const REPORT_ZIP_LEVEL = 6;

/**
 * Zips `files` (local paths) under their base names, with their mode and
 * modification time, into `zipPath`. The archive is written to `tmpPath`
 * (on the same filesystem, out of sight) and published by publishFiles: a
 * file that cannot be read, or a read or write failing midway, removes it
 * and leaves `zipPath` as it was. Files are streamed, never held whole.
 */
export async function writeZip(zipPath: string, files: string[], tmpPath: string): Promise<void> {
  await publishFiles([{ tmp: tmpPath, final: zipPath }], async () => {
    const zip = new ZipWriter({ level: REPORT_ZIP_LEVEL });
    // a write failing first (a full disk) is reported as the cause
    await fillZip(zip, writeFileFrom(tmpPath, zip), async () => {
      for (const f of files) {
        const st = await stat(f);
        const rs = createReadStream(f);
        try {
          await zip.addStream(path.basename(f), rs, { size: st.size, mtime: st.mtime, mode: st.mode & 0o7777 });
        } finally {
          rs.destroy();
        }
      }
    });
  });
}

/**
 * Type 19: summarises the filesystem, provider and log events recorded by
 * this node during the `hours` before the rule fired, written to the
 * reports directory and exposed as `.EventReports`: with `compress` ONE zip
 * holding a CSV per selected kind (a single file to attach), otherwise one
 * CSV per kind. Events come from PluginHost.eventHistory: the events every
 * node recorded in the database when @ferry/events-search is loaded (the
 * default configuration), otherwise this node's in-memory recorder
 * (event_manager.recorder_size most recent per kind, lost on restart).
 */
export function eventReportAction(s: PluginHost, reportsDir: () => string): ActionTypeDef<{ hours: number; event_types: RecordedKind[]; compress: boolean }> {
  return {
    type: 19,
    key: 'event-report',
    optionsKey: 'event_report_config',
    optionsSchema: eventReportConfigSchema,
    triggers: [3, 6],
    create: (o) => ({
      async execute(ctx) {
        const end = new Date(ctx.firedAt ?? Date.now());
        const start = new Date(end.getTime() - o.hours * 3_600_000);
        const dir = reportsDir();
        await mkdir(dir, { recursive: true, mode: 0o700 });
        // runs of the same rule and action in the same second keep their own files: a random suffix
        const base = `${safe(ctx.ruleName)}-${safe(ctx.actionName)}-${stamp(end)}-${randomBytes(4).toString('hex')}`;
        // a scheduled rule fires at a whole minute: include the events of that minute
        const endNs = end.getTime() * 1_000_000 + 59_999_999_999;
        // every file is written in a working directory of its own, hidden, and renamed into place once complete
        const work = path.join(dir, `.${base}`);
        await mkdir(work, { recursive: true, mode: 0o700 });
        const csvs = o.event_types.map((kind) => ({
          kind,
          tmp: path.join(work, `${kind}.csv`),
          final: path.join(dir, `${base}-${kind}.csv`),
          file: { Type: kind, Name: o.compress ? `${kind}.csv` : `${base}-${kind}.csv`, Rows: 0 } as EventReportFile,
        }));
        const writeCsvs = async () => {
          for (const c of csvs) c.file.Rows = await writeCsv(c.tmp, c.kind, s.eventHistory.events(c.kind, start.getTime() * 1_000_000, endNs), ctx.signal);
        };
        try {
          if (o.compress) {
            // the CSVs stay in the working directory: the zip holds them
            await writeCsvs();
            ctx.signal.throwIfAborted();
            await writeZip(
              path.join(dir, `${base}.zip`),
              csvs.map((c) => c.tmp),
              path.join(work, `${base}.zip`),
            );
          } else {
            // every CSV complete before any is published: a failed run leaves no report of its own
            await publishFiles(csvs, writeCsvs);
          }
        } finally {
          await rm(work, { recursive: true, force: true });
        }
        const rows = (files: EventReportFile[]) => files.reduce((n, f) => n + f.Rows, 0);
        let reports: EventReport[];
        if (o.compress) {
          const zipPath = path.join(dir, `${base}.zip`);
          const files = csvs.map((c) => c.file);
          reports = [
            {
              Type: o.event_types.join(','),
              Path: zipPath,
              Name: path.basename(zipPath),
              Format: 'zip',
              Rows: rows(files),
              Files: files,
              Start: start,
              End: end,
            },
          ];
        } else {
          reports = csvs.map((c) => ({
            Type: c.file.Type,
            Path: c.final,
            Name: c.file.Name,
            Format: 'csv',
            Rows: c.file.Rows,
            Files: [c.file],
            Start: start,
            End: end,
          }));
        }
        ctx.logger.info({ reports: reports.map((r) => ({ type: r.Type, rows: r.Rows, file: r.Name })) }, 'event report written');
        return { outputs: { EventReports: reports } };
      },
    }),
  };
}
