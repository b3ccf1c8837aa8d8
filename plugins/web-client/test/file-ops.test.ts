/**
 * The file operations of the web client in chromium against a real Ferry:
 * selection (checkboxes, shift-click, select all), move and copy through the
 * folder picker, delete of a selection, failures per entry, a zip of a
 * selection, previews (image, text with HTML in it, PDF, audio, video),
 * checksums, quota usage, and what a user without the permissions does not
 * see (the server refusing it all the same). axe-core on the screens and
 * dialogs; screenshots (FERRY_SCREENSHOT_DIR) for docs/web-client.md.
 */
import crypto from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t from 'tap';
import { unzip } from '@ferry/testkit';
import type { Page } from 'playwright-core';
import { en as strings } from '../app/src/strings.js';
import { checkA11y, delayRequests, harness, row, screenshot, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t);
});

const box = (page: Page, name: string) => page.getByRole('checkbox', { name: strings.select(name) });
const toolbar = (page: Page) => page.getByRole('toolbar', { name: strings.selectionToolbar });
const dialog = (page: Page) => page.getByRole('dialog');
const write = (home: string, rel: string, data: string | Buffer) => {
  mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
  writeFileSync(path.join(home, rel), data);
};

/** A PNG of w×h pixels, one colour. */
function png(w: number, h: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) raw.set([30, 120, 200], y * (w * 3 + 1) + 1 + x * 3);
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A WAV of `seconds` of a 440 Hz tone (8 kHz, mono, 16 bits). */
function wav(seconds: number): Buffer {
  const rate = 8000;
  const n = Math.round(rate * seconds);
  const b = Buffer.alloc(44 + n * 2);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(36 + n * 2, 4);
  b.write('WAVEfmt ', 8, 'latin1');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36, 'latin1');
  b.writeUInt32LE(n * 2, 40);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return b;
}

/** A one-page PDF saying "Ferry". */
function pdf(): Buffer {
  const objs = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    '<< /Length 37 >>\nstream\nBT /F1 24 Tf 20 40 Td (Ferry) Tj ET\nendstream',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A short WebM made by the browser itself (MediaRecorder of a canvas): no ffmpeg needed. */
async function webm(page: Page): Promise<Buffer | null> {
  const b64 = await page.evaluate(async () => {
    if (typeof MediaRecorder === 'undefined' || !MediaRecorder.isTypeSupported('video/webm')) return null;
    const canvas = document.createElement('canvas');
    canvas.width = 64;
    canvas.height = 48;
    const g = canvas.getContext('2d')!;
    const stream = canvas.captureStream(10);
    const rec = new MediaRecorder(stream, { mimeType: 'video/webm' });
    const parts: Blob[] = [];
    rec.ondataavailable = (e) => parts.push(e.data);
    const stopped = new Promise((r) => (rec.onstop = r));
    rec.start();
    for (let i = 0; i < 8; i++) {
      g.fillStyle = `hsl(${i * 40} 80% 50%)`;
      g.fillRect(0, 0, 64, 48);
      await new Promise((r) => setTimeout(r, 60));
    }
    rec.stop();
    await stopped;
    const bytes = new Uint8Array(await new Blob(parts).arrayBuffer());
    let s = '';
    for (const x of bytes) s += String.fromCharCode(x);
    return btoa(s);
  });
  return b64 ? Buffer.from(b64, 'base64') : null;
}

t.test('selection: move 3 entries through the folder picker, copy, delete a selection, failures per entry', async (t) => {
  const home = await h.f.addUser('sel', { permissions: { '/': ['*'], '/locked': ['list', 'download'] } });
  for (const n of ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']) write(home, n, `content of ${n}\n`);
  write(home, 'folder/inner.txt', 'inner\n');
  mkdirSync(path.join(home, 'dest/deeper'), { recursive: true });
  mkdirSync(path.join(home, 'locked'), { recursive: true });
  const { page } = await h.signedIn(t, 'sel');
  await row(page, 'e.txt').waitFor();

  await box(page, 'a.txt').click();
  await box(page, 'c.txt').click({ modifiers: ['Shift'] });
  await toolbar(page).getByText(strings.selectedCount(3)).waitFor();
  t.ok(await box(page, 'b.txt').isChecked(), 'shift-click selected the range a..c');
  await box(page, 'd.txt').focus();
  await page.keyboard.press('Space');
  await toolbar(page).getByText(strings.selectedCount(4)).waitFor();
  await page.keyboard.press('Space');
  await toolbar(page).getByText(strings.selectedCount(3)).waitFor();
  t.pass('space toggles the focused entry');
  t.equal(await row(page, 'a.txt').getAttribute('aria-selected'), 'true');
  await checkA11y(t, page, 'files page with a selection');
  await screenshot(page, 'selection');

  await toolbar(page).getByRole('button', { name: strings.move }).click();
  await dialog(page)
    .getByRole('heading', { name: strings.moveTo(3) })
    .waitFor();
  await dialog(page)
    .getByRole('button', { name: strings.openFolder('dest') })
    .click();
  await dialog(page).getByText(strings.destination('/dest')).waitFor();
  await dialog(page)
    .getByRole('button', { name: strings.openFolder('deeper') })
    .waitFor();
  await checkA11y(t, page, 'folder picker');
  await screenshot(page, 'folder-picker');
  await dialog(page).getByRole('button', { name: strings.moveHere }).click();
  await page
    .getByRole('status')
    .filter({ hasText: strings.bulkDone(strings.move, 3) })
    .waitFor();
  for (const n of ['a.txt', 'b.txt', 'c.txt']) {
    t.ok(existsSync(path.join(home, 'dest', n)), `${n} moved into /dest`);
    t.notOk(existsSync(path.join(home, n)), `${n} gone from /`);
  }
  await row(page, 'a.txt').waitFor({ state: 'detached' });
  t.notOk(await toolbar(page).isVisible(), 'the selection is cleared after the action');

  // copy a file and a folder into /dest/deeper
  await box(page, 'd.txt').click();
  await box(page, 'folder').click();
  await toolbar(page).getByRole('button', { name: strings.copy }).click();
  await dialog(page)
    .getByRole('button', { name: strings.openFolder('dest') })
    .click();
  await dialog(page)
    .getByRole('button', { name: strings.openFolder('deeper') })
    .click();
  await dialog(page).getByText(strings.destination('/dest/deeper')).waitFor();
  await dialog(page).getByRole('button', { name: strings.copyHere }).click();
  await page
    .getByRole('status')
    .filter({ hasText: strings.bulkDone(strings.copy, 2) })
    .waitFor();
  t.equal(readFileSync(path.join(home, 'dest/deeper/d.txt'), 'utf8'), 'content of d.txt\n');
  t.equal(readFileSync(path.join(home, 'dest/deeper/folder/inner.txt'), 'utf8'), 'inner\n', 'the folder copied with its contents');
  t.ok(existsSync(path.join(home, 'd.txt')), 'the copied file stays');

  // a folder cannot be moved into itself: the picker says so, even when chosen before the folder's listing came
  await box(page, 'folder').click();
  await toolbar(page).getByRole('button', { name: strings.move }).click();
  const listing = await delayRequests(page, /\/api\/v2\/user\/dirs\?path=%2Ffolder$/, 300);
  await dialog(page)
    .getByRole('button', { name: strings.openFolder('folder') })
    .click();
  await dialog(page).getByText(strings.destination('/folder')).waitFor();
  await dialog(page).getByRole('button', { name: strings.moveHere }).click();
  await listing.answered;
  await listing.remove();
  await dialog(page)
    .getByRole('alert')
    .filter({ hasText: strings.intoItself('folder') })
    .waitFor();
  await dialog(page).getByRole('button', { name: strings.cancel }).click();
  t.ok(existsSync(path.join(home, 'folder/inner.txt')), 'nothing moved');

  // the server refuses a move into /locked (no rename there): each entry tells why
  await box(page, 'folder').click(); // unselect
  await box(page, 'd.txt').click();
  await box(page, 'e.txt').click();
  await toolbar(page).getByRole('button', { name: strings.move }).click();
  await dialog(page)
    .getByRole('button', { name: strings.openFolder('locked') })
    .click();
  await dialog(page).getByText(strings.destination('/locked')).waitFor();
  await dialog(page).getByRole('button', { name: strings.moveHere }).click();
  const alert = page.getByRole('alert').filter({ hasText: strings.bulkFailed(2) });
  await alert.waitFor();
  t.match(await alert.textContent(), /\/d\.txt.*permission.*\/e\.txt.*permission/s, 'each failed entry with its reason');
  await checkA11y(t, page, 'failures per entry');
  await alert.getByRole('button', { name: strings.dismiss }).click();
  t.ok(existsSync(path.join(home, 'd.txt')) && !existsSync(path.join(home, 'locked/d.txt')), 'not moved');

  // delete a selection (select all, unselect the folders) with one confirmation
  await page.getByRole('checkbox', { name: strings.selectAll }).click();
  for (const d of ['dest', 'folder', 'locked']) await box(page, d).click();
  await toolbar(page).getByText(strings.selectedCount(2)).waitFor();
  t.equal(await page.getByRole('checkbox', { name: strings.selectAll }).evaluate((e) => (e as HTMLInputElement).indeterminate), true, 'select all is mixed');
  await toolbar(page).getByRole('button', { name: strings.delete }).click();
  await dialog(page).getByText(strings.confirmDeleteSelection(2)).waitFor();
  await checkA11y(t, page, 'delete confirmation');
  await dialog(page).getByRole('button', { name: strings.delete }).click();
  await page
    .getByRole('status')
    .filter({ hasText: strings.bulkDone(strings.delete, 2) })
    .waitFor();
  t.notOk(existsSync(path.join(home, 'd.txt')) || existsSync(path.join(home, 'e.txt')), 'both deleted');
  t.ok(existsSync(path.join(home, 'dest')), 'the unselected folders stay');
});

t.test('a selection downloads as one zip, streamed by a link', async (t) => {
  const home = await h.f.addUser('zipper');
  write(home, 'one.txt', 'first file\n');
  write(home, 'docs/two.txt', 'second file\n');
  write(home, 'docs/sub/three.bin', Buffer.from([0, 1, 2, 3, 255]));
  write(home, 'left-out.txt', 'not selected\n');
  const { page } = await h.signedIn(t, 'zipper');
  await box(page, 'one.txt').click();
  await box(page, 'docs').click();
  const link = toolbar(page).getByRole('link', { name: strings.downloadZip });
  t.match(await link.getAttribute('href'), /^\/api\/v2\/user\/streamzip\?path=%2Fdocs&path=%2Fone\.txt$/, 'a GET link, not a Blob');
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  t.equal(download.suggestedFilename(), 'download.zip');
  const files = unzip(readFileSync(await download.path()));
  t.same([...files.keys()].sort(), ['docs/', 'docs/sub/', 'docs/sub/three.bin', 'docs/two.txt', 'one.txt']);
  t.equal(files.get('one.txt')!.toString(), 'first file\n');
  t.equal(files.get('docs/two.txt')!.toString(), 'second file\n');
  t.same([...files.get('docs/sub/three.bin')!], [0, 1, 2, 3, 255]);
});

t.test('previews: image, text (HTML shown as text), PDF, audio, video; next/previous; checksums', async (t) => {
  const home = await h.f.addUser('viewer');
  const { page } = await h.signedIn(t, 'viewer');
  const html = '<h1 id="injected">Hello</h1><script>window.pwned = 1</script><img src=x onerror="window.pwned=2">\n';
  write(home, 'a-image.png', png(40, 30));
  write(home, 'b-page.html', html);
  write(home, 'c-doc.pdf', pdf());
  write(home, 'd-sound.wav', wav(0.5));
  // Debian's chromium, which the project's scripts install, records WebM: the video preview is always checked
  const video = await webm(page);
  if (!video) throw new Error('this chromium cannot record WebM: the video preview cannot be checked');
  write(home, 'e-clip.webm', video);
  write(home, 'z-archive.zip', 'not previewable');
  await page.reload();
  await row(page, 'a-image.png').waitFor();
  t.equal(
    await row(page, 'z-archive.zip')
      .getByRole('button', { name: `${strings.preview} z-archive.zip` })
      .count(),
    0,
    'no preview of a zip',
  );

  // image
  await row(page, 'a-image.png')
    .getByRole('button', { name: `${strings.preview} a-image.png` })
    .click();
  const d = dialog(page);
  await d.getByRole('heading', { name: strings.previewOf('a-image.png') }).waitFor();
  const img = d.getByRole('img', { name: 'a-image.png' });
  await img.waitFor();
  await page.waitForFunction(() => (document.querySelector('dialog img') as HTMLImageElement | null)?.naturalWidth === 40);
  t.pass('the image is decoded (40 px wide)');
  t.match(await img.getAttribute('src'), /inline=true/);
  await d.getByText(strings.position(1, 5)).waitFor();
  await checkA11y(t, page, 'image preview');
  await screenshot(page, 'preview-image');

  // checksums, computed by the server
  await d.getByRole('button', { name: strings.showChecksum('SHA-256') }).click();
  const sha = crypto.createHash('sha256').update(png(40, 30)).digest('hex');
  await d.locator('code[data-algo="sha256"]').filter({ hasText: sha }).waitFor();
  await d.getByRole('button', { name: strings.showChecksum('MD5') }).click();
  const md5 = crypto.createHash('md5').update(png(40, 30)).digest('hex');
  await d.locator('code[data-algo="md5"]').filter({ hasText: md5 }).waitFor();
  t.pass("SHA-256 and MD5 equal node's");

  // next: the HTML file, shown as text
  await d.getByRole('button', { name: strings.next }).click();
  await d.getByRole('heading', { name: strings.previewOf('b-page.html') }).waitFor();
  const pre = d.locator('pre.preview-text');
  await pre.waitFor();
  t.equal(await pre.textContent(), html, 'the markup is shown as characters');
  t.equal(await page.locator('#injected').count(), 0, 'no element was made from it');
  t.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined, 'no script ran');
  await checkA11y(t, page, 'text preview');
  await screenshot(page, 'preview-text');

  // previous and next with the arrow keys
  await pre.focus();
  await page.keyboard.press('ArrowLeft');
  await d.getByRole('heading', { name: strings.previewOf('a-image.png') }).waitFor();
  await d.getByRole('button', { name: strings.next }).click();
  // PDF: chromium's own viewer (its extension's page) in a frame of the dialog
  const viewer = page.waitForEvent('framenavigated', (f) => f.url().startsWith('chrome-extension://'));
  await d.getByRole('button', { name: strings.next }).click();
  await d.getByRole('heading', { name: strings.previewOf('c-doc.pdf') }).waitFor();
  const frame = d.locator('iframe.preview-pdf');
  t.equal(await frame.getAttribute('title'), 'c-doc.pdf', 'the frame is named after the file');
  const src = (await frame.getAttribute('src'))!;
  t.match(src, /^\/api\/v2\/user\/files\?.*inline=true/, 'the file sent inline');
  await viewer;
  t.ok(
    page.frames().some((f) => f.url() === new URL(src, page.url()).href),
    'the frame holds the PDF (neither refused nor downloaded)',
  );
  t.pass("the browser's PDF viewer shows it");
  const head = await page.evaluate(async (u) => {
    const r = await fetch(u);
    const hd = (n: string) => r.headers.get(n);
    return {
      type: hd('content-type'),
      disposition: hd('content-disposition'),
      xframe: hd('x-frame-options'),
      csp: hd('content-security-policy'),
      start: (await r.text()).slice(0, 8),
    };
  }, src);
  t.match(
    head,
    { type: /^application\/pdf/, disposition: /^inline/, xframe: 'SAMEORIGIN', csp: "frame-ancestors 'self'", start: '%PDF-1.4' },
    'the PDF answers inline, framed by this origin only',
  );
  // the fallbacks: a new tab, a download
  const tab = d.getByRole('link', { name: strings.openPdf });
  t.same([await tab.getAttribute('href'), await tab.getAttribute('target')], [src, '_blank']);
  const download = page.waitForEvent('download');
  await d.getByRole('link', { name: strings.download, exact: true }).click();
  const saved = await (await download).path();
  t.ok(readFileSync(saved).equals(pdf()), 'the download link gives the file');
  await checkA11y(t, page, 'PDF preview');
  await screenshot(page, 'preview-pdf');

  // audio: decoded by the browser, which reads it with range requests
  await d.getByRole('button', { name: strings.next }).click();
  await d.getByRole('heading', { name: strings.previewOf('d-sound.wav') }).waitFor();
  await page.waitForFunction(() => {
    const a = document.querySelector('dialog audio') as HTMLAudioElement | null;
    return !!a && a.readyState >= 1 && Math.abs(a.duration - 0.5) < 0.05;
  });
  t.pass('the audio has its 0.5 s duration');
  const ranged = await page.evaluate(
    async (u) => (await fetch(u, { headers: { Range: 'bytes=0-43' } })).status,
    (await d.locator('audio').getAttribute('src'))!,
  );
  t.equal(ranged, 206, 'the media URL answers ranges');

  await d.getByRole('button', { name: strings.next }).click();
  await d.getByRole('heading', { name: strings.previewOf('e-clip.webm') }).waitFor();
  await page.waitForFunction(() => {
    const v = document.querySelector('dialog video') as HTMLVideoElement | null;
    return !!v && v.readyState >= 1 && v.videoWidth === 64;
  });
  t.pass('the video is decoded (64 px wide)');
  await checkA11y(t, page, 'video preview');
  await d.getByRole('button', { name: strings.close }).click();
  await d.waitFor({ state: 'detached' });

  // an HTML file opened inline (its URL pasted in a tab): shown, but sandboxed, its scripts do not run on Ferry's origin
  const tab2 = await page.context().newPage();
  const opened = await tab2.goto(new URL(`/api/v2/user/files?${new URLSearchParams({ path: '/b-page.html', inline: 'true' })}`, page.url()).href);
  t.equal(opened?.headers()['content-security-policy'], 'sandbox');
  await tab2.locator('#injected').waitFor();
  t.equal(await tab2.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined, 'no script of the file ran');
  t.equal(await tab2.evaluate(() => window.origin), 'null', 'the page has no origin (no access to the session)');
  await tab2.close();

  // a browser without a PDF viewer would download a framed PDF: no frame, the links only
  const bare = await h.signedIn(t, 'viewer');
  await bare.page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'pdfViewerEnabled', { get: () => false }));
  await bare.page.reload();
  await row(bare.page, 'c-doc.pdf')
    .getByRole('button', { name: `${strings.preview} c-doc.pdf` })
    .click();
  const d2 = dialog(bare.page);
  await d2.getByText(strings.pdfNoViewer).waitFor();
  t.equal(await d2.locator('iframe').count(), 0, 'no frame without a viewer');
  t.equal(await d2.getByRole('link', { name: strings.download, exact: true }).getAttribute('download'), 'c-doc.pdf', 'a download link instead');
});

t.test('quota usage is shown, and follows an upload', async (t) => {
  await h.f.addUser('quoted', { quota_size: 10 * 1024 * 1024, quota_files: 100 });
  const { page } = await h.signedIn(t, 'quoted');
  const region = page.getByRole('region', { name: strings.quota });
  await region.getByText('0 bytes of 10 MB used').waitFor();
  t.match(await region.textContent(), /0 of 100 files/);
  t.equal(await region.getByRole('meter').count(), 1, 'a meter of the size');
  await page.getByLabel(strings.upload).setInputFiles({ name: 'up.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(2048, 7) });
  await row(page, 'up.bin').waitFor();
  await region.getByText('2 kB of 10 MB used').waitFor();
  t.match(await region.textContent(), /1 of 100 files/, 'read again after the upload');
});

t.test('a browser set to German: counts, sizes and dates in the English of the UI, not mixed; no quota said as such', async (t) => {
  const home = await h.f.addUser('gerda');
  mkdirSync(path.join(home, 'many'), { recursive: true });
  for (let i = 0; i < 1200; i++) writeFileSync(path.join(home, 'many', `n${String(i).padStart(4, '0')}.txt`), '');
  writeFileSync(path.join(home, 'half.bin'), Buffer.alloc(1536, 1));
  const { page } = await h.signedIn(t, 'gerda', { locale: 'de-DE' });
  t.equal(await page.evaluate(() => navigator.language), 'de-DE', 'the browser speaks German');
  const file = row(page, 'half.bin');
  t.equal(await file.getByRole('cell').nth(1).textContent(), '1.5 kB', 'a size with the English decimal point');
  t.match(await file.locator('.date-medium').textContent(), /^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M$/, 'a date written in English');
  const quota = page.getByRole('region', { name: strings.quota });
  t.equal(await quota.locator('.quota-size').textContent(), strings.noQuota, 'no quota: said so, no "0 bytes used"');
  t.equal(await quota.getByRole('meter').count(), 0);
  await row(page, 'many').getByRole('button', { name: 'many', exact: true }).click();
  await page.getByRole('status').filter({ hasText: '1,200 entries' }).waitFor();
  t.pass('a count with the English thousands separator');
  await screenshot(page, 'locale-german-browser');
});

t.test('a user with list and download only sees no write action, and the server refuses them', async (t) => {
  const home = await h.f.addUser('reader', { permissions: { '/': ['list', 'download'] } });
  write(home, 'keep.txt', 'keep\n');
  mkdirSync(path.join(home, 'dir'));
  const { ctx, page } = await h.signedIn(t, 'reader');
  await row(page, 'keep.txt').waitFor();
  await page.getByRole('region', { name: strings.quota }).waitFor();
  t.equal(await page.getByRole('button', { name: new RegExp(`^${strings.rename}`) }).count(), 0, 'no rename');
  t.equal(await page.getByRole('button', { name: new RegExp(`^${strings.delete}`) }).count(), 0, 'no delete');
  t.equal(await page.getByText(strings.upload).count(), 0, 'no upload');
  t.equal(await page.getByRole('button', { name: strings.newFolder }).count(), 0, 'no new folder');
  await box(page, 'keep.txt').click();
  await toolbar(page).getByRole('link', { name: strings.downloadZip }).waitFor();
  for (const b of [strings.move, strings.copy, strings.delete])
    t.equal(await toolbar(page).getByRole('button', { name: b }).count(), 0, `no ${b} in the toolbar`);
  await checkA11y(t, page, 'read-only folder');
  await screenshot(page, 'read-only');

  // the same session, straight to the REST API: refused
  const s = await (await ctx.request.get(`${h.f.origin}/api/v2/user/web-session`)).json();
  const headers = { 'X-CSRF-Token': s.csrf_token as string };
  const q = encodeURIComponent;
  const calls = [
    ctx.request.delete(`${h.f.origin}/api/v2/user/files?path=${q('/keep.txt')}`, { headers, failOnStatusCode: false }),
    ctx.request.patch(`${h.f.origin}/api/v2/user/files?path=${q('/keep.txt')}&target=${q('/renamed.txt')}`, { headers, failOnStatusCode: false }),
    ctx.request.post(`${h.f.origin}/api/v2/user/files/upload?path=${q('/new.txt')}`, {
      headers: { ...headers, 'Content-Type': 'application/octet-stream' },
      data: Buffer.from('x'),
      failOnStatusCode: false,
    }),
    ctx.request.post(`${h.f.origin}/api/v2/user/dirs?path=${q('/made')}`, { headers, failOnStatusCode: false }),
    ctx.request.post(`${h.f.origin}/api/v2/user/file-actions/copy?path=${q('/keep.txt')}&target=${q('/dir/keep.txt')}`, { headers, failOnStatusCode: false }),
    ctx.request.delete(`${h.f.origin}/api/v2/user/dirs?path=${q('/dir')}`, { headers, failOnStatusCode: false }),
  ];
  for (const [i, r] of (await Promise.all(calls)).entries()) {
    t.equal(r.status(), 403, `call ${i}: 403`);
    t.match(await r.json(), { message: /permission/, error: 'Forbidden' });
  }
  t.ok(existsSync(path.join(home, 'keep.txt')) && existsSync(path.join(home, 'dir')), 'nothing changed');
  t.notOk(existsSync(path.join(home, 'new.txt')) || existsSync(path.join(home, 'made')) || existsSync(path.join(home, 'dir/keep.txt')));
});

t.test('the write-disabled web client option hides writes even with every permission; the server refuses them', async (t) => {
  const home = await h.f.addUser('nowrite', { filters: { web_client: ['write-disabled'] } });
  write(home, 'doc.txt', 'doc\n');
  const { ctx, page } = await h.signedIn(t, 'nowrite');
  await row(page, 'doc.txt').waitFor();
  await page.getByRole('region', { name: strings.quota }).waitFor();
  t.equal(await page.getByRole('button', { name: `${strings.rename} doc.txt` }).count(), 0, 'no rename');
  t.equal(await page.getByText(strings.upload).count(), 0, 'no upload');
  t.equal(
    await row(page, 'doc.txt')
      .getByRole('button', { name: `${strings.preview} doc.txt` })
      .count(),
    1,
    'reading stays',
  );
  const s = await (await ctx.request.get(`${h.f.origin}/api/v2/user/web-session`)).json();
  const r = await ctx.request.delete(`${h.f.origin}/api/v2/user/files?path=%2Fdoc.txt`, { headers: { 'X-CSRF-Token': s.csrf_token }, failOnStatusCode: false });
  t.equal(r.status(), 403);
  t.match(await r.json(), { message: /write operations are disabled/, error: 'Forbidden' });
  t.ok(existsSync(path.join(home, 'doc.txt')));
});
