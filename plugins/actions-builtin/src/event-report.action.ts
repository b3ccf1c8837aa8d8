import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import archiver from 'archiver';
import type { ActionTypeDef, RecordedKind } from '@ferry/core';
import { eventReportConfigSchema } from './config.schema.js';
import type { Services } from './services.js';

/** `.EventReports[]`. */
export interface EventReport {
  Type: RecordedKind;
  /** Local path of the CSV (or of the zip holding it). */
  Path: string;
  Name: string;
  Rows: number;
  Start: Date;
  End: Date;
}

const COLUMNS: Record<RecordedKind, string[]> = {
  fs: ['timestamp', 'action', 'username', 'virtual_path', 'virtual_target_path', 'file_size', 'status', 'protocol', 'ip', 'session_id', 'elapsed', 'fs_provider', 'bucket', 'endpoint', 'role', 'instance_id'],
  provider: ['timestamp', 'action', 'object_type', 'object_name', 'username', 'ip', 'role', 'instance_id'],
  log: ['timestamp', 'event', 'protocol', 'username', 'ip', 'message', 'role', 'instance_id'],
};

/** RFC 4180 field; cells starting with = + - @ are prefixed with ' so spreadsheets do not run them. */
export function csvCell(v: unknown): string {
  let s = v === undefined || v === null ? '' : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, '').slice(0, 13);
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '_');

/**
 * Type 19: summarises the filesystem, provider and log events recorded by
 * this node during the `hours` before the rule fired into one CSV per kind
 * (in a zip when `compress`), written to the reports directory and exposed
 * as `.EventReports`. Events come from the core's in-memory recorder
 * (event_manager.recorder_size most recent per kind, this node only).
 */
export function eventReportAction(s: Services, reportsDir: () => string): ActionTypeDef<{ hours: number; event_types: RecordedKind[]; compress: boolean }> {
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
        const reports: EventReport[] = [];
        for (const kind of o.event_types) {
          const events = s.recorder().query(kind, start.getTime() * 1_000_000, end.getTime() * 1_000_000 + 59_999_999_999) as unknown as Record<string, unknown>[];
          const base = `${safe(ctx.ruleName)}-${kind}-${stamp(end)}`;
          const csvPath = path.join(dir, `${base}.csv`);
          const out = createWriteStream(csvPath, { mode: 0o600 });
          const write = async (line: string) => {
            if (!out.write(line)) await once(out, 'drain');
          };
          await write(COLUMNS[kind].join(',') + '\r\n');
          for (const e of events) {
            const row = COLUMNS[kind].map((c) => (c === 'timestamp' ? new Date(Math.floor(Number(e.timestamp) / 1_000_000)).toISOString() : e[c]));
            await write(row.map(csvCell).join(',') + '\r\n');
          }
          out.end();
          await finished(out);
          let file = csvPath;
          if (o.compress) {
            file = path.join(dir, `${base}.zip`);
            const zip = archiver('zip', { zlib: { level: 6 } });
            const zout = createWriteStream(file, { mode: 0o600 });
            zip.pipe(zout);
            zip.file(csvPath, { name: `${base}.csv` });
            await zip.finalize();
            await finished(zout);
            await rm(csvPath, { force: true });
          }
          reports.push({ Type: kind, Path: file, Name: path.basename(file), Rows: events.length, Start: start, End: end });
        }
        ctx.logger.info({ reports: reports.map((r) => ({ type: r.Type, rows: r.Rows, file: r.Name })) }, 'event report written');
        return { outputs: { EventReports: reports } };
      },
    }),
  };
}
