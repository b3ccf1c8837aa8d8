/** Unit tests of the file operations' pure logic: selection, paths of moves and copies, permissions, previews. */
import t from 'tap';
import { allState, selectedInOrder, toggleSelection } from '../app/src/selection.js';
import { baseName, destinationOf, failures, parentOf, placementProblem, zipUrl } from '../app/src/file-paths.js';
import { allowedActions } from '../app/src/permissions.js';
import { previewKind, textPreview } from '../app/src/preview/kind.js';

const order = ['/a', '/b', '/c', '/d', '/e'];

t.test('selection: a click toggles one entry, a shift-click sets the range from the last clicked one', async (t) => {
  let s: Set<string> = toggleSelection(new Set(), order, '/b');
  t.same([...s], ['/b']);
  s = toggleSelection(s, order, '/d', '/b', true);
  t.same(selectedInOrder(s, order), ['/b', '/c', '/d'], 'shift-click selects b..d');
  s = toggleSelection(s, order, '/a', '/d', true);
  t.same(selectedInOrder(s, order), ['/a', '/b', '/c', '/d'], 'backwards range');
  s = toggleSelection(s, order, '/c', '/a', true);
  t.same(selectedInOrder(s, order), ['/d'], 'a shift-click on a selected entry clears the range');
  s = toggleSelection(s, order, '/d');
  t.same([...s], [], 'a plain click on a selected entry clears it');
  t.same([...toggleSelection(new Set(), order, '/c', '/gone', true)], ['/c'], 'an anchor no longer listed: a plain toggle');
  t.same([...toggleSelection(new Set(), order, '/c', null, true)], ['/c'], 'no anchor: a plain toggle');
  const before = new Set(['/a']);
  toggleSelection(before, order, '/b');
  t.same([...before], ['/a'], 'the given set is not changed');
});

t.test('selection: listed entries only, in list order; the select-all state', async (t) => {
  t.same(selectedInOrder(new Set(['/e', '/gone', '/a']), order), ['/a', '/e']);
  t.equal(allState(new Set(), order), 'none');
  t.equal(allState(new Set(['/a', '/gone']), order), 'some');
  t.equal(allState(new Set(order), order), 'all');
  t.equal(allState(new Set(), []), 'none', 'an empty list is never "all"');
});

t.test('paths of moves and copies', async (t) => {
  t.equal(baseName('/x/y/z.txt'), 'z.txt');
  t.equal(parentOf('/x/y/z.txt'), '/x/y');
  t.equal(parentOf('/z.txt'), '/');
  t.equal(destinationOf('/x/y/z.txt', '/'), '/z.txt');
  t.equal(destinationOf('/z.txt', '/docs'), '/docs/z.txt');
  t.equal(placementProblem('/docs', '/docs', 'copy'), 'into-itself');
  t.equal(placementProblem('/docs', '/docs/sub', 'move'), 'into-itself');
  t.equal(placementProblem('/docs', '/docsother', 'move'), '', 'a name sharing a prefix is another folder');
  t.equal(placementProblem('/docs/a.txt', '/docs', 'move'), 'same-folder');
  t.equal(placementProblem('/docs/a.txt', '/docs', 'copy'), '', "a copy into its own folder is the server's to refuse (it exists)");
  t.equal(placementProblem('/a.txt', '/docs', 'move'), '');
});

t.test('the zip URL carries each path as a repeated, encoded `path` parameter', async (t) => {
  const u = new URL(zipUrl(['/a b.txt', '/d&e/f', '/ü']), 'http://x');
  t.equal(u.pathname, '/api/v2/user/streamzip');
  t.same(u.searchParams.getAll('path'), ['/a b.txt', '/d&e/f', '/ü']);
  t.same(failures([{ path: '/a' }, { path: '/b', error: 'no' }]), [{ path: '/b', error: 'no' }]);
});

t.test('permissions: per-folder permissions and web client options as the actions offered', async (t) => {
  const ro = allowedActions(['list', 'download'], []);
  t.same(ro, {
    list: true,
    download: true,
    upload: false,
    overwrite: false,
    deleteFiles: false,
    deleteDirs: false,
    renameFiles: false,
    renameDirs: false,
    createDirs: false,
    copy: false,
  });
  const all = allowedActions(['*'], []);
  t.ok(Object.values(all).every(Boolean), '"*" allows everything');
  const split = allowedActions(['list', 'delete_files', 'rename_dirs'], []);
  t.ok(split.deleteFiles);
  t.notOk(split.deleteDirs);
  t.ok(split.renameDirs);
  t.notOk(split.renameFiles);
  const both = allowedActions(['delete', 'rename'], []);
  t.ok(both.deleteDirs && both.deleteFiles && both.renameDirs && both.renameFiles, 'delete and rename cover files and folders');
  const wd = allowedActions(['*'], ['write-disabled', 'shares-disabled']);
  t.same(
    Object.entries(wd)
      .filter(([, v]) => v)
      .map(([k]) => k),
    ['list', 'download'],
    'write-disabled leaves reading only',
  );
  t.same(Object.values(allowedActions([], [])).filter(Boolean), [], 'no permission: nothing');
});

t.test('previews: kinds by extension; text cut on a character boundary', async (t) => {
  t.equal(previewKind('photo.JPG'), 'image');
  t.equal(previewKind('a.svg'), 'image');
  t.equal(previewKind('notes.md'), 'text');
  t.equal(previewKind('page.html'), 'text', 'HTML is shown as text');
  t.equal(previewKind('README'), 'text');
  t.equal(previewKind('doc.pdf'), 'pdf');
  t.equal(previewKind('song.wav'), 'audio');
  t.equal(previewKind('clip.webm'), 'video');
  t.equal(previewKind('archive.zip'), null);
  t.equal(previewKind('.bashrc'), null, 'a dot file without extension');
  t.equal(previewKind('noext'), null);
  const euro = new TextEncoder().encode('ab€'); // € is 3 bytes
  t.same(textPreview(euro, euro.length), { text: 'ab€', truncated: false });
  t.same(textPreview(euro.subarray(0, 4), 10), { text: 'ab', truncated: true }, 'a cut character is dropped');
  t.same(textPreview(euro.subarray(0, 2), 10), { text: 'ab', truncated: true });
  const html = new TextEncoder().encode('<b>x</b>');
  t.equal(textPreview(html, html.length).text, '<b>x</b>', 'markup kept as characters');
});
