// Single-entry lookups made on the calling thread (src/entry-stat.ts): the same
// answers lstat gives, a missing entry as null, other errors as lstat's.
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { lstatEntry, lstatEntryOrNull } from '../src/entry-stat.js';

t.test('lstatEntry and lstatEntryOrNull answer as lstat does', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ferry-entry-stat-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'file'), 'four');
  await symlink('/etc/passwd', path.join(dir, 'link'));

  const st = await lstatEntry(path.join(dir, 'file'));
  t.ok(st.isFile(), 'a file');
  t.equal(st.size, 4);
  t.ok((await lstatEntry(path.join(dir, 'link'))).isSymbolicLink(), 'a link is not followed');
  t.ok(lstatEntryOrNull(path.join(dir, 'link'))?.isSymbolicLink(), 'nor by lstatEntryOrNull');
  t.equal(lstatEntryOrNull(path.join(dir, 'file'))?.size, 4);

  await t.rejects(lstatEntry(path.join(dir, 'missing')), { code: 'ENOENT' }, 'a missing entry rejects (it does not throw)');
  t.equal(lstatEntryOrNull(path.join(dir, 'missing')), null, 'a missing entry is null');
  t.throws(() => lstatEntryOrNull(path.join(dir, 'file', 'below')), { code: 'ENOTDIR' }, 'other errors are thrown');
  await t.rejects(lstatEntry(path.join(dir, 'file', 'below')), { code: 'ENOTDIR' });
});
