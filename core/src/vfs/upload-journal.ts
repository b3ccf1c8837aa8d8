import { randomUUID } from 'node:crypto';
import { mkdir, opendir, readFile, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { inject, Lifecycle, scoped } from 'tsyringe';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { TOKENS } from '../tokens.js';
import { isProcessTag, processTag, processTagAlive } from '../sdk/process-tag.js';

/** Folder under the data directory holding the journal, one sub-folder per process (see processTag). */
export const UPLOAD_JOURNAL_DIR = 'uploads-journal';

/** The quota counters an upload moves: its user's, and its virtual folder's when it writes into one. */
export interface JournalTarget {
  username: string;
  /** Name of the virtual folder written into, if any. */
  folder?: string;
}

/** One upload in flight, recorded until its quota counters are stored (or it failed). */
export interface JournalEntry {
  /** Forgets the upload (idempotent; errors are ignored: a stale entry only costs a rescan at start-up). */
  end(): void;
}

/** What start-up recovery found: the users and folders rescanned. */
interface InFlight {
  count: number;
  file: Promise<string>;
  /** Set while the entry lingers with no upload in flight (see UploadJournal.lingerMs). */
  linger?: NodeJS.Timeout;
}

/** How long an entry outlives the last upload of its target (see UploadJournal.lingerMs). */
export const JOURNAL_LINGER_MS = 1000;

export interface JournalRecovery {
  users: string[];
  folders: string[];
}

/**
 * Journal of uploads in flight, so that a restart after a crash can bring
 * the quota counters they were about to move back in line with storage.
 * An upload is recorded (one small file in this process's folder of
 * `<data_dir>/uploads-journal`) before any byte reaches the destination and
 * forgotten once its counters are stored or it failed: a process killed in
 * between (mid-write on a backend that writes in place, or between the
 * publication and the counter update) leaves the entry behind. At start-up,
 * recover() rescans the users and folders named by the entries of processes
 * that are gone (see processTagAlive: the folders of live processes sharing
 * the data directory are left alone) and removes them.
 *
 * The entries are written without fsync: they outlive the process (SIGKILL,
 * out of memory), not a power cut.
 *
 * An entry outlives the last upload of its target by `lingerMs`: a client
 * sending many files one after the other (an SFTP `put -r`, a sync job)
 * records its target once, not once per file (an entry costs a folder, a
 * file and their removal: 9 system calls). An entry left by a crash within
 * that time only costs the rescan of its target at start-up.
 */
@scoped(Lifecycle.ContainerScoped)
export class UploadJournal {
  private readonly root: string;
  private readonly dir: string;
  private ready?: Promise<void>;
  /** Targets with uploads in flight: their journal file and how many uploads hold it. */
  private readonly inFlight = new Map<string, InFlight>();
  /** How long an entry is kept after the last upload of its target ended (0: removed at once). */
  lingerMs = JOURNAL_LINGER_MS;

  constructor(
    @inject(TOKENS.Config) config: FerryConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {
    this.root = path.join(config.common.data_dir, UPLOAD_JOURNAL_DIR);
    this.dir = path.join(this.root, processTag());
  }

  private ensureDir(): Promise<void> {
    this.ready ??= this.removing
      .then(() => mkdir(this.dir, { recursive: true, mode: 0o700 }))
      .then(
        () => undefined,
        (err: unknown) => {
          this.ready = undefined;
          throw err;
        },
      );
    return this.ready;
  }

  /** The removal of this process's folder (and of the journal's, when no other process has one) in progress. */
  private removing: Promise<void> = Promise.resolve();

  /**
   * Once no upload is in flight, this process's folder goes, and the
   * journal's own folder when it is empty (other processes sharing the data
   * directory keep theirs): nothing stays behind an upload, whether it
   * completed or was cut. The next upload creates them again.
   */
  private removeIfIdle(): void {
    if (this.inFlight.size > 0 || !this.ready) return;
    this.ready = undefined;
    this.removing = this.removing
      .then(() => rmdir(this.dir))
      .then(() => rmdir(this.root))
      .catch(() => undefined); // not empty (an entry being written, another process): kept
  }

  /**
   * Records an upload about to write; resolves once the entry is on disk.
   * One entry per target (user, folder) while any upload to it is in flight
   * in this process: uploads to a target already recorded only count, so the
   * files of one multipart request (or concurrent uploads of one user) cost
   * one journal file, not one each. The file goes when the last of them ends.
   */
  async begin(target: JournalTarget): Promise<JournalEntry> {
    const key = `${target.username}\u0000${target.folder ?? ''}`;
    let rec = this.inFlight.get(key);
    if (rec?.linger) {
      clearTimeout(rec.linger);
      rec.linger = undefined;
    }
    if (!rec) {
      const created: InFlight = { count: 0, file: this.write(target) };
      rec = created;
      this.inFlight.set(key, created);
      // a failed write records nothing: the next upload to the target tries again
      created.file.catch(() => this.inFlight.get(key) === created && this.inFlight.delete(key));
    }
    const held = rec;
    held.count++;
    try {
      await held.file;
    } catch (err) {
      held.count--;
      throw err;
    }
    let ended = false;
    return {
      end: () => {
        if (ended) return;
        ended = true;
        if (--held.count > 0) return;
        if (this.lingerMs <= 0) return void this.forget(key, held);
        held.linger = setTimeout(() => {
          held.linger = undefined;
          if (held.count === 0) void this.forget(key, held);
        }, this.lingerMs);
        held.linger.unref();
      },
    };
  }

  /** Removes the entry of a target with no upload in flight (and the folders once none is left). */
  private forget(key: string, held: InFlight): Promise<void> {
    if (this.inFlight.get(key) === held) this.inFlight.delete(key);
    return held.file
      .then((file) => unlink(file))
      .then(
        () => this.removeIfIdle(),
        (err: unknown) => this.logger.warn({ err }, 'cannot remove an upload journal entry'),
      );
  }

  /** Removes the entries kept after their uploads (at shutdown: nothing stays behind a clean stop). */
  async flushLingering(): Promise<void> {
    const idle = [...this.inFlight].filter(([, rec]) => rec.count === 0 && rec.linger);
    await Promise.all(
      idle.map(([key, rec]) => {
        clearTimeout(rec.linger);
        rec.linger = undefined;
        return this.forget(key, rec);
      }),
    );
    await this.removing;
  }

  private async write(target: JournalTarget): Promise<string> {
    await this.ensureDir();
    const file = path.join(this.dir, randomUUID());
    await writeFile(file, JSON.stringify({ username: target.username, ...(target.folder ? { folder: target.folder } : {}) }), { flag: 'wx', mode: 0o600 });
    return file;
  }

  /**
   * The users and folders named by the entries of processes that are gone
   * (their folders are removed once `rescan` has run for every target).
   */
  async recover(rescan: (targets: JournalRecovery) => Promise<void>): Promise<JournalRecovery> {
    const users = new Set<string>();
    const folders = new Set<string>();
    const dead: string[] = [];
    let dir;
    try {
      dir = await opendir(this.root);
    } catch {
      return { users: [], folders: [] }; // no journal yet
    }
    for await (const proc of dir) {
      if (!proc.isDirectory() || !isProcessTag(proc.name) || processTagAlive(proc.name)) continue;
      const procDir = path.join(this.root, proc.name);
      dead.push(procDir);
      for await (const entry of await opendir(procDir)) {
        try {
          const t = JSON.parse(await readFile(path.join(procDir, entry.name), 'utf8')) as Partial<JournalTarget>;
          if (typeof t.username === 'string' && t.username) users.add(t.username);
          if (typeof t.folder === 'string' && t.folder) folders.add(t.folder);
        } catch {
          // an entry cut by the crash while it was written: its upload had not started
        }
      }
    }
    const found = { users: [...users].sort(), folders: [...folders].sort() };
    if (dead.length === 0) return found;
    await rescan(found);
    for (const d of dead) await rm(d, { recursive: true, force: true });
    return found;
  }
}
