/**
 * A large file upload in Debian's chromium against a Ferry whose TUS chunks
 * may hold the whole file (the shipped configuration's case): one creation
 * and one PATCH carrying every byte (the File sent whole: chromium sends a
 * slice of a file about half as fast), byte-identical, nothing left in the
 * server's chunk store. The sliced path (a file larger than a chunk, and
 * resumes) is covered by uploads.test.ts.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { en as strings } from '../app/src/strings.js';
import { harness, type Harness } from './page.js';

const MB = 1024 * 1024;
let h: Harness;
t.before(async () => {
  h = await harness(t, { config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 64 }] } } });
});
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ferry-uploads-whole-'));

t.test('a 20 MiB file with 64 MiB chunks: one PATCH of the whole file, byte-identical', async (t) => {
  const home = await h.f.addUser('whole');
  const data = Buffer.alloc(20 * MB + 77);
  for (let i = 0; i < data.length; i++) data[i] = (i * 29 + (i >> 12)) % 256;
  const local = path.join(tmp, 'whole.bin');
  writeFileSync(local, data);
  const { page } = await h.signedIn(t, 'whole');
  const patches: { offset?: string }[] = [];
  page.on('request', (r) => {
    if (r.method() === 'PATCH' && r.url().includes('/api/v2/user/chunked-uploads/')) {
      patches.push({ offset: r.headers()['upload-offset'] });
    }
  });
  await page.getByLabel(strings.upload).setInputFiles(local);
  await page.locator('.upload-total .upload-status').filter({ hasText: strings.uploadAllDone }).waitFor({ timeout: 60_000 });
  t.equal(patches.length, 1, 'one PATCH');
  t.equal(patches[0]?.offset, '0', 'from the start');
  t.same(readFileSync(path.join(home, 'whole.bin')), data, 'byte-identical');
  t.same(readdirSync(path.join(h.f.ta.config.common.temp_dir, 'chunked-uploads')), [], 'nothing left in the chunk store');
});
