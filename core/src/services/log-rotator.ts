import { readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { inject, injectable } from 'tsyringe';
import { pino } from 'pino';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';

export interface RotateResult {
  /** The rotated file, or '' when logs go to standard output. */
  rotated: string;
  /** Older rotated files removed to honour `keep`. */
  removed: string[];
}

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
export class LogRotator {
  constructor(
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  async rotate(o: { keep?: number; now?: Date } = {}): Promise<RotateResult> {
    const file = this.config.log.file;
    if (!file) return { rotated: '', removed: [] };
    const abs = path.resolve(file);
    const target = `${abs}.${stamp(o.now ?? new Date())}`;
    const stream = (this.logger as unknown as Record<symbol, { reopen?: (f?: string) => void; flushSync?: () => void }>)[pino.symbols.streamSym];
    try {
      stream?.flushSync?.();
    } catch {
      /* not ready yet: reopen flushes what is buffered */
    }
    await rename(abs, target).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    stream?.reopen?.();
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
    this.logger.info({ component: 'logs', rotated: target, removed: removed.length }, 'log file rotated');
    return { rotated: target, removed };
  }
}
