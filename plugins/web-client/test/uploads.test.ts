/**
 * Uploads in Debian's chromium against a real Ferry whose binding offers
 * resumable uploads (upload_chunk_size 1 MiB): a folder of 50 files in
 * nested directories through the folder picker, a folder tree of 50 files
 * dropped as from the desktop (Chrome DevTools Protocol's drag events:
 * chromium gives the page real directory entries), one whose file cannot
 * be read any more (failed, the others sent), plain files in a
 * synthetic drop, a large file through TUS cut by a network error and by a page reload and
 * resumed from the server's offset, a cancelled TUS upload, the conflict
 * choices, axe and the screenshot of the upload panel.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import { en as strings } from '../app/src/strings.js';
import { passwordOf } from './helpers.js';
import { checkA11y, dropFromDesktop, harness, screenshot, type Harness } from './page.js';

const MB = 1024 * 1024;
let h: Harness;
t.before(async () => {
  h = await harness(t, { config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] } } });
});
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ferry-uploads-'));
const pendingUploads = () => readdirSync(path.join(h.f.ta.config.common.temp_dir, 'chunked-uploads'));
/** Bytes that differ at every offset (a chunk stored at the wrong place shows). */
const pattern = (n: number, seed: number) => {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed + (i >> 16)) % 256;
  return b;
};
const finished = (page: Page) => page.locator('.upload-total .upload-status').filter({ hasText: strings.uploadAllDone }).waitFor({ timeout: 60_000 });
const item = (page: Page, label: string) => page.locator('li.upload').filter({ has: page.locator('.upload-name', { hasText: label }) });

t.test('a folder of 50 files in nested directories, through the folder picker: all land with their structure', async (t) => {
  const home = await h.f.addUser('folders');
  const root = path.join(tmp, 'album');
  const expected: string[] = [];
  for (let i = 0; i < 50; i++) {
    const rel = path.join(`year-${i % 3}`, i % 2 ? `month-${i % 5}` : '', i % 7 === 0 ? 'deep/er' : '', `photo-${i}.txt`);
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), `photo ${i}\n`);
    expected.push(path.join('album', rel));
  }
  const { page } = await h.signedIn(t, 'folders');
  await page.getByLabel(strings.uploadFolder).setInputFiles(root);
  await finished(page);
  t.equal(await page.locator('li.upload.done').count(), 50, 'fifty uploads done');
  for (const rel of expected) t.equal(readFileSync(path.join(home, rel), 'utf8'), `photo ${rel.match(/photo-(\d+)/)![1]}\n`, rel);
  await page.getByRole('button', { name: 'album', exact: true }).waitFor();
  t.pass('the folder is listed');
});

t.test('a folder tree of 50 files dropped from the desktop: real directory entries, every file in its place, byte-identical', async (t) => {
  const home = await h.f.addUser('tree-dropper');
  const root = path.join(tmp, 'Trip été 2024');
  // three levels below the dropped folder, names with spaces and non-ASCII letters, one file large enough for TUS
  const files = new Map<string, Buffer>();
  for (let i = 0; i < 50; i++) {
    const rel = path.join(['day one', 'Tag zwei ü', '三日目'][i % 3]!, i % 2 ? `set ${i % 4}` : '', i % 5 === 0 ? 'raw 写真' : '', `photo ${i} – é.txt`);
    files.set(rel, i === 7 ? pattern(9 * MB + 77, 7) : Buffer.from(`photo ${i} – ${'ü'.repeat(i)}\n`));
  }
  for (const [rel, body] of files) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), body);
  }
  mkdirSync(path.join(root, 'empty folder', 'nothing here'), { recursive: true });
  t.equal(new Set([...files.keys()].map((r) => r.split(path.sep).length)).size, 3, 'files at one, two and three levels below the folder');

  const { page } = await h.signedIn(t, 'tree-dropper');
  const entries = page.waitForEvent('console', (m) => m.text().startsWith('drop-probe:'));
  // what the page gets: a directory entry (the probe runs before the app's own listener, in the capture phase)
  await page.evaluate(() =>
    document.addEventListener(
      'drop',
      (e) => {
        const entry = e.dataTransfer?.items[0]?.webkitGetAsEntry();
        console.log(`drop-probe:${e.dataTransfer?.items.length}:${entry?.isDirectory}:${entry?.name}`);
      },
      { capture: true, once: true },
    ),
  );
  await dropFromDesktop(page, page.locator('main'), [root], async () => {
    t.match(await page.locator('main').getAttribute('class'), /dragging/, 'the drop zone shows while the folder is over it');
  });
  t.equal((await entries).text(), 'drop-probe:1:true:Trip été 2024', 'one item, a directory entry named as the folder');
  await finished(page);

  t.equal(await page.locator('li.upload').count(), 50, 'fifty uploads listed');
  t.equal(await page.locator('li.upload.done').count(), 50, 'all done');
  for (const [rel, body] of files) {
    const label = path.join('Trip été 2024', rel).split(path.sep).join('/');
    const bar = page.getByRole('progressbar', { name: strings.uploadProgress(label), exact: true });
    const li = page.locator('li.upload').filter({ has: bar });
    t.equal(await li.count(), 1, `${label}: listed once`);
    t.equal(await li.locator('.upload-status').textContent(), strings.uploadDone, `${label}: shown done`);
    t.same([await bar.getAttribute('value'), await bar.getAttribute('max')], [String(body.length), String(body.length)], `${label}: its bar full`);
    t.ok(readFileSync(path.join(home, 'Trip été 2024', rel)).equals(body), `${label}: stored byte-identical`);
  }
  const tree = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? [`${e.name}/`, ...tree(path.join(dir, e.name)).map((s) => `${e.name}/${s}`)] : [e.name],
    );
  t.same(tree(path.join(home, 'Trip été 2024')).sort(), tree(root).sort(), 'the same tree on the server, the empty folder included, nothing more');
  t.same(pendingUploads(), [], 'no temporary data left');
  await page.getByRole('button', { name: 'Trip été 2024', exact: true }).waitFor();
  t.pass('the folder is listed');
});

t.test('a dropped folder with a file gone before the browser reads it: that file failed with the reason, the others land', async (t) => {
  const home = await h.f.addUser('gone-dropper');
  const root = path.join(tmp, 'half gone');
  mkdirSync(path.join(root, 'sub'), { recursive: true });
  for (const n of ['kept.txt', 'gone.txt', 'sub/also kept.txt']) writeFileSync(path.join(root, n), `body of ${n}`);
  const { page } = await h.signedIn(t, 'gone-dropper');
  // a file removed (or changed) between the drop and its read: chromium answers NotFoundError; this makes it happen for gone.txt
  await page.evaluate(() =>
    document.addEventListener(
      'drop',
      (e) => {
        // the prototype of chromium's directory readers (their interfaces are not globals): their gone.txt fails to read
        const reader = (e.dataTransfer!.items[0]!.webkitGetAsEntry() as FileSystemDirectoryEntry).createReader();
        const proto = Object.getPrototypeOf(reader) as FileSystemDirectoryReader;
        const readEntries = proto.readEntries;
        proto.readEntries = function (ok, fail) {
          readEntries.call(
            this,
            (entries) => {
              for (const entry of entries)
                if (entry.name === 'gone.txt')
                  Object.defineProperty(entry, 'file', {
                    value: (_ok: unknown, no?: (err: DOMException) => void) =>
                      no?.(new DOMException('A requested file or directory could not be found', 'NotFoundError')),
                  });
              ok(entries);
            },
            fail,
          );
        };
      },
      { capture: true, once: true },
    ),
  );
  await dropFromDesktop(page, page.locator('main'), [root]);
  await finished(page);
  t.equal(readFileSync(path.join(home, 'half gone', 'kept.txt'), 'utf8'), 'body of kept.txt');
  t.equal(readFileSync(path.join(home, 'half gone', 'sub', 'also kept.txt'), 'utf8'), 'body of sub/also kept.txt');
  t.notOk(existsSync(path.join(home, 'half gone', 'gone.txt')), 'nothing stored for it');
  t.equal(
    await item(page, 'half gone/gone.txt').getByRole('alert').textContent(),
    strings.uploadFailed('A requested file or directory could not be found'),
    'told as failed, with the reason',
  );
  t.equal(await page.locator('li.upload.done').count(), 2, 'the other two done');
});

t.test('a drop of plain files onto the file list', async (t) => {
  const home = await h.f.addUser('dropper');
  const { page } = await h.signedIn(t, 'dropper');
  const dt = await page.evaluateHandle(() => {
    const d = new DataTransfer();
    d.items.add(new File(['first dropped'], 'one.txt', { type: 'text/plain' }));
    d.items.add(new File(['second dropped'], 'two.txt', { type: 'text/plain' }));
    return d;
  });
  await page.dispatchEvent('main', 'dragover', { dataTransfer: dt });
  t.match(await page.locator('main').getAttribute('class'), /dragging/, 'the drop zone shows');
  await page.dispatchEvent('main', 'drop', { dataTransfer: dt });
  await finished(page);
  t.equal(readFileSync(path.join(home, 'one.txt'), 'utf8'), 'first dropped');
  t.equal(readFileSync(path.join(home, 'two.txt'), 'utf8'), 'second dropped');
});

t.test('a large file through TUS: a chunk cut by the network, then the page reloaded; resumed from the server offset, byte-identical', async (t) => {
  const home = await h.f.addUser('resumer');
  const data = pattern(12 * MB + 4321, 1);
  const local = path.join(tmp, 'large.bin');
  writeFileSync(local, data);
  const { page } = await h.signedIn(t, 'resumer');
  const seen: { method: string; offset?: string }[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/v2/user/chunked-uploads')) seen.push({ method: r.method(), offset: r.headers()['upload-offset'] });
  });
  let patches = 0;
  let stopped!: () => void;
  const stop = new Promise<void>((resolve) => (stopped = resolve));
  await page.route('**/api/v2/user/chunked-uploads/*', async (route) => {
    if (route.request().method() === 'PATCH') {
      patches++;
      if (patches === 2) return route.abort('connectionreset'); // a network drop: the client asks the server's offset and goes on
      if (patches === 5) {
        stopped();
        return route.abort('connectionreset');
      }
    }
    return route.continue();
  });
  await page.getByLabel(strings.upload).setInputFiles(local);
  await stop;
  await page.unroute('**/api/v2/user/chunked-uploads/*');
  t.ok(
    seen.some((r, i) => r.method === 'HEAD' && i > 0),
    'after the cut chunk the client asked the server for its offset',
  );
  t.same(
    seen.filter((r) => r.method === 'PATCH').map((r) => Number(r.offset) / MB),
    [0, 1, 1, 2, 3],
    'the cut chunk was sent again from the server offset',
  );
  await page.reload();
  await page.getByRole('heading', { name: strings.home }).waitFor();
  t.notOk(existsSync(path.join(home, 'large.bin')), 'nothing visible before the last byte');
  const stored = await page.evaluate(() =>
    Object.keys(localStorage)
      .filter((k) => k.startsWith('ferry-tus:'))
      .map((k) => [k, localStorage.getItem(k)]),
  );
  t.equal(stored.length, 1, 'the upload URL is remembered');
  t.match(stored[0]![1], /^\/api\/v2\/user\/chunked-uploads\/[A-Za-z0-9_-]{22}$/, 'a URL only');
  seen.length = 0;
  await page.getByLabel(strings.upload).setInputFiles(local);
  await finished(page);
  t.equal(seen.filter((r) => r.method === 'POST').length, 0, 'no new upload created');
  t.equal(seen.find((r) => r.method === 'PATCH')?.offset, String(3 * MB), 'continued from the server offset');
  t.ok(readFileSync(path.join(home, 'large.bin')).equals(data), 'byte-identical');
  t.same(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('ferry-tus:'))), [], 'forgotten once complete');
  t.same(pendingUploads(), [], 'no temporary data left');
});

t.test('a cancelled TUS upload leaves nothing, on the server or in the folder', async (t) => {
  const home = await h.f.addUser('canceller');
  const local = path.join(tmp, 'cancel.bin');
  writeFileSync(local, pattern(10 * MB, 2));
  const { page } = await h.signedIn(t, 'canceller');
  // slow chunks: the upload is still running when it is cancelled
  await page.route('**/api/v2/user/chunked-uploads/*', async (route) => {
    if (route.request().method() === 'PATCH') await new Promise((r) => setTimeout(r, 400));
    await route.continue().catch(() => undefined);
  });
  const firstChunk = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.status() === 204);
  await page.getByLabel(strings.upload).setInputFiles(local);
  await firstChunk;
  t.equal(pendingUploads().length, 2, 'the upload exists on the server (bytes and description)');
  const deleted = page.waitForResponse((r) => r.request().method() === 'DELETE');
  await page.getByRole('button', { name: strings.cancelUpload('cancel.bin') }).click();
  t.equal((await deleted).status(), 204, 'terminated on the server');
  await item(page, 'cancel.bin').filter({ hasText: strings.uploadCancelled }).waitFor();
  t.same(pendingUploads(), [], 'no temporary data left');
  t.notOk(existsSync(path.join(home, 'cancel.bin')));
  t.same(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('ferry-tus:'))), [], 'nothing remembered');
});

t.test('conflicts: overwrite, skip, keep both, apply to all; no overwrite offered without the permission', async (t) => {
  const home = await h.f.addUser('conflicts');
  mkdirSync(home, { recursive: true });
  for (const n of ['a', 'b', 'c', 'd', 'e']) writeFileSync(path.join(home, `${n}.txt`), `old ${n}`);
  const files = (names: string[]) =>
    names.map((n) => {
      const p = path.join(tmp, 'conflicts', `${n}.txt`);
      mkdirSync(path.dirname(p), { recursive: true });
      writeFileSync(p, `new ${n}`);
      return p;
    });
  const { page } = await h.signedIn(t, 'conflicts');
  await page.getByLabel(strings.upload).setInputFiles(files(['a', 'b', 'c']));
  const dialog = page.getByRole('dialog', { name: strings.conflictTitle });
  const answer = async (name: string, choice: string, all = false) => {
    await dialog.getByText(strings.conflictText(name)).waitFor();
    await dialog.getByLabel(choice).check();
    if (all) await dialog.getByLabel(strings.conflictApplyAll).check();
    await dialog.getByRole('button', { name: strings.conflictApply }).click();
  };
  await dialog.waitFor();
  await checkA11y(t, page, 'conflict dialog');
  await screenshot(page, 'upload-conflict');
  await answer('a.txt', strings.conflictOverwrite);
  await answer('b.txt', strings.conflictSkip);
  await answer('c.txt', strings.conflictKeepBoth);
  await finished(page);
  t.equal(readFileSync(path.join(home, 'a.txt'), 'utf8'), 'new a', 'overwritten');
  t.equal(readFileSync(path.join(home, 'b.txt'), 'utf8'), 'old b', 'skipped');
  t.equal(readFileSync(path.join(home, 'c.txt'), 'utf8'), 'old c', 'kept');
  t.equal(readFileSync(path.join(home, 'c (1).txt'), 'utf8'), 'new c', 'and the new one beside it');

  await page.getByRole('button', { name: strings.clearUploads }).click();
  await page.getByLabel(strings.upload).setInputFiles(files(['c', 'd', 'e']));
  await answer('c.txt', strings.conflictKeepBoth, true);
  await finished(page);
  t.equal(await dialog.count(), 0, 'asked once for all');
  t.equal(readFileSync(path.join(home, 'c (2).txt'), 'utf8'), 'new c', 'the next free number');
  t.equal(readFileSync(path.join(home, 'd (1).txt'), 'utf8'), 'new d');
  t.equal(readFileSync(path.join(home, 'e (1).txt'), 'utf8'), 'new e');

  // a user who may upload but not overwrite: no overwrite offered
  const ro = await h.f.addUser('no-overwrite', { permissions: { '/': ['list', 'download', 'upload'] } });
  mkdirSync(ro, { recursive: true });
  writeFileSync(path.join(ro, 'a.txt'), 'old a');
  const other = await h.signedIn(t, 'no-overwrite');
  await other.page.getByLabel(strings.upload).setInputFiles(files(['a']));
  const d2 = other.page.getByRole('dialog', { name: strings.conflictTitle });
  await d2.waitFor();
  t.equal(await d2.getByLabel(strings.conflictOverwrite).count(), 0, 'no overwrite choice');
  t.equal(await d2.getByLabel(strings.conflictKeepBoth).isChecked(), true, 'keep both is the default');
  await d2.getByRole('button', { name: strings.conflictApply }).click();
  await finished(other.page);
  t.equal(readFileSync(path.join(ro, 'a.txt'), 'utf8'), 'old a');
  t.equal(readFileSync(path.join(ro, 'a (1).txt'), 'utf8'), 'new a');
  // the server still refuses an overwrite through TUS for that user
  const token = await h.f.ta.userToken('no-overwrite', passwordOf('no-overwrite'));
  const r = await h.f.ta.inject('POST', '/api/v2/user/chunked-uploads', {
    token,
    headers: { 'tus-resumable': '1.0.0', 'upload-length': '1', 'upload-metadata': `path ${Buffer.from('a.txt').toString('base64')}` },
  });
  t.equal(r.statusCode, 403, 'refused by the server too');
});

t.test('the upload panel with several files in progress: speed and time left, axe, a screenshot', async (t) => {
  await h.f.addUser('panel');
  const locals = [1, 2, 3].map((i) => {
    const p = path.join(tmp, `video-${i}.mp4`);
    writeFileSync(p, pattern(9 * MB + i * 1000, i));
    return p;
  });
  const small = path.join(tmp, 'notes.txt');
  writeFileSync(small, 'notes');
  const { page } = await h.signedIn(t, 'panel');
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let patches = 0;
  await page.route('**/api/v2/user/chunked-uploads/*', async (route) => {
    // each upload sends a few chunks, then waits until the screenshot is taken
    if (route.request().method() === 'PATCH' && ++patches > 6) await released;
    else await new Promise((r) => setTimeout(r, 150));
    await route.continue();
  });
  await page.getByLabel(strings.upload).setInputFiles([...locals, small]);
  await page.waitForFunction(
    () => document.querySelectorAll('li.upload.sending').length === 3 && /\/s/.test(document.querySelector('.upload-total')?.textContent ?? ''),
    undefined,
    { timeout: 30_000 },
  );
  await checkA11y(t, page, 'upload panel');
  await screenshot(page, 'uploads');
  t.match(await page.locator('.upload-total').textContent(), /\/s/, 'the overall speed is shown');
  // the panel's columns line up: every bar starts at the same place; "Clear finished" is in the
  // Cancel buttons' column and centred on the heading's line
  const box = async (selector: string) => (await page.locator(selector).first().boundingBox())!;
  const bars = await page.locator('.uploads progress').evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().left)));
  t.equal(new Set(bars).size, 1, `every progress bar starts at the same x (${bars.join(', ')})`);
  const clear = await box(`.uploads .row button`);
  const cancel = await box('li.upload button');
  const heading = await box('#uploads-title');
  t.ok(Math.abs(clear.x + clear.width - (cancel.x + cancel.width)) <= 1, 'Clear finished ends where the Cancel buttons end');
  t.ok(Math.abs(clear.y + clear.height / 2 - (heading.y + heading.height / 2)) <= 2, 'Clear finished is centred on the heading');
  t.ok(clear.y + clear.height <= (await box('.upload-total')).y, 'and does not reach into the overall row');
  release();
  await finished(page);
  t.equal(await page.locator('li.upload.done').count(), 4);
});
