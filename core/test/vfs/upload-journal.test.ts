import 'reflect-metadata';
import t from 'tap';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UPLOAD_JOURNAL_DIR, UploadJournal } from '../../src/vfs/upload-journal.js';
import { processTag } from '../../src/sdk/process-tag.js';
import type { FerryConfig } from '../../src/config/schema.js';
import type { Logger } from '../../src/logger.js';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'ferry-journal-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const warnings: unknown[] = [];
const logger = { warn: (o: unknown) => warnings.push(o) } as unknown as Logger;
const journal = new UploadJournal({ common: { data_dir: dataDir } } as unknown as FerryConfig, logger);
// these tests see the entries go as their uploads end; the lingering is tested below
journal.lingerMs = 0;
const own = path.join(dataDir, UPLOAD_JOURNAL_DIR, processTag());
const entries = () => (existsSync(own) ? readdirSync(own).map((f) => JSON.parse(readFileSync(path.join(own, f), 'utf8')) as object) : []);
const settle = () => new Promise((r) => setTimeout(r, 50));

t.test('one journal file per target while any of its uploads is in flight', async (t) => {
  const started = await Promise.all(Array.from({ length: 50 }, () => journal.begin({ username: 'alice' })));
  const folder = await journal.begin({ username: 'alice', folder: 'shared' });
  const bob = await journal.begin({ username: 'bob' });
  t.same(
    entries()
      .map((e) => `${(e as { username: string }).username}/${(e as { folder?: string }).folder ?? ''}`)
      .sort(),
    ['alice/', 'alice/shared', 'bob/'],
    '50 uploads of one target share one entry; other targets have their own',
  );

  for (const e of started.slice(0, 49)) e.end();
  started[0]!.end(); // ending twice counts once
  await settle();
  t.equal(entries().length, 3, 'kept while one upload of the target is still in flight');
  started[49]!.end();
  await settle();
  t.same(entries().length, 2, 'removed with the last one');
  const again = await journal.begin({ username: 'alice' });
  await settle();
  t.equal(entries().length, 3, 'a later upload records the target again');
  for (const e of [again, folder, bob]) e.end();
  await settle();
  t.same(entries(), []);
  t.same(warnings, []);
});

t.test('start-up recovery rescans the targets of dead processes only, then forgets them', async (t) => {
  const dead = path.join(dataDir, UPLOAD_JOURNAL_DIR, '999999999-12345');
  mkdirSync(dead, { recursive: true });
  writeFileSync(path.join(dead, 'a'), JSON.stringify({ username: 'carol', folder: 'f1' }));
  writeFileSync(path.join(dead, 'b'), '{"username":'); // cut by the crash while written
  const live = await journal.begin({ username: 'dave' });
  const rescanned: unknown[] = [];
  const found = await journal.recover(async (targets) => void rescanned.push(targets));
  t.same(found, { users: ['carol'], folders: ['f1'] });
  t.same(rescanned, [found], 'rescanned once, before the entries are forgotten');
  t.notOk(existsSync(dead), "the dead process's entries are removed");
  t.same(entries(), [{ username: 'dave' }], "this process's entries are left alone");
  live.end();
});

t.test('nothing stays once no upload is in flight; an upload started meanwhile gets its folder back', async (t) => {
  const root = path.join(dataDir, UPLOAD_JOURNAL_DIR);
  const other = path.join(root, 'other-process-folder');
  const a = await journal.begin({ username: 'carol' });
  t.ok(existsSync(own), "the process's folder exists while an upload is in flight");
  a.end();
  await settle();
  t.notOk(existsSync(own), "the process's folder is gone with the last upload");
  t.notOk(existsSync(root), 'and the journal folder, empty');

  // an upload beginning while the folder is being removed
  const b = await journal.begin({ username: 'carol' });
  b.end();
  const c = await journal.begin({ username: 'dave' });
  await settle();
  t.same(entries(), [{ username: 'dave' }], 'the new entry is on disk');
  mkdirSync(other, { recursive: true });
  c.end();
  await settle();
  t.notOk(existsSync(own), 'gone again');
  t.ok(existsSync(other), "another process's folder is left alone (and the journal folder with it)");
  rmSync(other, { recursive: true });
});

t.test('an entry outlives the last upload of its target by lingerMs: uploads one after the other record it once', async (t) => {
  const lingering = new UploadJournal({ common: { data_dir: dataDir } } as unknown as FerryConfig, logger);
  lingering.lingerMs = 300;
  const a = await lingering.begin({ username: 'erin' });
  const [file] = readdirSync(own);
  a.end();
  await settle();
  t.same(readdirSync(own), [file], 'kept after the upload ended');
  const b = await lingering.begin({ username: 'erin' });
  b.end();
  await settle();
  t.same(readdirSync(own), [file], 'the next upload used the same entry (no new file)');
  // gone once the linger passed without an upload (bounded wait)
  for (let i = 0; i < 100 && existsSync(own); i++) await settle();
  t.notOk(existsSync(own), 'removed after the linger, with its folder');

  const c = await lingering.begin({ username: 'erin' });
  c.end();
  t.ok(existsSync(own), 'recorded again by a later upload');
  await lingering.flushLingering();
  t.notOk(existsSync(own), 'flushLingering (at shutdown) removes what lingers at once');
  t.same(warnings, []);
});
