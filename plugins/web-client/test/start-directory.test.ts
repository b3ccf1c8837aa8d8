/**
 * filters.start_directory in the web client (Debian's chromium against a
 * real Ferry): the client's bare address opens the account's start
 * directory after the sign-in and on a reload; an address naming a folder
 * (the root's included) is kept; a missing start directory opens the root.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { en as strings } from '../app/src/strings.js';
import { delayRequests, harness, row, signIn, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t);
});

t.test('the bare address opens the start directory; a named folder is kept', async (t) => {
  const home = await h.f.addUser('stella', { filters: { start_directory: '/in/box' } });
  mkdirSync(path.join(home, 'in', 'box'), { recursive: true });
  writeFileSync(path.join(home, 'in', 'box', 'deep.txt'), 'deep');
  writeFileSync(path.join(home, 'top.txt'), 'top');
  const { page } = await h.openPage(t);
  // the root is listed before the start directory is known: that listing, answering last, must not replace the start directory's
  const rootListing = await delayRequests(page, /\/api\/v2\/user\/dirs\?path=%2F$/, 500);

  await signIn(page, h.f, 'stella');
  await row(page, 'deep.txt').waitFor();
  await rootListing.answered;
  await rootListing.remove();
  await new Promise((r) => setTimeout(r, 200));
  t.equal(await row(page, 'top.txt').count(), 0, "the root's late listing is not shown");
  await row(page, 'deep.txt').waitFor();
  await page.getByRole('heading', { name: 'box' }).waitFor();
  t.match(page.url(), /\/web\/client\/files\/in\/box$/, 'the URL names the start directory');

  await page.goto(h.f.url);
  await row(page, 'deep.txt').waitFor();
  t.match(page.url(), /\/web\/client\/files\/in\/box$/, 'a reload of the bare address: the start directory again');

  await page.goto(`${h.f.origin}/web/client/files`);
  await row(page, 'top.txt').waitFor();
  t.match(page.url(), /\/web\/client\/files$/, 'an address naming the root keeps it');
  await page.getByRole('heading', { name: strings.home }).waitFor();
});

t.test('a missing start directory: the root', async (t) => {
  const home = await h.f.addUser('stan', { filters: { start_directory: '/gone' } });
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'here.txt'), 'here');
  const { page } = await h.openPage(t);
  await signIn(page, h.f, 'stan');
  await page.getByRole('heading', { name: strings.home }).waitFor();
  await row(page, 'here.txt').waitFor();
  t.notMatch(page.url(), /gone/);
});
