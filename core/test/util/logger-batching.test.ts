import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ACCESS_LOG_FLUSH_MS, ACCESS_LOG_MSG, createLogger } from '../../src/logger.js';

// The access log's lines are written in batches; every other line at once, with the access lines before it.
const dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-log-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 'ferry.log');
const logger = createLogger({ file });
const lines = () => {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; i?: number; password?: string });
  } catch {
    return [];
  }
};

async function until(ok: () => boolean, ms = 3000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(5)) if (ok()) return true;
  return ok();
}

t.test('a line other than the access log is written at once', async (t) => {
  logger.info({ port: 1 }, 'listening');
  t.ok(await until(() => lines().some((l) => l.msg === 'listening'), 300), 'written within 300 ms (well before a batch is due)');
});

t.test('access lines wait for a batch, then go out in order with the next other line', async (t) => {
  const before = lines().length;
  for (let i = 0; i < 5; i++) logger.info({ i }, ACCESS_LOG_MSG);
  await sleep(50);
  t.equal(lines().length, before, 'five access lines (far under a batch) are still held');
  logger.warn({ password: 'never-written' }, 'something to see');
  t.ok(await until(() => lines().some((l) => l.msg === 'something to see'), 300), 'the warning is written at once');
  const got = lines().slice(before);
  t.same(
    got.map((l) => (l.msg === ACCESS_LOG_MSG ? l.i : l.msg)),
    [0, 1, 2, 3, 4, 'something to see'],
    'the access lines first, in order',
  );
  t.equal(got[5]!.password, '[redacted]', 'redaction still applies');
});

t.test('access lines alone are written within the flush interval', async (t) => {
  const before = lines().length;
  logger.info({ i: 99 }, ACCESS_LOG_MSG);
  t.ok(await until(() => lines().length > before, ACCESS_LOG_FLUSH_MS * 3), 'written by the periodic flush');
});

t.test('a full batch is written without waiting', async (t) => {
  const before = lines().length;
  for (let i = 0; i < 200; i++) logger.info({ i, path: '/api/v2/user/files', status: 200 }, ACCESS_LOG_MSG);
  t.ok(await until(() => lines().length - before >= 100, 300), 'most of 200 lines (over 8 KiB) out at once');
});

t.test('to stdout: the access lines waiting are written when the process exits', async (t) => {
  const { execFileSync } = await import('node:child_process');
  const mod = new URL('../../src/logger.ts', import.meta.url).href;
  const script = `
    const { createLogger, ACCESS_LOG_MSG } = await import(${JSON.stringify(mod)});
    const logger = createLogger({});
    for (let i = 0; i < 3; i++) logger.info({ i }, ACCESS_LOG_MSG);
    process.exitCode = 0;
  `;
  const out = execFileSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], { encoding: 'utf8' });
  const got = out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { msg: string; i: number });
  t.same(
    got.map((l) => l.i),
    [0, 1, 2],
    'every line, in order',
  );
});
