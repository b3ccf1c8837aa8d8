import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import archiver from 'archiver';
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

/** Writes the CSV of the recorded events of one kind, as they come; returns the number of rows. */
async function writeCsv(file: string, kind: RecordedKind, events: AsyncIterable<object>): Promise<number> {
  const out = createWriteStream(file, { mode: 0o600 });
  const write = async (line: string) => {
    if (!out.write(line)) await once(out, 'drain');
  };
  let rows = 0;
  try {
    await write(COLUMNS[kind].join(',') + '\r\n');
    for await (const event of events) {
      const e = event as Record<string, unknown>;
      const row = COLUMNS[kind].map((c) => (c === 'timestamp' ? new Date(Math.floor(Number(e.timestamp) / 1_000_000)).toISOString() : e[c]));
      await write(row.map(csvCell).join(',') + '\r\n');
      rows++;
    }
  } finally {
    out.end();
  }
  await finished(out);
  return rows;
}

/** Zips `files` (local paths) under their base names into `zipPath`. */
async function writeZip(zipPath: string, files: string[]): Promise<void> {
  const zip = archiver('zip', { zlib: { level: 6 } });
  const out = createWriteStream(zipPath, { mode: 0o600 });
  zip.pipe(out);
  for (const f of files) zip.file(f, { name: path.basename(f) });
  await zip.finalize();
  await finished(out);
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
        // a zip's members (<kind>.csv) are written to a working directory of their own
        const work = o.compress ? path.join(dir, `.${base}`) : dir;
        if (o.compress) await mkdir(work, { recursive: true, mode: 0o700 });
        const csvs: { path: string; file: EventReportFile }[] = [];
        try {
          for (const kind of o.event_types) {
            const events = s.eventHistory.events(kind, start.getTime() * 1_000_000, endNs);
            const name = o.compress ? `${kind}.csv` : `${base}-${kind}.csv`;
            const csvPath = path.join(work, name);
            csvs.push({ path: csvPath, file: { Type: kind, Name: name, Rows: await writeCsv(csvPath, kind, events) } });
          }
          if (o.compress)
            await writeZip(
              path.join(dir, `${base}.zip`),
              csvs.map((c) => c.path),
            );
        } finally {
          if (o.compress) await rm(work, { recursive: true, force: true });
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
            Path: c.path,
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
