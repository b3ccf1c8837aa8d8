import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import type { ActionContext, PluginHost, RecordedKind } from '@ferry/core';
import type { EventReport } from '../src/event-report.action.js';

// Event reports (type 19) are published whole: every file is written out of
// sight (the run's hidden working directory) and renamed into the reports
// directory once complete. A source or a write failing midway, or a file
// that cannot be published, leaves no file, not even a temporary one, and
// keeps a report already at the name; a run that succeeds replaces it.

const SUFFIX = 'c0ffee00'; // the random part of the names, fixed here so a test can put a file at a report's name
const RULE = 'rule';
const ACTION = 'report';
const FIRED = new Date('2026-11-28T10:00:00Z');
const BASE = `${RULE}-${ACTION}-20261128T100000-${SUFFIX}`;

/** Files of the reports directory that a user listing it sees. */
const visible = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => !n.startsWith('.')) : []);

/** The action module with its random suffix fixed, and its files' writes failing after `failAfter` bytes. */
async function load(t: Test, failAfter = Infinity) {
  const createWriteStream = ((file: fs.PathLike, options?: Parameters<typeof fs.createWriteStream>[1]) => {
    const ws = fs.createWriteStream(file, options) as fs.WriteStream & {
      _write: Writable['_write'];
      _writev?: Writable['_writev'];
    };
    let written = 0;
    const full = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const write = ws._write.bind(ws);
    ws._write = (chunk: Buffer, enc, cb) => {
      written += chunk.length;
      if (written > failAfter) return setImmediate(() => cb(full())); // as the file system answers: later
      write(chunk, enc, cb);
    };
    const writev = ws._writev?.bind(ws);
    if (writev)
      ws._writev = (chunks, cb) => {
        written += chunks.reduce((n, c) => n + (c.chunk as Buffer).length, 0);
        if (written > failAfter) return setImmediate(() => cb(full()));
        writev(chunks, cb);
      };
    return ws;
  }) as typeof fs.createWriteStream;
  return t.mockImport<typeof import('../src/event-report.action.js')>('../src/event-report.action.js', {
    'node:crypto': { ...crypto, randomBytes: (n: number) => Buffer.from(SUFFIX.repeat(n), 'hex').subarray(0, n) },
    'node:fs': { ...fs, createWriteStream },
  });
}

interface Source {
  /** Events of the kind; undefined: none. */
  rows?: number;
  /** Fails after that many events. */
  failAt?: number;
  /** Called after each event, with its index. */
  each?: (i: number) => void;
  /** Waits that many milliseconds before each event (a slow store). */
  delay?: number;
}

/** Runs a type 19 action over an event history of `sources` (per kind); its reports, or its error. */
async function run(
  t: Test,
  dir: string,
  o: { event_types: RecordedKind[]; compress?: boolean; failAfter?: number; signal?: AbortSignal },
  sources: Partial<Record<RecordedKind, Source>>,
): Promise<EventReport[]> {
  const { eventReportAction } = await load(t, o.failAfter);
  const host = {
    eventHistory: {
      async *events(kind: RecordedKind) {
        const s = sources[kind] ?? {};
        for (let i = 0; i < (s.rows ?? 0); i++) {
          if (s.delay) await sleep(s.delay);
          if (i === s.failAt) throw new Error(`the ${kind} event store failed`);
          yield { timestamp: FIRED.getTime() * 1e6 - i, action: 'upload', event: 1, username: `user${i}`, virtual_path: `/in/${'x'.repeat(80)}/${i}.csv` };
          s.each?.(i);
        }
      },
    },
  } as unknown as PluginHost;
  const def = eventReportAction(host, () => dir);
  const action = await def.create({ hours: 1, event_types: o.event_types, compress: o.compress ?? false });
  const noop = () => undefined;
  const ctx = {
    trigger: 6,
    ruleName: RULE,
    actionName: ACTION,
    params: {},
    render: (s: string) => s,
    signal: o.signal ?? new AbortController().signal,
    logger: { info: noop, warn: noop, error: noop, debug: noop },
    firedAt: FIRED.getTime(),
  } as unknown as ActionContext;
  const r = await action.execute(ctx);
  return (r as { outputs: { EventReports: EventReport[] } }).outputs.EventReports;
}

function scratch(t: Test): string {
  const root = mkdtempSync(path.join(tmpdir(), 'event-report-publish-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  return path.join(root, 'reports');
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\r\n').filter(Boolean);

t.test('a CSV report is published whole: nothing visible while it is written, the complete file after', async (t) => {
  const dir = scratch(t);
  const seen: string[][] = [];
  const reports = await run(
    t,
    dir,
    { event_types: ['fs', 'log'] },
    { fs: { rows: 2000, each: (i) => i % 500 === 0 && seen.push(visible(dir)) }, log: { rows: 3 } },
  );
  t.same(seen, [[], [], [], []], 'no report file visible while the CSVs are written');
  t.same(visible(dir).sort(), [`${BASE}-fs.csv`, `${BASE}-log.csv`]);
  t.same(readdirSync(dir).sort(), visible(dir).sort(), 'no working directory or temporary file left');
  t.same(
    reports.map((r) => [r.Name, r.Path, r.Format, r.Rows]),
    [
      [`${BASE}-fs.csv`, path.join(dir, `${BASE}-fs.csv`), 'csv', 2000],
      [`${BASE}-log.csv`, path.join(dir, `${BASE}-log.csv`), 'csv', 3],
    ],
  );
  const fsCsv = lines(path.join(dir, `${BASE}-fs.csv`));
  t.equal(fsCsv.length, 2001, 'the header and every row');
  t.match(fsCsv[2000], /,upload,user1999,\/in\/x+\/1999\.csv,/);
  t.equal(fs.statSync(path.join(dir, `${BASE}-fs.csv`)).mode & 0o777, 0o600);
});

t.test('a source failing midway leaves neither the CSV nor a temporary file', async (t) => {
  // fs is complete, log fails at once (likely before its file is even open) or after 1000 rows (about 100 KiB written)
  for (const failAt of [0, 1000]) {
    const dir = scratch(t);
    await t.rejects(run(t, dir, { event_types: ['fs', 'log'] }, { fs: { rows: 10 }, log: { rows: 2000, failAt } }), { message: 'the log event store failed' });
    t.same(readdirSync(dir), [], `failing at event ${failAt}: nothing in the reports directory`);
  }
});

t.test('a write failing midway (disk full) leaves nothing', async (t) => {
  const dir = scratch(t);
  await t.rejects(run(t, dir, { event_types: ['fs'], failAfter: 50_000 }, { fs: { rows: 2000 } }), { code: 'ENOSPC' });
  t.same(readdirSync(dir), []);
  // the write fails while the report waits for the store, not for the file: the action's error still, not an uncaught one
  const dir2 = scratch(t);
  await t.rejects(run(t, dir2, { event_types: ['fs'], failAfter: 1_000 }, { fs: { rows: 100, delay: 2 } }), { code: 'ENOSPC' });
  t.same(readdirSync(dir2), []);
});

t.test('a zipped report: a source failing midway leaves nothing either', async (t) => {
  const dir = scratch(t);
  await t.rejects(run(t, dir, { event_types: ['fs', 'log'], compress: true }, { fs: { rows: 10 }, log: { rows: 2000, failAt: 1000 } }), {
    message: 'the log event store failed',
  });
  t.same(readdirSync(dir), []);
});

t.test('a report already at the name: kept by a failed run, replaced by a successful one', async (t) => {
  for (const compress of [false, true]) {
    await t.test(compress ? 'zip' : 'csv', async (t) => {
      const dir = scratch(t);
      mkdirSync(dir, { recursive: true });
      const names = compress ? [`${BASE}.zip`] : [`${BASE}-fs.csv`, `${BASE}-log.csv`];
      for (const n of names) writeFileSync(path.join(dir, n), `earlier report ${n}\r\n`);
      const earlier = () => names.map((n) => readFileSync(path.join(dir, n), 'utf8'));
      const before = earlier();

      await t.rejects(run(t, dir, { event_types: ['fs', 'log'], compress }, { fs: { rows: 2000 }, log: { rows: 2000, failAt: 1500 } }), {
        message: 'the log event store failed',
      });
      t.same(earlier(), before, 'a source failing midway: the earlier reports are intact');
      t.same(readdirSync(dir).sort(), names, 'and nothing else is left');

      await t.rejects(run(t, dir, { event_types: ['fs', 'log'], compress, failAfter: 60_000 }, { fs: { rows: 2000 }, log: { rows: 2000 } }), {
        code: 'ENOSPC',
      });
      t.same(earlier(), before, 'a write failing midway: the earlier reports are intact');
      t.same(readdirSync(dir).sort(), names);

      // as when the files were written in place: a run that succeeds replaces a report of the same name
      const reports = await run(t, dir, { event_types: ['fs', 'log'], compress }, { fs: { rows: 5 }, log: { rows: 7 } });
      t.same(
        reports.map((r) => r.Name),
        names,
      );
      t.same(readdirSync(dir).sort(), names);
      if (!compress) {
        t.equal(lines(path.join(dir, names[0]!)).length, 6, 'the new fs report');
        t.equal(lines(path.join(dir, names[1]!)).length, 8, 'the new log report');
      } else t.equal(reports[0]!.Rows, 12, 'the new zip');
    });
  }
});

t.test('a CSV that cannot be published undoes the ones published before it, and keeps what they replaced', async (t) => {
  const dir = scratch(t);
  mkdirSync(path.join(dir, `${BASE}-log.csv`), { recursive: true }); // a directory at the log CSV's name: its rename fails
  writeFileSync(path.join(dir, `${BASE}-fs.csv`), 'earlier fs report\r\n');
  await t.rejects(run(t, dir, { event_types: ['fs', 'log'] }, { fs: { rows: 10 }, log: { rows: 10 } }));
  t.same(readdirSync(dir).sort(), [`${BASE}-fs.csv`, `${BASE}-log.csv`], 'no temporary file or working directory left');
  t.equal(readFileSync(path.join(dir, `${BASE}-fs.csv`), 'utf8'), 'earlier fs report\r\n', 'the earlier fs report is back');
  t.same(readdirSync(path.join(dir, `${BASE}-log.csv`)), [], 'the directory in the way untouched');
});

t.test('a run cancelled midway (its signal aborted: the action timed out, the server stops) stops reading and leaves nothing', async (t) => {
  for (const compress of [false, true]) {
    const dir = scratch(t);
    const ac = new AbortController();
    let read = 0;
    const err = await run(
      t,
      dir,
      { event_types: ['fs', 'log'], compress, signal: ac.signal },
      {
        fs: {
          rows: 100_000,
          each: (i) => {
            read = i + 1;
            if (i === 500) ac.abort(new Error('the action timed out'));
          },
        },
        log: { rows: 3 },
      },
    ).then(
      () => null,
      (e: Error) => e,
    );
    t.match(err?.message, /the action timed out/, `compress ${compress}: the run fails with the signal's reason`);
    t.ok(read <= 502, `compress ${compress}: reading stopped (${read} events read of 100000)`);
    t.same(existsSync(dir) ? readdirSync(dir) : [], [], `compress ${compress}: no report, no working directory`);
  }
});
