/**
 * The web admin's actions on users in Debian's chromium against a real Ferry:
 * several users disabled at once from the list (the rest of each user kept).
 */
import t from 'tap';
import { en as admin } from '../app/src/admin/strings.js';
import { openFromNav, restAs, signInAdmin } from './admin-helpers.js';
import { harness, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t);
});
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);
/** A user as the REST API reads it, without what a status change or a read moves by itself. */
const settingsOf = (u: Record<string, any>) => {
  const { status: _status, updated_at: _updated, last_login: _login, ...rest } = u;
  return rest;
};

t.test('bulk disable: the users selected are disabled, every other field kept', async (t) => {
  await h.f.addUser('bulk-a', { email: 'a@example.com', description: 'first', quota_size: 1048576, permissions: { '/': ['list', 'download'] } });
  await h.f.addUser('bulk-b', { email: 'b@example.com', max_sessions: 3, expiration_date: Date.parse('2031-01-01T00:00:00Z') });
  await h.f.addUser('bulk-c', { description: 'left alone' });
  const before = await Promise.all(['bulk-a', 'bulk-b'].map(async (u) => (await rest('GET', `/api/v2/users/${u}`)).body));
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await openFromNav(page, admin.users);
  await page.getByRole('checkbox', { name: admin.selectRow('bulk-a') }).check();
  await page.getByRole('checkbox', { name: admin.selectRow('bulk-b') }).check();
  await page.getByText(admin.selectedRows(2)).waitFor();
  await page.getByRole('button', { name: admin.disableSelected }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.usersDisabled(['bulk-a', 'bulk-b']) })
    .waitFor();
  for (const [i, u] of ['bulk-a', 'bulk-b'].entries()) {
    const now = (await rest('GET', `/api/v2/users/${u}`)).body;
    t.equal(now.status, 0, `${u} disabled`);
    t.same(settingsOf(now), settingsOf(before[i]!), `${u}: every other field unchanged`);
  }
  t.equal((await rest('GET', '/api/v2/users/bulk-c')).body.status, 1, 'the user not selected is still enabled');

  // select all of the page, then a user deleted meanwhile: its failure shown with the API's message, the others enabled
  await page.getByRole('checkbox', { name: admin.selectPage }).check();
  t.equal((await rest('DELETE', '/api/v2/users/bulk-c')).status, 200);
  await page.getByRole('button', { name: admin.enableSelected }).click();
  const alert = page.getByRole('alert').filter({ hasText: 'bulk-c: ' });
  await alert.waitFor();
  t.match(await alert.textContent(), /bulk-c: .*not found/i, "the refused user with the API's message");
  t.equal((await rest('GET', '/api/v2/users/bulk-a')).body.status, 1, 'bulk-a enabled again');
  t.equal((await rest('GET', '/api/v2/users/bulk-b')).body.status, 1, 'bulk-b enabled again');
});
