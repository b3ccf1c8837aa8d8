import t from 'tap';
import { emptyDirs, fromFiles, walkEntries, type EntryLike } from '../app/src/drop.js';
import { fingerprint, formatSeconds, keepBothName, overall, RateMeter, secondsLeft } from '../app/src/upload-math.js';

t.test('keep both: "name (n).ext", the first free number, extension and dot-files kept', async (t) => {
  const taken = (...names: string[]) => {
    const s = new Set(names);
    return (n: string) => s.has(n);
  };
  t.equal(keepBothName('report.pdf', taken('report.pdf')), 'report (1).pdf');
  t.equal(keepBothName('report.pdf', taken('report.pdf', 'report (1).pdf', 'report (2).pdf')), 'report (3).pdf');
  t.equal(keepBothName('archive.tar.gz', taken()), 'archive.tar (1).gz', 'the extension is after the last dot');
  t.equal(keepBothName('README', taken()), 'README (1)');
  t.equal(keepBothName('.bashrc', taken()), '.bashrc (1)', 'a leading dot is no extension');
  t.equal(keepBothName('photo (4).jpg', taken()), 'photo (5).jpg', 'an existing number is counted on');
  t.equal(keepBothName('photo (4).jpg', taken('photo (5).jpg')), 'photo (6).jpg');
});

t.test('speed over a sliding window, time left, overall sums', async (t) => {
  const m = new RateMeter(4000);
  t.equal(m.rate(), 0, 'no rate before two samples');
  m.add(0, 0);
  m.add(100, 1000);
  t.equal(m.rate(), 0, 'not over less than 200 ms');
  m.add(1000, 1_000_000);
  t.equal(m.rate(), 1_000_000);
  m.add(2000, 3_000_000);
  t.equal(m.rate(), 1_500_000, '3 MB in 2 s');
  // a stall: the window slides past the fast part
  m.add(6000, 3_000_000);
  m.add(9000, 3_000_000);
  t.equal(m.rate(), 0, 'nothing sent in the last window');
  m.add(10000, 100);
  t.equal(m.rate(), 0, 'a restart from a lower offset starts over');
  m.add(11000, 2100);
  t.equal(m.rate(), 2000);

  t.equal(secondsLeft(0, 0), 0);
  t.equal(secondsLeft(100, 0), undefined, 'unknown without a speed');
  t.equal(secondsLeft(1000, 300), 4, 'rounded up');
  t.same(
    overall([
      { size: 100, sent: 50, rate: 10, active: true },
      { size: 200, sent: 200, rate: 99, active: false },
      { size: 100, sent: 0, rate: 0, active: false },
    ]),
    { size: 400, sent: 250, rate: 10, secondsLeft: 15 },
  );
  t.equal(formatSeconds(42, 'en'), '42s');
  t.equal(formatSeconds(150, 'en'), '3m');
  t.equal(formatSeconds(3600 + 20 * 60, 'en'), '1h 20m');
  t.equal(formatSeconds(7200, 'en'), '2h');
});

t.test('fingerprint: target, name, size and modification time, no content', async (t) => {
  const f = { name: 'a.bin', size: 10, lastModified: 5 };
  t.equal(fingerprint('/x/a.bin', f), fingerprint('/x/a.bin', { ...f }));
  t.not(fingerprint('/x/a.bin', f), fingerprint('/y/a.bin', f));
  t.not(fingerprint('/x/a.bin', f), fingerprint('/x/a.bin', { ...f, size: 11 }));
  t.not(fingerprint('/x/a.bin', f), fingerprint('/x/a.bin', { ...f, lastModified: 6 }));
});

/** A tree of entries as browsers give them on a drop: readEntries answers in batches, then an empty one. */
function dir(name: string, kids: EntryLike[], batch = 2): EntryLike {
  return {
    name,
    isFile: false,
    isDirectory: true,
    createReader() {
      let at = 0;
      return {
        readEntries(ok) {
          const out = kids.slice(at, at + batch);
          at += batch;
          setTimeout(() => ok(out), 0);
        },
      };
    },
  };
}
const file = (name: string, body = name): EntryLike => ({
  name,
  isFile: true,
  isDirectory: false,
  file(ok) {
    ok(new File([body], name));
  },
});

t.test('drop: directories walked recursively (every batch of readEntries), paths relative, empty folders found', async (t) => {
  const tree = [dir('photos', [file('a.jpg'), file('b.jpg'), file('c.jpg'), dir('2024', [file('d.jpg')]), dir('empty', [dir('deeper', [])])]), file('top.txt')];
  const picked = await walkEntries(tree);
  t.same(
    picked.files.map((f) => f.path),
    ['photos/a.jpg', 'photos/b.jpg', 'photos/c.jpg', 'photos/2024/d.jpg', 'top.txt'],
  );
  t.equal(await picked.files[3]!.file.text(), 'd.jpg');
  t.same(picked.dirs, ['photos', 'photos/2024', 'photos/empty', 'photos/empty/deeper']);
  t.same(emptyDirs(picked), ['photos/empty/deeper'], 'the deepest empty folder only: its parents come with it');

  t.equal(picked.unreadable, undefined, 'nothing unreadable');
});

t.test('drop: a folder of 250 entries read in batches of 100 as chromium gives them', async (t) => {
  const kids = Array.from({ length: 250 }, (_, i) => file(`${i}.txt`));
  const picked = await walkEntries([dir('many', kids, 100)]);
  t.equal(picked.files.length, 250);
  t.same(
    picked.files.map((f) => f.path),
    kids.map((k) => `many/${k.name}`),
  );
});

t.test('drop: an entry the browser cannot read is told, the others still go', async (t) => {
  const gone: EntryLike = {
    ...file('gone.txt'),
    file: (_ok, fail) => fail?.(new DOMException('A requested file or directory could not be found', 'NotFoundError')),
  };
  const lost: EntryLike = { ...dir('lost', [file('never.txt')]), createReader: () => ({ readEntries: (_ok, fail) => fail?.(new Error('unreadable folder')) }) };
  const picked = await walkEntries([dir('top', [file('a.txt'), gone, lost, dir('sub', [file('b.txt')])]), file('c.txt')]);
  t.same(
    picked.files.map((f) => f.path),
    ['top/a.txt', 'top/sub/b.txt', 'c.txt'],
  );
  t.same(picked.dirs, ['top', 'top/sub'], 'an unreadable folder is not made');
  t.same(picked.unreadable, [
    { path: 'top/gone.txt', error: 'A requested file or directory could not be found' },
    { path: 'top/lost', error: 'unreadable folder' },
  ]);
});

t.test('folder picker: webkitRelativePath gives the paths, the folders parents first', async (t) => {
  const withPath = (name: string, rel: string) => {
    const f = new File(['x'], name);
    Object.defineProperty(f, 'webkitRelativePath', { value: rel });
    return f;
  };
  const picked = fromFiles([withPath('c.txt', 'root/b/c/c.txt'), withPath('a.txt', 'root/a.txt'), new File(['y'], 'plain.txt')]);
  t.same(
    picked.files.map((f) => f.path),
    ['root/b/c/c.txt', 'root/a.txt', 'plain.txt'],
  );
  t.same(picked.dirs, ['root', 'root/b', 'root/b/c']);
  t.same(emptyDirs(picked), []);
});
