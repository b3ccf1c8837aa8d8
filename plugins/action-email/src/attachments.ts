import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ActionContext, MailAttachment, PluginHost, UserFiles } from '@ferry/core';
import { generatedName } from './config.schema.js';

/** `1.5 MiB`: sizes in messages. */
export function humanBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

/** Bytes still allowed for the attachments of one email, shared by every stream of it. */
export class AttachmentBudget {
  used = 0;
  constructor(readonly limit: number) {}

  /** Counts `n` more bytes; throws when the total goes over the limit. */
  take(n: number, what: string): void {
    this.used += n;
    if (this.used > this.limit) {
      throw new Error(`the attachments exceed the size limit of ${humanBytes(this.limit)} (plugin config max_attachments_size) at ${what}`);
    }
  }
}

/**
 * A stream opened only when the mail composer reaches it (one backend read
 * at a time, none for a mail that fails before), counting its bytes against
 * the budget again while they flow (a file that grew since it was checked
 * cannot get past the limit). Destroying it closes the source.
 */
export function lazyStream(open: () => Promise<Readable>, budget: AttachmentBudget, what: string): Readable {
  return Readable.from(
    (async function* () {
      const src = await open();
      try {
        for await (const chunk of src) {
          budget.take((chunk as Buffer).length, what);
          yield chunk as Buffer;
        }
      } finally {
        src.destroy();
      }
    })(),
    { objectMode: false },
  );
}

interface ReportEntry {
  Path?: unknown;
  Name?: unknown;
}

/** The attachments of one execution; close() releases the user's storage and every stream not read. */
export class AttachmentSet {
  readonly list: MailAttachment[] = [];
  private files: UserFiles | undefined;
  private readonly budget: AttachmentBudget;

  constructor(
    private readonly host: PluginHost,
    private readonly ctx: ActionContext,
    limit: number,
  ) {
    this.budget = new AttachmentBudget(limit);
  }

  /** Adds every entry; each size is checked before any byte is sent. */
  async add(entries: string[], signal: AbortSignal): Promise<void> {
    const sized: number[] = [];
    const check = (size: number, what: string) => {
      sized.push(size);
      const total = sized.reduce((a, b) => a + b, 0);
      if (total > this.budget.limit) {
        throw new Error(
          `the attachments (${humanBytes(total)} with ${what}) exceed the size limit of ${humanBytes(this.budget.limit)} (plugin config max_attachments_size)`,
        );
      }
    };
    for (const entry of entries) {
      signal.throwIfAborted();
      // a template may render nothing (`{{if .X}}/path{{end}}`): no attachment
      if (!entry.trim()) continue;
      const gen = generatedName(entry);
      if (gen === '.RetentionChecks') this.addRetentionChecks(check);
      else if (gen === '.EventReports') await this.addEventReports(check);
      else await this.addUserFile(entry, signal, check);
    }
  }

  private addRetentionChecks(check: (size: number, what: string) => void): void {
    const checks = this.ctx.params.RetentionChecks;
    if (!Array.isArray(checks) || !checks.length) {
      throw new Error('attachment .RetentionChecks: no data retention check ran before this action in the rule');
    }
    const content = Buffer.from(JSON.stringify(checks, null, 2) + '\n');
    check(content.length, '.RetentionChecks');
    this.budget.take(content.length, '.RetentionChecks');
    this.list.push({ filename: 'retention-checks.json', content, contentType: 'application/json' });
  }

  private async addEventReports(check: (size: number, what: string) => void): Promise<void> {
    const reports = this.ctx.params.EventReports;
    if (!Array.isArray(reports) || !reports.length) {
      throw new Error('attachment .EventReports: no event report was written before this action in the rule');
    }
    for (const r of reports as ReportEntry[]) {
      // only what the event report action writes: an absolute path to a .csv or .zip named Name
      if (typeof r?.Path !== 'string' || !path.isAbsolute(r.Path) || !/\.(csv|zip)$/.test(r.Path)) {
        throw new Error('attachment .EventReports: an entry is not a report file (.csv or .zip)');
      }
      const name = path.basename(r.Path);
      if (typeof r.Name === 'string' && r.Name && r.Name !== name) throw new Error(`attachment .EventReports: report ${r.Name} does not match its file`);
      const info = await stat(r.Path).catch((err: NodeJS.ErrnoException) => {
        throw new Error(`attachment .EventReports: report ${name} cannot be read (${err.code ?? err.message})`);
      });
      if (!info.isFile()) throw new Error(`attachment .EventReports: report ${name} is not a file`);
      check(info.size, name);
      const file = r.Path;
      this.list.push({
        filename: name,
        content: lazyStream(async () => createReadStream(file), this.budget, name),
        contentType: name.endsWith('.zip') ? 'application/zip' : name.endsWith('.csv') ? 'text/csv' : 'application/octet-stream',
      });
    }
  }

  private async addUserFile(entry: string, signal: AbortSignal, check: (size: number, what: string) => void): Promise<void> {
    const username = this.ctx.username;
    if (!username) {
      throw new Error(`attachment ${entry}: files can only be attached on an event that concerns a user (this execution has none)`);
    }
    this.files ??= await this.host.files.open(username);
    const files = this.files;
    let vp: string;
    try {
      vp = files.path(entry);
    } catch (err) {
      throw new Error(`attachment ${JSON.stringify(entry)} is not a valid path: ${(err as Error).message}`);
    }
    const info = await files.stat(vp, { signal }).catch((err: Error) => {
      throw new Error(`attachment ${vp} of user "${username}": ${err.message}`);
    });
    if (info.isDir) throw new Error(`attachment ${vp} of user "${username}" is a directory: only files can be attached`);
    check(info.size, vp);
    this.list.push({ filename: path.posix.basename(vp), content: lazyStream(() => files.openRead(vp, { signal }), this.budget, vp) });
  }

  async close(): Promise<void> {
    for (const a of this.list) if (a.content instanceof Readable) a.content.destroy();
    await this.files?.close().catch(() => undefined);
  }
}
