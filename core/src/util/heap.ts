import v8 from 'node:v8';

/**
 * The V8 flag that fixes how far the old generation may grow past the live
 * heap after a full GC, or undefined when V8 keeps its own choice (`percent`
 * 0, or the process was started with an explicit --heap-growing-percent).
 *
 * Why: V8 picks the factor itself (1.1 to 4), and after its memory reducer
 * ran (an idle server) it grows the heap slowly, at most 1.3x. A transfer
 * turns over a 64 KiB socket buffer per read; with the limit that close to
 * the live heap (about 45 MB for a server with its plugins loaded), V8
 * starts a new full marking cycle as soon as one ends, and the garbage
 * collector takes about as much CPU as the data path itself (measured by
 * bench/remote-http.bench.mjs: a 256 MiB download from s3rver used 0.9-1.2 s
 * of server CPU, 0.35-0.5 s with a factor of 2).
 */
export function heapGrowingFlag(percent: number, execArgv: readonly string[] = process.execArgv): string | undefined {
  if (!Number.isInteger(percent) || percent <= 0) return undefined;
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent(=|$)/.test(a))) return undefined;
  return `--heap-growing-percent=${percent}`;
}

/** Applies heapGrowingFlag() to this process (V8 reads it at every heap limit computation); returns the flag set, if any. */
export function tuneHeapGrowth(percent: number): string | undefined {
  const flag = heapGrowingFlag(percent);
  if (flag) v8.setFlagsFromString(flag);
  return flag;
}
