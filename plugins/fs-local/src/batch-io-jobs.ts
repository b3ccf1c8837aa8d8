// The requests of fs-local's batch I/O (batch-io.ts) as jobs of @ferry/dir-calls's addon, answered
// in the shape the worker's JavaScript gives (batch-io-worker.ts), so that the callers see no difference.
import type { DirCallsAddon, DirJob, DirJobAnswer } from '@ferry/dir-calls';
import type { Answer, Message, WorkerRead, WorkerStat } from './batch-io-messages.js';

/**
 * The requests of a BatchIo as jobs of @ferry/dir-calls's addon (run()):
 * the system calls of each on the addon's I/O thread (sweeps on libuv's pool), the answer in the
 * shape a worker gives it.
 */
export class AddonJobsIo {
  constructor(private readonly addon: DirCallsAddon) {}

  ask(m: Message): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      try {
        const part = m.part ?? [0, 0];
        this.addon.run(m.op as DirJob, m.dir, m.names, m.max ?? 0, m.flags ?? 0, !!m.count, part[0], part[1], m.data ?? null, (a) => resolve(poolAnswer(m, a)));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }
}

/** A job's answer (DirJobAnswer) in the shape of a worker's (what the worker's JavaScript answers for the same message). */
function poolAnswer(m: Message, a: DirJobAnswer): Answer {
  const failed = a.failed ? { k: 'error' as const, code: a.failed.code, message: a.failed.message } : undefined;
  const errors = (): [number | string, WorkerStat][] => (a.errors ?? []).map(([at, code, message]) => [at, { k: 'error', code, message }]);
  switch (m.op) {
    case 'read':
    case 'readAt': {
      // a directory that cannot be opened: every name of a read fails with it; a readAt is answered as failed
      if (failed) return m.op === 'read' ? { id: 0, results: m.names.map(() => failed) } : { id: 0, results: [], failed };
      if (a.real !== undefined && a.real !== m.dir) return { id: 0, results: [], real: a.real };
      const meta = new Float64Array(a.meta ?? new ArrayBuffer(0));
      const results: WorkerRead[] = m.names.map((_, i) =>
        meta[5 * i] === 0 ? { k: 'read', at: meta[5 * i + 1]!, size: meta[5 * i + 2]!, mtimeMs: meta[5 * i + 3]!, mode: meta[5 * i + 4]! } : { k: 'large' },
      );
      for (const [i, code, message] of a.errors ?? []) results[i as number] = { k: 'error', code, message };
      return { id: 0, results, data: a.data, real: a.real };
    }
    case 'lstat':
      if (failed) return { id: 0, results: m.names.map((_, i) => [i, failed]), data: new Float64Array(m.names.length * 3).fill(NaN).buffer };
      return { id: 0, results: errors(), data: a.meta };
    case 'list':
    case 'listAt':
      if (failed) return { id: 0, results: [], failed };
      if (a.more) return { id: 0, results: [], more: true, real: a.real };
      return { id: 0, results: errors(), data: a.meta, names: a.names, real: a.real };
    case 'sweep':
      if (failed) return { id: 0, results: [], failed };
      return { id: 0, results: errors(), names: a.files, data: a.sizes, dirs: a.dirs, more: a.more };
    default:
      // put, replace, putReplace
      return { id: 0, results: [], failed, step: a.step, replaced: a.replaced };
  }
}
