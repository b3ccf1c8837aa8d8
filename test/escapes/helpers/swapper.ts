/**
 * The symlink swapper (not a test file): a worker thread that, until told to
 * stop, renames a real directory of a home away, puts a symlink to an
 * outside directory in its place, then removes the link and puts the
 * directory back, in a tight loop. It runs on its own thread, so its renames
 * truly interleave with the server's file system calls (run by the libuv
 * thread pool); it stops between cycles, leaving the real directory in place.
 * `holdMs` > 0 keeps each state (link, directory) that long before the next
 * swap (Atomics.wait): the swaps stay far more frequent than a request, and
 * the swapper leaves CPU to the server on a small machine.
 */
import { Worker } from 'node:worker_threads';

const SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { dir, target, flags, holdMs } = workerData;
const view = new Int32Array(flags);
const parked = dir + '.swap-parked';
let swaps = 0;
let errors = 0;
parentPort.postMessage('started');
while (Atomics.load(view, 0) === 0) {
  try {
    fs.renameSync(dir, parked);
    fs.symlinkSync(target, dir);
    if (holdMs > 0) Atomics.wait(view, 3, 0, holdMs);
    fs.unlinkSync(dir);
    fs.renameSync(parked, dir);
    swaps++;
    if (holdMs > 0) Atomics.wait(view, 3, 0, holdMs);
  } catch (err) {
    errors++;
    // put the real directory back whatever happened (a request may have created something at the name)
    try { if (fs.lstatSync(dir).isSymbolicLink()) fs.unlinkSync(dir); } catch {}
    try { fs.renameSync(parked, dir); } catch {}
    if (errors > 1000000) break;
  }
}
Atomics.store(view, 1, swaps);
Atomics.store(view, 2, errors);
`;

export interface Swapper {
  /** Stops after the current cycle; resolves with the number of completed swaps and failed cycles. */
  stop(): Promise<{ swaps: number; errors: number }>;
}

/** Starts swapping `dir` (an existing real directory) with a symlink to `target`. */
export async function startSwapper(dir: string, target: string, holdMs = 0): Promise<Swapper> {
  const flags = new SharedArrayBuffer(16);
  const view = new Int32Array(flags);
  const worker = new Worker(SOURCE, { eval: true, workerData: { dir, target, flags, holdMs } });
  const exited = new Promise<void>((resolve, reject) => {
    worker.once('exit', () => resolve());
    worker.once('error', reject);
  });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    async stop() {
      Atomics.store(view, 0, 1);
      await exited;
      return { swaps: Atomics.load(view, 1), errors: Atomics.load(view, 2) };
    },
  };
}
