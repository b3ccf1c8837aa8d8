/**
 * One op of a symlink-swap race (not a test file), whatever the protocol:
 * the swapper (helpers/swapper.ts) swaps a real directory of the home with
 * a symlink to the op's canary directory while `concurrency` workers fire
 * the op's requests below it. After every answer the op's canary directory
 * is compared with its state before the race, the world's canary leaks are
 * looked at, and the op's own check runs; the op stops at its first escape.
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { Test } from 'tap';
import { startSwapper } from './swapper.js';
import { homeFiles, snapshotTree, type User, type World } from './world.js';

export interface RaceOp<R> {
  name: string;
  /** Inside the swapped directory: files f-<i>.txt / directories d-<i> (as in the canary). */
  files?: number;
  dirs?: number;
  /** Requests per user: [provider 0, provider 4] (provider 4 reads and writes cost an scrypt each: fewer). */
  n: [number, number];
  /** Concurrent requests (default 4). */
  concurrency?: number;
  fire(u: User, i: number): Promise<R>;
  /**
   * Keeps firing past `n` (up to 4 n) until the outcomes so far satisfy this:
   * for an op whose successes are rare while the swapper runs (a long SCP
   * transfer through provider 4 on a loaded machine), so that the race shows
   * a success without every run paying for the worst case.
   */
  until?(outcomes: Record<string, number>): boolean;
  /** An escape seen elsewhere than in the canary or the answer (`baseline`: files in the home before the race). */
  check?(u: User, i: number, r: R, baseline: number): Promise<string | undefined>;
}

export interface RaceResult {
  user: string;
  op: string;
  requests: number;
  escapedAfter?: number;
  what?: string;
  /** Answers by outcome (an HTTP status, an SFTP status name...). */
  outcomes: Record<string, number>;
  /** Answers that were not complete, well-formed ones (at most a few kept). */
  bad: string[];
  badCount: number;
  swaps: number;
  /** Whether the real directory was back in place after the swapper stopped. */
  restored: boolean;
  ms: number;
}

/**
 * Runs `op` for `u` against the swap of `swapRel` (relative to the home) with
 * the canary directory `<u.outside>/<op.name>`. `judge` names an answer's
 * outcome, and says what is wrong with it when it is not a complete,
 * well-formed answer.
 */
export async function raceOp<R>(
  w: World,
  u: User,
  op: RaceOp<R>,
  swapRel: string,
  judge: (r: R) => { outcome: string; bad?: string },
  holdMs: number,
): Promise<RaceResult> {
  const canaryDir = path.join(u.outside, op.name);
  const before = snapshotTree(canaryDir);
  const leaksBefore = w.canary.leaks.length;
  const n = op.n[u.provider === 0 ? 0 : 1];
  const outcomes: Record<string, number> = {};
  const bad: string[] = [];
  let badCount = 0;
  let next = 0;
  let completed = 0;
  let escape: { after: number; what: string } | undefined;
  // files in the home before the swap starts (walking it during the swap would race with the swapper)
  const baseline = (await homeFiles(u.home)).size;
  const detect = async (i: number, r: R): Promise<string | undefined> => {
    const leak = w.canary.leaks[leaksBefore];
    if (leak) return `${leak.what} in the answer to ${leak.label} (${leak.status})`;
    const now = snapshotTree(canaryDir);
    for (const k of new Set([...Object.keys(before), ...Object.keys(now)])) {
      if (before[k] !== now[k]) return `canary ${op.name}/${k} changed: ${before[k] ?? '(absent)'} -> ${now[k] ?? '(absent)'}`;
    }
    return op.check?.(u, i, r, baseline);
  };
  const started = Date.now();
  const swapDir = path.join(u.home, swapRel);
  const swapper = await startSwapper(swapDir, canaryDir, holdMs);
  let swaps = 0;
  try {
    await Promise.all(
      Array.from({ length: op.concurrency ?? 4 }, async () => {
        while (!escape && (next < n || (op.until && !op.until(outcomes) && next < 4 * n))) {
          const i = next++;
          const r = await op.fire(u, i);
          completed++;
          const j = judge(r);
          outcomes[j.outcome] = (outcomes[j.outcome] ?? 0) + 1;
          if (j.bad) {
            badCount++;
            if (bad.length < 5 && !bad.includes(j.bad)) bad.push(j.bad);
          }
          const what = escape ? undefined : await detect(i, r);
          if (what && !escape) escape = { after: completed, what };
        }
      }),
    );
  } finally {
    swaps = (await swapper.stop()).swaps;
  }
  const restored = (await lstat(swapDir)).isDirectory();
  return {
    user: u.name,
    op: op.name,
    requests: completed,
    escapedAfter: escape?.after,
    what: escape?.what,
    outcomes,
    bad,
    badCount,
    swaps,
    restored,
    ms: Date.now() - started,
  };
}

/** Outcomes summed over results: "outcome x count" pairs. */
export function summary(outcomes: Record<string, number>): string {
  return Object.entries(outcomes)
    .map(([s, k]) => `${s}x${k}`)
    .join(' ');
}

/**
 * Runs every op for `u` against the swap of its `r-<op name>` directory and
 * asserts what every protocol's race suite asserts: the real directory back,
 * no escape, every answer well-formed, the swapper swapping during every op,
 * and the race live (`live`: successes and refusals both among the outcomes).
 * `unit` names the requests in the messages ("requests", "commands").
 */
export async function raceUser<R>(
  t: Test,
  w: World,
  u: User,
  o: { ops: RaceOp<R>[]; judge: (r: R) => { outcome: string; bad?: string }; holdMs: number; live: (outcomes: string[]) => boolean; unit?: string },
): Promise<RaceResult[]> {
  const unit = o.unit ?? 'requests';
  const mine: RaceResult[] = [];
  for (const op of o.ops) {
    const r = await raceOp(w, u, op, `r-${op.name}`, o.judge, o.holdMs);
    mine.push(r);
    t.ok(r.restored, `${op.name}: the real directory is back`);
    t.notOk(
      r.escapedAfter,
      `${u.name} ${op.name}: ${r.escapedAfter ? `ESCAPED after ${r.escapedAfter} ${unit}: ${r.what}` : `held for ${r.requests} ${unit}`} [${summary(r.outcomes)}]`,
    );
    t.same(r.bad, [], `${u.name} ${op.name}: every answer well-formed (${r.badCount} not)`);
  }
  t.ok(
    mine.every((r) => r.swaps > 0),
    'the swapper swapped during every op',
  );
  const outcomes = [...new Set(mine.flatMap((r) => Object.keys(r.outcomes)))];
  t.ok(o.live(outcomes), `the race was live: successes and refusals both seen (${outcomes.join(', ')})`);
  return mine;
}

/** After the races: each op's figures as comments, then no canary content in any answer and the canary untouched. */
export function canaryAfterRaces(t: Test, w: World, results: RaceResult[]): void {
  for (const r of results)
    t.comment(
      `${r.user} ${r.op}: ${r.escapedAfter ? `escaped after ${r.escapedAfter}` : `held ${r.requests}`} (${r.swaps} swaps, ${r.ms} ms) [${summary(r.outcomes)}]`,
    );
  t.same(w.canary.leaks.slice(0, 20), [], 'no answer held canary content, digests or names');
  for (const { root, diff } of w.canary.changes()) t.same(diff.slice(0, 30), [], `${path.relative(w.dataDir, root)}: not written, renamed, removed or touched`);
}
