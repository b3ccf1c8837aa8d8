// @ferry-test database-independent: one account; the listing is the filesystem's and the service's work
import t from 'tap';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type ssh2 from 'ssh2';
import { connectSsh, openSftp, sshKey, startSftp } from './helpers.js';

// A directory of 100,000 entries listed over SFTP: answered in pages of bounded size, every name
// exactly once, and a handle closed halfway through a listing.

const ENTRIES = 100_000;

t.test('READDIR of a 100,000-entry directory', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const home = await h.addUser('lena', { public_keys: [key.pub] });
  const big = path.join(home, 'big');
  mkdirSync(big, { recursive: true });
  for (let i = 0; i < ENTRIES; i++) closeSync(openSync(path.join(big, `f${String(i).padStart(6, '0')}.txt`), 'w'));

  const c = await connectSsh({ host: '127.0.0.1', port: h.port, username: 'lena', privateKey: readFileSync(key.file) });
  t.teardown(() => c.end());
  const sftp = await openSftp(c);
  const opendir = (p: string) => new Promise<Buffer>((resolve, reject) => sftp.opendir(p, (err, handle) => (err ? reject(err) : resolve(handle))));
  const page = (handle: Buffer) =>
    new Promise<ssh2.FileEntry[] | false>((resolve, reject) =>
      sftp.readdir(handle, (err: (Error & { code?: number }) | undefined, list: ssh2.FileEntry[]) => {
        if (err && err.code === 1) return resolve(false); // EOF
        if (err) return reject(err);
        resolve(list);
      }),
    );
  const close = (handle: Buffer) => new Promise<void>((resolve, reject) => sftp.close(handle, (err) => (err ? reject(err) : resolve())));

  const handle = await opendir('/big');
  const names = new Set<string>();
  let pages = 0;
  let largest = 0;
  for (let list = await page(handle); list; list = await page(handle)) {
    pages++;
    largest = Math.max(largest, list.length);
    for (const e of list) if (e.filename !== '.' && e.filename !== '..') names.add(e.filename);
  }
  await close(handle);
  t.equal(names.size, ENTRIES, 'every entry, once');
  t.ok(names.has('f000000.txt') && names.has(`f${String(ENTRIES - 1).padStart(6, '0')}.txt`), 'the first and the last');
  t.ok(largest <= 1024, `pages of bounded size (the largest: ${largest} names, ${pages} pages)`);
  t.ok(pages >= ENTRIES / 1024, 'many pages, not one answer');

  // closed halfway: the handle is released and the next listing starts again from the top
  const again = await opendir('/big');
  const first = await page(again);
  t.ok(first && first.length > 0, 'a first page');
  await close(again);
  const fresh = await opendir('/big');
  const count = (await page(fresh)) || [];
  t.ok(count.length > 0, 'a new listing after a closed one');
  await close(fresh);
});
