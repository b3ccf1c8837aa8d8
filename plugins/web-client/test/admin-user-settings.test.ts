/**
 * The limits, filters and virtual folders of the web admin's user and group
 * forms in Debian's chromium against a real Ferry: an invalid IP refused with
 * the API's message at its field; denied protocols, an allowed IP list, a
 * file pattern rule, a bandwidth limit, max sessions and a virtual folder set
 * through the user's form, read back by REST with the members the form does
 * not show kept; their effect (the pattern refuses an upload, the folder
 * receives one); a group with a denied protocol and a virtual folder created
 * through its form, and its member refused over HTTP; axe-core on the forms.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { en as admin } from '../app/src/admin/strings.js';
import { restAs, signInAdmin } from './admin-helpers.js';
import { passwordOf } from './helpers.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t);
});
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);
const basic = (username: string) => ({ authorization: `Basic ${Buffer.from(`${username}:${passwordOf(username)}`).toString('base64')}` });
/** An upload through the REST API as `token`: its status. */
const upload = async (token: string, vpath: string) =>
  (await h.f.ta.inject('POST', `/api/v2/user/files/upload?path=${encodeURIComponent(vpath)}`, { token, payload: 'data' })).statusCode;

let sharedDir = '';
t.before(async () => {
  sharedDir = path.join(h.f.ta.dataDir, 'folders', 'shared');
  const made = await rest('POST', '/api/v2/folders', { name: 'shared', mapped_path: sharedDir });
  if (made.status !== 201) throw new Error(made.raw);
});

t.test("a user's filters, limits and virtual folder set through the form, stored, and in effect", async (t) => {
  await h.f.addUser('pat', { additional_info: 'kept by the form', custom_placeholders: ['c1'], filters: { tls_certs: [], default_shares_expiration: 3 } });
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('heading', { name: admin.dashboard }).waitFor();
  await page.goto(`${h.f.origin}/web/admin/users/pat`);
  await page.getByRole('heading', { name: admin.editUser('pat') }).waitFor();
  await checkA11y(t, page, 'user form with its settings');

  // an invalid network: the API's message at the IP list, nothing stored
  await page.getByLabel(admin.allowedIpFilter).fill('127.0.0.0/8\n10.0.0.999/8');
  await page.getByRole('button', { name: admin.save, exact: true }).click();
  await page.locator('#u-f-allowed_ip[aria-invalid="true"]').waitFor();
  t.match(
    await page.locator('#u-f-allowed_ip-error').textContent(),
    /"filters\.allowed_ip\[1\]" must be an IP address or a CIDR network/,
    "the API's message at the field it names",
  );
  t.equal(await page.evaluate(() => document.activeElement?.id), 'u-f-allowed_ip', 'the refused field has the focus');
  t.notOk((await rest('GET', '/api/v2/users/pat')).body.filters?.allowed_ip, 'nothing stored');
  await checkA11y(t, page, 'user form with a refused IP');

  await page.getByLabel(admin.allowedIpFilter).fill('127.0.0.0/8\n10.0.0.0/8');
  const denied = page.getByRole('group', { name: admin.deniedProtocols });
  await denied.getByLabel(admin.protocolName('SSH'), { exact: true }).check();
  await denied.getByLabel(admin.protocolName('FTP'), { exact: true }).check();
  await page.getByRole('button', { name: admin.addFilePattern }).click();
  const pattern = page.getByRole('group', { name: admin.filePatternOf('/') });
  await pattern.getByLabel(admin.deniedPatterns).fill('*.exe, *.bat');
  await page.getByRole('button', { name: admin.addBandwidthLimit }).click();
  const limit = page.getByRole('group', { name: admin.bandwidthLimitOf(1) });
  await limit.getByLabel(admin.bandwidthSources).fill('10.0.0.0/8, 10.0.0.0/33');
  await limit.getByLabel(admin.bandwidthUpload).fill('128');
  await page.getByLabel(admin.maxSessions).fill('2');
  await page.getByRole('button', { name: admin.addFolderMapping }).click();
  const folder = page.getByRole('group', { name: admin.folderMappingOf('') });
  await folder.getByLabel(admin.folderName, { exact: true }).fill('shared');
  await page
    .getByRole('group', { name: admin.folderMappingOf('shared') })
    .getByLabel(admin.virtualPath)
    .fill('/shared');
  await checkA11y(t, page, 'user form with rows of settings');
  await page.getByRole('group', { name: admin.filePatterns }).scrollIntoViewIfNeeded();
  await screenshot(page, 'admin-user-settings');
  await page.getByRole('button', { name: admin.save, exact: true }).click();
  // a row's field: the message at the sources of that bandwidth limit
  await page.locator('#u-f-bw-sources-0[aria-invalid="true"]').waitFor();
  t.match(
    await page.locator('#u-f-bw-sources-0-error').textContent(),
    /"filters\.bandwidth_limits\[0\]\.sources\[1\]" must be an IP address or a CIDR network/,
  );
  t.equal(await page.getByRole('group', { name: admin.bandwidthLimits }).locator('p.error').count(), 0, 'not repeated for the whole list');
  await limit.getByLabel(admin.bandwidthSources).fill('10.0.0.0/8');
  await page.getByRole('button', { name: admin.save, exact: true }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.saved('pat') })
    .waitFor();

  const stored = (await rest('GET', '/api/v2/users/pat')).body;
  t.match(stored, {
    max_sessions: 2,
    virtual_folders: [{ name: 'shared', virtual_path: '/shared', quota_size: -1, quota_files: -1 }],
    filters: {
      allowed_ip: ['127.0.0.0/8', '10.0.0.0/8'],
      denied_protocols: ['SSH', 'FTP'],
      file_patterns: [{ path: '/', allowed_patterns: [], denied_patterns: ['*.exe', '*.bat'], deny_policy: 0 }],
      bandwidth_limits: [{ sources: ['10.0.0.0/8'], upload_bandwidth: 128, download_bandwidth: 0 }],
      default_shares_expiration: 3,
    },
    additional_info: 'kept by the form',
    custom_placeholders: ['c1'],
  });
  t.notOk('allow_api_key_auth' in stored.filters, 'a flag left off is not written (it would stop a primary group giving it)');
  t.equal(stored.virtual_folders.length, 1);

  // in effect: HTTP still allowed from 127.0.0.1, the pattern refuses an upload, the folder receives one
  const token = await h.f.ta.userToken('pat', passwordOf('pat'));
  t.equal(await upload(token, '/tool.exe'), 403, 'the denied pattern refuses the upload');
  t.equal(await upload(token, '/notes.txt'), 201, 'another name is accepted');
  t.equal(await upload(token, '/shared/in.txt'), 201, 'an upload into the virtual folder');
  t.ok(existsSync(path.join(sharedDir, 'in.txt')), "the folder's mapped path holds it");

  // the form shows what is stored, and an untouched save changes nothing
  const before = (await rest('GET', '/api/v2/users/pat')).body;
  await page.reload();
  await page.getByRole('heading', { name: admin.editUser('pat') }).waitFor();
  t.equal(await page.getByLabel(admin.allowedIpFilter).inputValue(), '127.0.0.0/8\n10.0.0.0/8');
  t.ok(await denied.getByLabel(admin.protocolName('FTP'), { exact: true }).isChecked());
  await page.getByRole('button', { name: admin.save, exact: true }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.saved('pat') })
    .waitFor();
  const again = (await rest('GET', '/api/v2/users/pat')).body;
  t.same({ ...again, updated_at: 0 }, { ...before, updated_at: 0 }, 'saved unchanged: the same user');
});

t.test("a group's denied protocol and virtual folder set through its form: its member is refused over HTTP", async (t) => {
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('heading', { name: admin.dashboard }).waitFor();
  await page.goto(`${h.f.origin}/web/admin/new-group`);
  await page.getByRole('heading', { name: admin.newGroup }).waitFor();
  await page.getByLabel(admin.name, { exact: true }).fill('nohttp');
  await page.getByRole('group', { name: admin.deniedProtocols }).getByLabel(admin.protocolName('HTTP'), { exact: true }).check();
  await page.getByRole('button', { name: admin.addFolderMapping }).click();
  await page
    .getByRole('group', { name: admin.folderMappingOf('') })
    .getByLabel(admin.folderName, { exact: true })
    .fill('shared');
  const folder = page.getByRole('group', { name: admin.folderMappingOf('shared') });
  await folder.getByLabel(admin.virtualPath).fill('/');
  await page.getByRole('button', { name: admin.create }).click();
  t.match(
    await page.getByRole('group', { name: admin.accountFolders }).locator('p.error').textContent(),
    /virtual_folders\[0\].*cannot be "\/"/,
    "the API's message at the group's virtual folders",
  );
  t.equal((await rest('GET', '/api/v2/groups/nohttp')).status, 404, 'nothing created');
  await folder.getByLabel(admin.virtualPath).fill('/team');
  await folder.getByLabel(admin.folderQuotaSize).fill('0');
  await folder.getByLabel(admin.folderQuotaFiles).fill('0');
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('heading', { name: admin.editGroup('nohttp') }).waitFor();
  await checkA11y(t, page, 'group form with its settings');
  t.match((await rest('GET', '/api/v2/groups/nohttp')).body, {
    name: 'nohttp',
    user_settings: { filters: { denied_protocols: ['HTTP'] } },
    virtual_folders: [{ name: 'shared', virtual_path: '/team', quota_size: 0, quota_files: 0 }],
  });

  await h.f.addUser('gus');
  t.equal((await h.f.ta.inject('GET', '/api/v2/user/token', { headers: basic('gus') })).statusCode, 200, 'before the group: HTTP login works');
  const gus = (await rest('GET', '/api/v2/users/gus')).body;
  t.equal((await rest('PUT', '/api/v2/users/gus', { ...gus, groups: [{ name: 'nohttp', type: 1 }] })).status, 200);
  const refused = await h.f.ta.inject('GET', '/api/v2/user/token', { headers: basic('gus') });
  t.not(refused.statusCode, 200, "the group's denied protocol refuses its member's HTTP login");
  t.ok(refused.statusCode >= 400 && refused.statusCode < 500, `a 4xx (${refused.statusCode})`);
});
