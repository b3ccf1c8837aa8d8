import t from 'tap';
import { filterEntries, isDir, sortEntries, type Entry } from '../app/src/entries.js';
import { parseRoute, routePath, type Route } from '../app/src/routes.js';
import { qrMatrix, qrPath } from '../app/src/qr.js';
import { folderKey, isEditable, rowAfterKey, type KeyPress } from '../app/src/list-keys.js';
import { crumbs, formatDate, formatSize, joinPath, validName } from '../app/src/format.js';

const DIR = 0o040755;
const FILE = 0o100644;
const e = (name: string, size: number, mode: number, last_modified: string): Entry => ({ name, size, mode, last_modified });

t.test('sorting: folders first, names as people read them, by size and date both ways', async (t) => {
  const list = [
    e('file10.txt', 5, FILE, '2024-01-03T00:00:00Z'),
    e('file2.txt', 50, FILE, '2024-01-01T00:00:00Z'),
    e('Zeta', 0, DIR, '2024-01-02T00:00:00Z'),
    e('alpha', 0, DIR, '2024-01-04T00:00:00Z'),
    e('Big.bin', 500, FILE, '2024-01-02T00:00:00Z'),
  ];
  const names = (l: Entry[]) => l.map((x) => x.name);
  t.same(names(sortEntries(list, { key: 'name', asc: true })), ['alpha', 'Zeta', 'Big.bin', 'file2.txt', 'file10.txt']);
  t.same(names(sortEntries(list, { key: 'name', asc: false })), ['Zeta', 'alpha', 'file10.txt', 'file2.txt', 'Big.bin']);
  t.same(names(sortEntries(list, { key: 'size', asc: true })), ['alpha', 'Zeta', 'file10.txt', 'file2.txt', 'Big.bin']);
  t.same(names(sortEntries(list, { key: 'modified', asc: false })), ['alpha', 'Zeta', 'file10.txt', 'Big.bin', 'file2.txt']);
  t.equal(list[0]!.name, 'file10.txt', 'the input is not reordered');
  t.ok(isDir(list[2]!));
  t.notOk(isDir(list[0]!));
});

t.test('filter: case-insensitive substring, blank keeps all', async (t) => {
  const list = [e('Report.PDF', 1, FILE, ''), e('photos', 0, DIR, ''), e('notes.txt', 1, FILE, '')];
  t.same(
    filterEntries(list, 'rep').map((x) => x.name),
    ['Report.PDF'],
  );
  t.same(
    filterEntries(list, ' O ').map((x) => x.name),
    ['Report.PDF', 'photos', 'notes.txt'],
  );
  t.equal(filterEntries(list, '   ').length, 3);
  t.equal(filterEntries(list, 'zzz').length, 0);
});

t.test('sizes and dates in the locale', async (t) => {
  t.equal(formatSize(0, 'en-US'), '0 bytes');
  t.equal(formatSize(1536, 'en-US'), '1.5 kB');
  t.equal(formatSize(5 * 1024 * 1024, 'de-DE'), '5 MB');
  t.match(formatSize(1.25 * 1024 ** 3, 'fr-FR'), /^1,3\sGo$/, 'French: decimal comma, a (narrow) no-break space');
  t.match(formatDate('2024-03-05T14:07:00Z', 'en-US'), /Mar 5, 2024/);
  t.match(formatDate('2024-03-05T14:07:00Z', 'de-DE'), /05\.03\.2024/);
  t.equal(formatDate('2024-03-05T14:07:00Z', 'de-DE', 'narrow'), '05.03.24', 'the narrow style: the date alone, in numbers');
  t.equal(formatDate('not a date', 'en-US'), '');
});

t.test('paths and names', async (t) => {
  t.equal(joinPath('/', 'a'), '/a');
  t.equal(joinPath('/a/b', 'c'), '/a/b/c');
  t.same(crumbs('/'), []);
  t.same(crumbs('/a/b'), [
    { name: 'a', path: '/a' },
    { name: 'b', path: '/a/b' },
  ]);
  for (const bad of ['', '.', '..', 'a/b', 'x\0']) t.notOk(validName(bad), JSON.stringify(bad));
  for (const good of ['a', '.hidden', 'with space', 'é…']) t.ok(validName(good), good);
});

t.test('QR codes: the version grows with the text, finder patterns in three corners, UTF-8 text accepted', async (t) => {
  const short = qrMatrix('https://ferry.example/web/client/pub/abc');
  t.equal(short.length % 4, 1, 'a QR side is 17 + 4 x version modules');
  t.ok(short.length >= 25);
  const long = qrMatrix(`otpauth://totp/Ferry:${'ü'.repeat(60)}?secret=${'A'.repeat(32)}&issuer=Ferry`);
  t.ok(long.length > short.length, 'a longer text needs a larger version');
  const finderAt = (m: boolean[][], r0: number, c0: number) =>
    [0, 6].every((i) => [0, 1, 2, 3, 4, 5, 6].every((j) => m[r0 + i]![c0 + j] && m[r0 + j]![c0 + i])) && m[r0 + 3]![c0 + 3] && !m[r0 + 1]![c0 + 1];
  const n = short.length;
  t.ok(finderAt(short, 0, 0) && finderAt(short, 0, n - 7) && finderAt(short, n - 7, 0), 'the three finder patterns');
  t.notOk(finderAt(short, n - 7, n - 7), 'none in the fourth corner');
  const { d, size } = qrPath('x');
  t.equal(size, 21, 'one character: version 1');
  t.equal(d.split('M').length - 1, qrMatrix('x').flat().filter(Boolean).length, 'one square per dark module');
});

t.test('routes: each screen has a URL, and a URL gives back its screen', async (t) => {
  const cases: Route[] = [
    { kind: 'files', dir: '/' },
    { kind: 'files', dir: '/Reports/2024 Q1/#ünïcode%' },
    { kind: 'shares' },
    { kind: 'profile' },
    { kind: 'pub', shareId: 'Ab3_x', dir: '/' },
    { kind: 'pub', shareId: 'Ab3_x', dir: '/in/a b' },
  ];
  for (const r of cases) t.same(parseRoute(routePath(r)), r, routePath(r));
  t.equal(routePath({ kind: 'files', dir: '/a b/c?d' }), '/web/client/files/a%20b/c%3Fd');
  t.same(parseRoute('/web/client/'), { kind: 'files', dir: '/' }, 'the root is the home folder');
  t.same(parseRoute('/web/client/files/%E0%A4%A'), { kind: 'files', dir: '/' }, 'a malformed escape is the home folder');
  t.same(parseRoute('/web/client/nowhere'), { kind: 'files', dir: '/' });
});

t.test('the file list keyboard: moves, ends, pages; up a folder; delete; typing left to fields', async (t) => {
  const k = (key: string, mods: Partial<KeyPress> = {}): KeyPress => ({ key, ...mods });
  t.equal(rowAfterKey(k('ArrowDown'), 3, 10, 4), 4);
  t.equal(rowAfterKey(k('ArrowDown'), 9, 10, 4), 9, 'the last row stays');
  t.equal(rowAfterKey(k('ArrowUp'), 0, 10, 4), 0, 'the first row stays');
  t.equal(rowAfterKey(k('PageDown'), 3, 10, 4), 7);
  t.equal(rowAfterKey(k('PageDown'), 8, 10, 4), 9);
  t.equal(rowAfterKey(k('PageUp'), 3, 10, 0), 2, 'a page of at least one row');
  t.equal(rowAfterKey(k('Home'), 5, 10, 4), 0);
  t.equal(rowAfterKey(k('End'), 5, 10, 4), 9);
  t.equal(rowAfterKey(k('ArrowUp', { altKey: true }), 5, 10, 4), null, 'Alt+Up is no move');
  t.equal(rowAfterKey(k('ArrowDown'), 0, 0, 4), null, 'an empty list');
  t.equal(rowAfterKey(k('a'), 0, 10, 4), null);
  t.equal(folderKey(k('Backspace')), 'parent');
  t.equal(folderKey(k('ArrowUp', { altKey: true })), 'parent');
  t.equal(folderKey(k('ArrowUp')), null);
  t.equal(folderKey(k('Delete')), 'delete');
  t.equal(folderKey(k('Delete', { shiftKey: true })), null);
  t.equal(folderKey(k('Backspace', { ctrlKey: true })), null);
  const el = (tagName: string, type = '') => ({ tagName, type, isContentEditable: false }) as unknown as Element;
  t.ok(isEditable(el('INPUT', 'search')));
  t.ok(isEditable(el('TEXTAREA')));
  t.notOk(isEditable(el('INPUT', 'checkbox')));
  t.notOk(isEditable(el('BUTTON')));
  t.notOk(isEditable(null));
});
