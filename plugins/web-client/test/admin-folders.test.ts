/**
 * The web admin's virtual folders in Debian's chromium against a real Ferry:
 * the list (mapped path, description, used quota, the users using a folder),
 * a quota scan, a folder created from the form after the API refused its
 * mapped path, edited, deleted (refused while a user uses it), an admin
 * without manage_folders (no folders page, the REST refuses), axe-core on
 * each page, screenshots (FERRY_SCREENSHOT_DIR, e.g. docs/images/web-admin).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { en as admin } from '../app/src/admin/strings.js';
import { formatSize } from '../app/src/format.js';
import { restAs, signInAdmin } from './admin-helpers.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t);
});
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);

t.test('virtual folders: list, quota scan, create (a refused field first), edit, delete', async (t) => {
  const sharedDir = path.join(h.f.ta.dataDir, 'folders', 'shared');
  t.equal((await rest('POST', '/api/v2/folders', { name: 'shared', description: 'team files', mapped_path: sharedDir })).status, 201);
  await h.f.addUser('fay', { virtual_folders: [{ name: 'shared', virtual_path: '/shared' }] });
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('navigation', { name: admin.mainNav }).getByRole('link', { name: admin.folders }).click();
  await page.getByRole('heading', { name: admin.folders, level: 1 }).waitFor();
  const row = (name: string) =>
    page
      .getByTestId('folders')
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name }) });
  t.match(
    await row('shared').textContent(),
    `shared${sharedDir}team files${admin.folderUsed('0 bytes', 0)}${admin.folderUserRef('fay')}`,
    'name, mapped path, description, used quota, the user using it',
  );
  await checkA11y(t, page, 'folders page');
  await screenshot(page, 'admin-folders');

  // files written on disk: counted by the scan, the list shows them when it ends
  await mkdir(sharedDir, { recursive: true });
  await writeFile(path.join(sharedDir, 'report.bin'), Buffer.alloc(4000));
  await row('shared')
    .getByRole('button', { name: admin.scanFolder('shared') })
    .click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.folderScanDone('shared') })
    .waitFor();
  t.match(await row('shared').textContent(), admin.folderUsed(formatSize(4000), 1), 'the used quota read again after the scan');

  await page.getByRole('button', { name: admin.addFolder }).click();
  await page.getByRole('heading', { name: admin.newFolder }).waitFor();
  await page.getByLabel(admin.name, { exact: true }).fill('inbox');
  await page.getByLabel(admin.description).fill('incoming files');
  await page.getByLabel(admin.mappedPath).fill('srv/inbox');
  await page.getByRole('button', { name: admin.create }).click();
  await page.locator('#vf-mapped_path[aria-invalid="true"]').waitFor();
  t.match(await page.locator('#vf-mapped_path-error').textContent(), /mapped_path.*absolute/, "the API's message at the field it names");
  t.equal(await page.evaluate(() => document.activeElement?.id), 'vf-mapped_path', 'the refused field has the focus');
  t.equal((await rest('GET', '/api/v2/folders/inbox')).status, 404, 'nothing created');
  await checkA11y(t, page, 'folder form with an error');
  await screenshot(page, 'admin-folder-error');

  const inboxDir = path.join(h.f.ta.dataDir, 'folders', 'inbox');
  await page.getByLabel(admin.mappedPath).fill(inboxDir);
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('heading', { name: admin.editFolder('inbox') }).waitFor();
  t.match((await rest('GET', '/api/v2/folders/inbox')).body, {
    name: 'inbox',
    description: 'incoming files',
    mapped_path: inboxDir,
    filesystem: { provider: 0 },
  });
  t.equal(await page.getByLabel(admin.name, { exact: true }).getAttribute('readonly'), '', 'the name is fixed once created');
  t.equal(await page.getByTestId('folder-users').textContent(), admin.unusedFolder);

  await page.getByLabel(admin.description).fill('incoming partner files');
  await page.getByRole('button', { name: admin.save, exact: true }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.folderSaved('inbox') })
    .waitFor();
  t.match((await rest('GET', '/api/v2/folders/inbox')).body, { description: 'incoming partner files', mapped_path: inboxDir }, 'edited, the rest kept');
  await checkA11y(t, page, 'folder form');
  await screenshot(page, 'admin-folder-form');

  // deleting: refused while fay uses it, then an unused one is deleted
  await page.getByRole('button', { name: admin.backToFolders }).click();
  await row('shared')
    .getByRole('button', { name: admin.deleteFolder('shared') })
    .click();
  await page.getByRole('dialog').getByText(admin.confirmDeleteFolder('shared')).waitFor();
  await checkA11y(t, page, 'folder delete confirmation');
  await page.getByRole('dialog').getByRole('button', { name: admin.delete }).click();
  t.match(await page.getByRole('alert').textContent(), /still referenced by user "fay"/, "the server's refusal is shown");
  t.equal((await rest('GET', '/api/v2/folders/shared')).status, 200, 'not deleted');

  await row('inbox')
    .getByRole('button', { name: admin.deleteFolder('inbox') })
    .click();
  await page.getByRole('dialog').getByRole('button', { name: admin.delete }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.folderDeleted('inbox') })
    .waitFor();
  t.equal((await rest('GET', '/api/v2/folders/inbox')).status, 404, 'deleted on the server');
  await row('inbox').waitFor({ state: 'detached' });
});

t.test('an admin without manage_folders sees no folders page, and the REST refuses', async (t) => {
  const made = await rest('POST', '/api/v2/admins', { username: 'grouper', password: 'grouper-pass-1', permissions: ['manage_groups'] });
  t.equal(made.status, 201);
  const { ctx, page } = await h.openPage(t);
  await signInAdmin(page, h.f, 'grouper', 'grouper-pass-1');
  await page.getByRole('heading', { name: admin.groups, level: 1 }).waitFor();
  const nav = page.getByRole('navigation', { name: admin.mainNav });
  t.equal(await nav.getByRole('link', { name: admin.folders }).count(), 0, 'no folders link');
  t.equal(await nav.getByRole('link', { name: admin.admins }).count(), 0, 'no admins link');
  await page.goto(`${h.f.origin}/web/admin/folders`);
  await page.getByRole('heading', { name: admin.groups, level: 1 }).waitFor();
  t.equal(await page.getByRole('heading', { name: admin.folders, level: 1 }).count(), 0, 'the folders URL shows the first allowed page');
  const refused = await ctx.request.get(`${h.f.origin}/api/v2/folders`, { failOnStatusCode: false });
  t.equal(refused.status(), 403, 'the REST refuses the folders to its session');
  await checkA11y(t, page, 'groups page of an admin without manage_folders');
});
