/**
 * The upload queue of the file browser: picked files (with their relative
 * folders) into a target folder, a few at a time, each with its progress,
 * speed and time left; conflicts with existing names wait for the user's
 * choice (overwrite only where the folder allows it); large files go
 * through TUS (resumable), small ones in one request. No React here: the
 * hook in Uploads.tsx renders its snapshot.
 */
import type { UploadHandle } from './api';
import type { Picked } from './drop';
import { emptyDirs } from './drop';
import { joinPath } from './format';
import { keepBothName, RateMeter, secondsLeft } from './upload-math';

export type ConflictChoice = 'overwrite' | 'skip' | 'keep';
export type UploadStatus = 'checking' | 'conflict' | 'queued' | 'sending' | 'done' | 'failed' | 'skipped' | 'cancelled';

export interface UploadItem {
  id: number;
  /** The path shown: relative to the folder of the upload (`dir/sub/name`). */
  label: string;
  dest: string;
  size: number;
  sent: number;
  status: UploadStatus;
  /** Bytes per second, while sending. */
  rate: number;
  secondsLeft?: number;
  error?: string;
}

/** What the queue needs from the server. */
export interface UploadBackend {
  /** Names in a folder (an empty set when it does not exist yet). */
  names(dir: string): Promise<Set<string>>;
  /** Whether the user may overwrite files in a folder. */
  canOverwrite(dir: string): Promise<boolean>;
  /** Makes a folder and its missing parents. */
  mkdir(path: string): Promise<void>;
  /** Sends a file to `dest`; with `mkdirParents` its missing parent folders are made. */
  send(dest: string, file: File, onProgress: (sent: number) => void, mkdirParents: boolean): UploadHandle;
}

interface Job {
  item: UploadItem;
  file: File;
  meter: RateMeter;
  handle?: UploadHandle;
  cancelled?: boolean;
}

const parentOf = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';
const nameOf = (p: string) => p.slice(p.lastIndexOf('/') + 1);
const active = (s: UploadStatus) => s === 'checking' || s === 'conflict' || s === 'queued' || s === 'sending';

export class UploadQueue {
  private jobs: Job[] = [];
  private nextId = 1;
  private running = 0;
  /** The choice "apply to all" of the conflicts of this batch of picks, if given. */
  private always: ConflictChoice | undefined;
  /** Names per folder as listed, plus those this queue is sending there (a "keep both" must not take them). */
  private listed = new Map<string, Promise<Set<string>>>();
  private overwriteOk = new Map<string, Promise<boolean>>();

  constructor(
    private readonly backend: UploadBackend,
    private readonly onChange: () => void,
    private readonly onFileDone: () => void,
    private readonly parallel = 3,
    private readonly now: () => number = () => performance.now(),
  ) {}

  items(): UploadItem[] {
    return this.jobs.map((j) => j.item);
  }

  /** The first upload waiting for a conflict choice, and whether overwriting is allowed there. */
  async conflict(): Promise<{ item: UploadItem; canOverwrite: boolean } | undefined> {
    const job = this.jobs.find((j) => j.item.status === 'conflict');
    if (!job) return undefined;
    return { item: job.item, canOverwrite: await this.mayOverwrite(parentOf(job.item.dest)) };
  }

  private names(dir: string): Promise<Set<string>> {
    let p = this.listed.get(dir);
    if (!p) {
      p = this.backend.names(dir).catch(() => new Set<string>());
      this.listed.set(dir, p);
    }
    return p;
  }

  private mayOverwrite(dir: string): Promise<boolean> {
    let p = this.overwriteOk.get(dir);
    if (!p) {
      p = this.backend.canOverwrite(dir).catch(() => false);
      this.overwriteOk.set(dir, p);
    }
    return p;
  }

  private update(job: Job, p: Partial<UploadItem>): void {
    job.item = { ...job.item, ...p };
    this.onChange();
  }

  /** Queues what was picked, into `base`: empty folders are made, each file checked for a conflict, then sent. */
  async add(base: string, picked: Picked): Promise<void> {
    // a new batch: a previous "apply to all" does not carry over; listings are read again
    if (!this.jobs.some((j) => active(j.item.status))) {
      this.always = undefined;
      this.listed.clear();
      this.overwriteOk.clear();
    }
    const added = picked.files.map(({ file, path }) => {
      const job: Job = {
        file,
        meter: new RateMeter(),
        item: { id: this.nextId++, label: path, dest: joinPath(base, path), size: file.size, sent: 0, status: 'checking', rate: 0 },
      };
      return job;
    });
    // what the browser could not read is listed as failed, with the reason; the rest goes on
    const unreadable = (picked.unreadable ?? []).map(({ path, error }): Job => ({
      file: new File([], nameOf(path)),
      meter: new RateMeter(),
      item: { id: this.nextId++, label: path, dest: joinPath(base, path), size: 0, sent: 0, status: 'failed', rate: 0, error },
    }));
    this.jobs.push(...added, ...unreadable);
    this.onChange();
    for (const dir of emptyDirs(picked)) await this.backend.mkdir(joinPath(base, dir)).catch(() => undefined);
    for (const job of added) {
      if (job.cancelled) continue;
      const names = await this.names(parentOf(job.item.dest));
      if (names.has(nameOf(job.item.dest))) {
        if (this.always) await this.apply(job, this.always);
        else this.update(job, { status: 'conflict' });
      } else {
        names.add(nameOf(job.item.dest));
        this.update(job, { status: 'queued' });
      }
    }
    this.pump();
  }

  /** The user's choice for the conflict of upload `id`; with `all`, for every conflict of this batch. */
  async resolve(id: number, choice: ConflictChoice, all: boolean): Promise<void> {
    if (all) this.always = choice;
    const targets = this.jobs.filter((j) => j.item.status === 'conflict' && (all || j.item.id === id));
    for (const job of targets) await this.apply(job, choice);
    this.pump();
  }

  private async apply(job: Job, choice: ConflictChoice): Promise<void> {
    const dir = parentOf(job.item.dest);
    if (choice === 'overwrite' && !(await this.mayOverwrite(dir))) choice = 'keep';
    if (choice === 'skip') return this.update(job, { status: 'skipped' });
    if (choice === 'keep') {
      const names = await this.names(dir);
      const name = keepBothName(nameOf(job.item.dest), (n) => names.has(n));
      names.add(name);
      const label = job.item.label.includes('/') ? `${parentOf(job.item.label)}/${name}` : name;
      return this.update(job, { status: 'queued', dest: joinPath(dir, name), label });
    }
    this.update(job, { status: 'queued' });
  }

  private pump(): void {
    while (this.running < this.parallel) {
      const job = this.jobs.find((j) => j.item.status === 'queued');
      if (!job) return;
      this.start(job);
    }
  }

  private start(job: Job): void {
    this.running++;
    this.update(job, { status: 'sending' });
    job.meter.add(this.now(), 0);
    job.handle = this.backend.send(
      job.item.dest,
      job.file,
      (sent) => {
        job.meter.add(this.now(), sent);
        const rate = job.meter.rate();
        this.update(job, { sent, rate, secondsLeft: secondsLeft(job.item.size - sent, rate) });
      },
      job.item.label.includes('/'),
    );
    job.handle.done
      .then(
        () => this.update(job, { status: 'done', sent: job.item.size, rate: 0, secondsLeft: 0 }),
        (err: Error) => this.update(job, job.cancelled ? { status: 'cancelled', rate: 0 } : { status: 'failed', error: err.message, rate: 0 }),
      )
      .finally(() => {
        this.running--;
        this.onFileDone();
        this.pump();
      });
  }

  /** Stops an upload (a started TUS upload is deleted on the server) or takes it off the queue. */
  cancel(id: number): void {
    const job = this.jobs.find((j) => j.item.id === id);
    if (!job || !active(job.item.status)) return;
    job.cancelled = true;
    if (job.handle) job.handle.abort();
    else this.update(job, { status: 'cancelled' });
    this.pump();
  }

  /** Forgets the finished, failed, skipped and cancelled uploads. */
  clear(): void {
    this.jobs = this.jobs.filter((j) => active(j.item.status));
    this.onChange();
  }
}

export { active as isActive };
