import t from 'tap';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestApp } from '../../src/testing.js';
import { createLogger } from '../../src/logger.js';
import { TOKENS } from '../../src/tokens.js';
import { EventManager } from '../../src/event-manager/event-manager.js';
import { LogRotator } from '../../src/ops/log-rotator.js';

// Rotate logs (action 15 of @ferry/actions-builtin) with log.file set: the
// app logs to a real file through the same logger the server builds.
const dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-logs-'));
const logFile = path.join(dir, 'logs', 'ferry.log');
const logger = createLogger({ level: 'info', file: logFile });
const ta = await createTestApp({
  plugins: [{ name: '@ferry/actions-builtin' }],
  config: { log: { file: logFile, level: 'info' } },
  logger,
});
t.teardown(async () => {
  await ta.close();
  rmSync(dir, { recursive: true, force: true });
});
const token = await ta.adminToken();
const mgr = ta.app.container.resolve(EventManager);
const execs: { rule: string; ok: boolean; error?: string }[] = [];
mgr.onExecution((e) => execs.push(e));

const lines = (file: string) =>
  (existsSync(file) ? readFileSync(file, 'utf8') : '')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
/**
 * The file destination writes asynchronously (and pino's flush() does not
 * wait for it): wait, without a clock assertion, until a line is on disk.
 */
const written = async (file: string, pred: (l: Record<string, unknown>) => boolean, what: string) => {
  for (let i = 0; i < 2000; i++) {
    if (lines(file).some(pred)) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never written to ${path.basename(file)}: ${what}`);
};
const marker = (m: string) => (l: Record<string, unknown>) => l.marker === m;
const rotatedFiles = () =>
  readdirSync(path.dirname(logFile))
    .filter((n) => /^ferry\.log\.\d{8}T\d{9}$/.test(n))
    .sort();
const rotate = async () => {
  const r = await ta.inject('POST', '/api/v2/eventrules/run/rotate', { token });
  t.equal(r.statusCode, 202, r.payload);
  await mgr.idle();
};

t.test('rotate logs (15): the file is renamed, a new one is reopened and receives new lines, keep prunes the oldest', async (t) => {
  t.equal(
    (await ta.inject('POST', '/api/v2/eventactions', { token, payload: { name: 'rotate', type: 15, options: { rotate_logs_config: { keep: 2 } } } }))
      .statusCode,
    201,
  );
  const rule = await ta.inject('POST', '/api/v2/eventrules', { token, payload: { name: 'rotate', trigger: 6, actions: [{ name: 'rotate' }] } });
  t.equal(rule.statusCode, 201, rule.payload);

  logger.info({ marker: 'before-1' }, 'a line before the first rotation');
  t.ok(await written(logFile, marker('before-1'), 'before-1'), 'the app logs to log.file');

  await rotate();
  t.same(
    execs.map((e) => `${e.rule}:${e.ok}`),
    ['rotate:true'],
  );
  const first = rotatedFiles();
  t.equal(first.length, 1, 'one rotated file');
  const firstRotated = path.join(path.dirname(logFile), first[0]!);
  t.ok(lines(firstRotated).some(marker('before-1')), 'the rotated file holds the lines written before');
  t.ok(
    await written(logFile, (l) => l.msg === 'log file rotated' && l.rotated === firstRotated, 'rotation line'),
    'a new file was opened: the rotation is logged there',
  );
  t.notOk(lines(logFile).some(marker('before-1')), 'the new file holds no old line');

  logger.info({ marker: 'after-1' }, 'a line after the rotation');
  t.ok(await written(logFile, marker('after-1'), 'after-1'), 'new lines go to the new file');
  t.notOk(lines(firstRotated).some(marker('after-1')), 'and not to the rotated one');

  // two more rotations with keep 2: the oldest rotated file is removed
  logger.info({ marker: 'before-2' }, 'x');
  await written(logFile, marker('before-2'), 'before-2');
  await rotate();
  logger.info({ marker: 'before-3' }, 'x');
  await written(logFile, marker('before-3'), 'before-3');
  await rotate();
  const kept = rotatedFiles();
  t.equal(kept.length, 2, 'keep: 2 rotated files remain');
  t.notOk(kept.includes(first[0]!), 'the oldest one was pruned');
  t.ok(lines(path.join(path.dirname(logFile), kept[0]!)).some(marker('before-2')));
  t.ok(lines(path.join(path.dirname(logFile), kept[1]!)).some(marker('before-3')));
  t.ok(await written(logFile, (l) => l.msg === 'log file rotated' && l.rotated === path.join(path.dirname(logFile), kept[1]!), 'last rotation line'));
  t.same(
    execs.map((e) => e.ok),
    [true, true, true],
  );
});

t.test('rotations at the same instant never overwrite a rotated file', async (t) => {
  const rotator = ta.app.container.resolve<LogRotator>(TOKENS.LogRotator);
  const now = new Date('2030-01-02T03:04:05.006Z');
  logger.info({ marker: 'same-1' }, 'x');
  await written(logFile, marker('same-1'), 'same-1');
  const [a, b] = await Promise.all([rotator.rotate({ now }), rotator.rotate({ now })]);
  t.equal(a.rotated, `${logFile}.20300102T030405006`);
  t.equal(b.rotated, `${logFile}.20300102T030405007`, 'the second one takes the next free name');
  t.ok(
    lines(a.rotated).some((l) => l.marker === 'same-1'),
    'the first keeps the lines',
  );
  const c = await rotator.rotate({ now, keep: 1 });
  t.equal(c.rotated, `${logFile}.20300102T030405008`);
  t.same(rotatedFiles(), ['ferry.log.20300102T030405008'], 'keep 1 prunes by name order');
  t.equal(c.removed.length, 4, 'the two of the first test, then a and b');
});

t.test('a rotation ends once the new file is open, also when a write was in progress', async (t) => {
  const rotator = ta.app.container.resolve<LogRotator>(TOKENS.LogRotator);
  logger.info({ marker: 'open-1' }, 'x');
  await written(logFile, marker('open-1'), 'open-1');
  const a = await rotator.rotate();
  t.ok(existsSync(a.rotated), 'rotated');
  t.ok(existsSync(logFile), 'the new file exists when the rotation resolves');
  // enough lines to start a write of the batch: the destination reopens only after that write
  for (let i = 0; i < 400; i++) logger.info({ marker: 'burst', i, pad: 'x'.repeat(400) }, 'x');
  const b = await rotator.rotate();
  t.ok(existsSync(b.rotated), 'rotated during a write');
  t.ok(existsSync(logFile), 'the new file exists when that rotation resolves');
  const c = await rotator.rotate();
  t.not(c.rotated, '', 'so the next rotation finds a file to rotate');
  t.ok(
    [a.rotated, b.rotated, c.rotated].some((f) => lines(f).some((l) => l.marker === 'burst' && l.i === 399)),
    'no line lost between the files',
  );
});
