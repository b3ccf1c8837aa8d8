import { once } from 'node:events';
import type { EventEmitter } from 'node:events';
import { access, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { inject, injectable } from 'tsyringe';
import { pino } from 'pino';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { LogRotation } from '../sdk/host.js';
import type { RotateResult } from '../sdk/log-rotation.js';

export type { RotateResult } from '../sdk/log-rotation.js';

/** The logger's file destination (sonic-boom), as far as rotation uses it. */
type Destination = EventEmitter & { reopen?: (f?: string) => void; flushSync?: () => void; _opening?: boolean; _reopening?: boolean };

/** How long a rotation waits for the new log file to be open. */
const REOPEN_TIMEOUT_MS = 10_000;

/**
 * Reopens the destination and resolves once the new file is open. The
 * destination opens it asynchronously, and later still when a write is in
 * progress (it reopens after the write): until then the file does not exist,
 * and a rotation right after this one would find nothing to rename.
 */
async function reopenFile(stream: Destination): Promise<void> {
  stream.reopen?.();
  if (!stream._opening && !stream._reopening) return;
  await once(stream, 'ready', { signal: AbortSignal.timeout(REOPEN_TIMEOUT_MS) });
}

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

function stamp(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}T${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}${p(d.getUTCMilliseconds(), 3)}`;
}

/**
 * Rotates the log file (config log.file): renames it to
 * `<file>.<UTC timestamp>` and reopens the logger's destination on a new
 * file. Does nothing when the logs go to standard output.
 */
@injectable()
export class LogRotator implements LogRotation {
  constructor(
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  private queue: Promise<unknown> = Promise.resolve();

  /** Rotates now; rotations requested at the same time run one after the other. */
  rotate(o: { keep?: number; now?: Date } = {}): Promise<RotateResult> {
    const run = this.queue.then(() => this.rotateNow(o));
    this.queue = run.catch(() => {});
    return run;
  }

  private async rotateNow(o: { keep?: number; now?: Date }): Promise<RotateResult> {
    const file = this.config.log.file;
    if (!file) return { rotated: '', removed: [] };
    const abs = path.resolve(file);
    // a rotated file is never overwritten: two rotations in the same millisecond take the next free one
    let at = (o.now ?? new Date()).getTime();
    while (await exists(`${abs}.${stamp(new Date(at))}`)) at++;
    const target = `${abs}.${stamp(new Date(at))}`;
    const stream = (this.logger as unknown as Record<symbol, Destination | undefined>)[pino.symbols.streamSym];
    try {
      stream?.flushSync?.();
    } catch {
      /* not ready yet: reopen flushes what is buffered */
    }
    const renamed = await rename(abs, target).then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        return false; // nothing logged yet
      },
    );
    if (stream) await reopenFile(stream);
    const removed: string[] = [];
    if (o.keep && o.keep > 0) {
      const dir = path.dirname(abs);
      const base = path.basename(abs) + '.';
      const rotated = (await readdir(dir)).filter((n) => n.startsWith(base) && /^\d{8}T\d{9}$/.test(n.slice(base.length))).sort();
      for (const n of rotated.slice(0, Math.max(0, rotated.length - o.keep))) {
        await rm(path.join(dir, n), { force: true });
        removed.push(path.join(dir, n));
      }
    }
    this.logger.info({ component: 'logs', rotated: renamed ? target : '', removed: removed.length }, 'log file rotated');
    return { rotated: renamed ? target : '', removed };
  }
}
