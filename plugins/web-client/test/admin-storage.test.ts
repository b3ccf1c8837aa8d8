/**
 * The web admin's filesystem provider sub-forms in Debian's chromium against a
 * real Ferry: a user created on the S3 test server (s3rver, 127.0.0.1:19000,
 * bucket ferry-test) through the form after the API refused its endpoint (the
 * message at the endpoint's field), its config and secret read back through
 * the REST API (the secret stored, never shown), edited with the secret kept,
 * then a file uploaded as that user landing in the bucket; the seven
 * providers' sub-forms switched in the user form (typed values kept); a
 * virtual folder whose provider has no plugin refused at the provider; a
 * group's users on SFTP. axe-core on each form, screenshots
 * (FERRY_SCREENSHOT_DIR, e.g. docs/images/web-admin).
 */
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { en as admin } from '../app/src/admin/strings.js';
import { PROVIDERS } from '../app/src/admin/storage-model.js';
import { restAs, signInAdmin } from './admin-helpers.js';
import { passwordOf } from './helpers.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';

/** s3rver as scripts/servers/start-s3.sh starts it (anonymous reads allowed: the test looks behind Ferry's back). */
const S3_PORT = Number(process.env.FERRY_S3_PORT ?? 19000);
const S3_ENDPOINT = `http://127.0.0.1:${S3_PORT}`;
const BUCKET = 'ferry-test';

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port, timeout: 1000 });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

let h: Harness;
t.before(async () => {
  h = await harness(t, { plugins: [{ name: '@ferry/fs-s3' }, { name: '@ferry/fs-sftp' }] });
});
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);

t.test('a user on S3 from the form: a refused endpoint first, the secret stored and kept, a file in the bucket', async (t) => {
  if (!(await portOpen(S3_PORT))) {
    const why = `s3rver is not listening on 127.0.0.1:${S3_PORT} (start it: bash scripts/servers/start-s3.sh)`;
    if (process.env.CI === 'true') throw new Error(why);
    t.plan(0, why);
    return;
  }
  const prefix = `admin-storage-${Date.now().toString(36)}/`;
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('navigation', { name: admin.mainNav }).getByRole('link', { name: admin.users }).click();
  await page.getByRole('button', { name: admin.addUser }).click();
  await page.getByRole('heading', { name: admin.newUser }).waitFor();
  await page.getByLabel(admin.username).fill('sam');
  await page.getByLabel(admin.password, { exact: true }).fill(passwordOf('sam'));
  await page.getByLabel(admin.homeDir).fill(path.join(h.f.ta.dataDir, 'homes', 'sam'));
  await page.getByLabel(admin.storageProvider).selectOption(String(1));
  t.equal(await page.locator('#u-fs-access_secret-help').textContent(), admin.secretUnset, 'a new secret: not set');
  await page.locator('#u-fs-bucket').fill(BUCKET);
  await page.locator('#u-fs-region').fill('us-east-1');
  await page.locator('#u-fs-endpoint').fill('127.0.0.1:19000');
  await page.locator('#u-fs-access_key').fill('S3RVER');
  await page.locator('#u-fs-access_secret').fill('S3RVER');
  t.equal(await page.locator('#u-fs-access_secret-help').textContent(), admin.secretTyped, 'a typed secret: to be stored');
  await page.locator('#u-fs-key_prefix').fill(prefix);
  await page.getByLabel(admin.storageOptionLabel('force_path_style')).check();
  await page.getByRole('button', { name: admin.create }).click();

  await page.locator('#u-fs-endpoint[aria-invalid="true"]').waitFor();
  t.match(await page.locator('#u-fs-endpoint-error').textContent(), /endpoint must be an http:\/\/ or https:\/\/ URL/, "the API's message at the endpoint");
  t.equal(await page.evaluate(() => document.activeElement?.id), 'u-fs-endpoint', 'the refused option has the focus');
  t.equal(await page.locator('#u-fs-bucket[aria-invalid="true"]').count(), 0, 'the other options are not marked');
  t.equal((await rest('GET', '/api/v2/users/sam')).status, 404, 'nothing created');
  await checkA11y(t, page, 'user form on S3 with a refused option');
  await screenshot(page, 'admin-user-s3-error');

  await page.locator('#u-fs-endpoint').fill(S3_ENDPOINT);
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('heading', { name: admin.editUser('sam') }).waitFor();
  const created = await rest('GET', '/api/v2/users/sam');
  t.match(created.body.filesystem, {
    provider: 1,
    s3config: { bucket: BUCKET, region: 'us-east-1', endpoint: S3_ENDPOINT, access_key: 'S3RVER', key_prefix: prefix, force_path_style: true },
  });
  const secret = created.body.filesystem.s3config.access_secret as Record<string, unknown>;
  t.match(secret, { status: /^(?!Plain$)./ }, 'the secret is stored, encrypted');
  t.notOk('payload' in secret, 'its value is not shown');
  t.notOk('sse_customer_key' in created.body.filesystem.s3config, 'a secret left empty is not stored');
  t.equal(await page.locator('#u-fs-access_secret-help').textContent(), admin.secretSet, 'read back as set');
  t.equal(await page.locator('#u-fs-access_secret').inputValue(), '', 'never its value');
  t.equal(await page.locator('#u-fs-access_secret').getAttribute('placeholder'), admin.secretKeepPlaceholder);
  t.equal(await page.locator('#u-fs-sse_customer_key-help').textContent(), admin.secretUnset);
  await checkA11y(t, page, 'user form on S3');
  await screenshot(page, 'admin-user-s3');

  // edited with the secret input left empty: the stored secret is kept
  await page.locator('#u-fs-upload_concurrency').fill('3');
  await page.getByRole('button', { name: admin.save, exact: true }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.saved('sam') })
    .waitFor();
  const edited = await rest('GET', '/api/v2/users/sam');
  t.match(
    edited.body.filesystem.s3config,
    { upload_concurrency: 3, access_key: 'S3RVER', access_secret: { status: secret.status } },
    'edited, the secret kept',
  );

  // the user's files are in the bucket (the kept secret signs the requests)
  const token = await h.f.ta.userToken('sam', passwordOf('sam'));
  t.teardown(() => h.f.ta.inject('DELETE', '/api/v2/user/files?path=%2Fhello.txt', { token }));
  const up = await h.f.ta.inject('POST', '/api/v2/user/files/upload?path=%2Fhello.txt', { token, payload: 'hello from the admin form' });
  t.equal(up.statusCode, 201, 'uploaded as the user');
  const list = await h.f.ta.inject('GET', '/api/v2/user/dirs?path=%2F', { token });
  t.equal(list.statusCode, 200);
  t.same(
    (JSON.parse(list.payload) as { name: string }[]).map((e) => e.name),
    ['hello.txt'],
    "the user's listing",
  );
  const object = await fetch(`${S3_ENDPOINT}/${BUCKET}/${prefix}hello.txt`);
  t.equal(object.status, 200, 'the object is in the bucket under the key prefix');
  t.equal(await object.text(), 'hello from the admin form');
});

t.test('the seven providers: each sub-form in the user form, secrets not set, typed values kept across switches', async (t) => {
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('navigation', { name: admin.mainNav }).getByRole('link', { name: admin.users }).click();
  await page.getByRole('button', { name: admin.addUser }).click();
  await page.getByRole('heading', { name: admin.newUser }).waitFor();
  const provider = page.getByLabel(admin.storageProvider);
  t.equal(await provider.inputValue(), '0', 'a new user: the local filesystem');
  t.same(
    await provider.locator('option').allTextContents(),
    PROVIDERS.map((p) => admin.providerName(p.provider)),
    'the seven providers offered',
  );
  for (const p of PROVIDERS) {
    await provider.selectOption(String(p.provider));
    for (const spec of p.options) {
      const control = page.locator(`#u-fs-${spec.key}`);
      t.equal(await control.count(), 1, `${p.configKey}: ${spec.key} shown`);
      if (spec.kind === 'secret') {
        const help = await page.locator(`#u-fs-${spec.key}-help`).textContent();
        t.ok(help?.startsWith(admin.secretUnset), `${p.configKey}.${spec.key}: not set (${help})`);
      }
    }
    const others = PROVIDERS.flatMap((o) => o.options.map((s) => s.key)).filter((k) => !p.options.some((s) => s.key === k));
    for (const key of new Set(others)) t.equal(await page.locator(`#u-fs-${key}`).count(), 0, `${p.configKey}: no ${key}`);
    if (p.provider === 5) {
      t.equal(await page.locator('#u-fs-private_key').evaluate((e) => e.tagName), 'TEXTAREA', 'a private key takes several lines');
      await checkA11y(t, page, 'user form on SFTP');
    }
    if (p.provider === 3) await page.locator('#u-fs-container').fill('typed-container');
  }
  await provider.selectOption('1');
  await provider.selectOption('3');
  t.equal(await page.locator('#u-fs-container').inputValue(), 'typed-container', 'what was typed for a provider is kept while another is tried');
});

t.test('a virtual folder: the mapped path only on a local provider, a provider without its plugin refused at the provider', async (t) => {
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('navigation', { name: admin.mainNav }).getByRole('link', { name: admin.folders }).click();
  await page.getByRole('button', { name: admin.addFolder }).click();
  await page.getByRole('heading', { name: admin.newFolder }).waitFor();
  await page.getByLabel(admin.name, { exact: true }).fill('cloud');
  const provider = page.getByLabel(admin.storageProvider);
  t.equal(await page.getByLabel(admin.mappedPath).count(), 1, 'local: its directory');
  await provider.selectOption('4');
  t.equal(await page.getByLabel(admin.mappedPath).count(), 1, 'encrypted local: its directory');
  await provider.selectOption('2');
  t.equal(await page.getByLabel(admin.mappedPath).count(), 0, 'Cloud Storage: no local directory');
  await page.locator('#vf-fs-bucket').fill('ferry-bucket');
  await page.locator('#vf-fs-credentials').fill('e30=');
  await page.getByRole('button', { name: admin.create }).click();
  await page.locator('#vf-fs-provider[aria-invalid="true"]').waitFor();
  t.match(
    await page.locator('#vf-fs-provider-error').textContent(),
    /provider 2 is not available/,
    'no plugin registers Cloud Storage here: said at the provider',
  );
  t.equal((await rest('GET', '/api/v2/folders/cloud')).status, 404, 'nothing created');
  await checkA11y(t, page, 'folder form with a refused provider');
});

t.test("a group's users on SFTP: the sub-form under user_settings, secrets stored and shown as set", async (t) => {
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await page.getByRole('navigation', { name: admin.mainNav }).getByRole('link', { name: admin.groups }).click();
  await page.getByRole('button', { name: admin.addGroup }).click();
  await page.getByRole('heading', { name: admin.newGroup }).waitFor();
  await page.getByLabel(admin.name, { exact: true }).fill('remote');
  await page.getByLabel(admin.storageProvider).selectOption('5');
  await page.locator('#g-fs-endpoint').fill('127.0.0.1:19022');
  await page.locator('#g-fs-username').fill('ferrysftp');
  await page.locator('#g-fs-password').fill('ferrysftp-pass');
  await page.locator('#g-fs-fingerprints').fill('SHA256:not-a-fingerprint');
  await page.getByRole('button', { name: admin.create }).click();
  await page.locator('#g-fs-fingerprints[aria-invalid="true"]').waitFor();
  t.match(
    await page.locator('#g-fs-fingerprints-error').textContent(),
    /fingerprints\[0\].*SHA256 host key fingerprint/,
    'user_settings.filesystem.sftpconfig.fingerprints[0] at its field',
  );
  t.equal((await rest('GET', '/api/v2/groups/remote')).status, 404, 'nothing created');

  await page.locator('#g-fs-fingerprints').fill('');
  await page.locator('#g-fs-prefix').fill('/upload');
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('heading', { name: admin.editGroup('remote') }).waitFor();
  const got = await rest('GET', '/api/v2/groups/remote');
  t.match(got.body.user_settings.filesystem, { provider: 5, sftpconfig: { endpoint: '127.0.0.1:19022', username: 'ferrysftp', prefix: '/upload' } });
  t.notOk('payload' in got.body.user_settings.filesystem.sftpconfig.password, 'the password is stored, not shown');
  t.ok(got.body.user_settings.filesystem.sftpconfig.password.status, 'with its status');
  t.equal(await page.locator('#g-fs-password-help').textContent(), admin.secretSet);
  t.equal(await page.locator('#g-fs-private_key-help').textContent(), admin.secretUnset);
  await checkA11y(t, page, 'group form on SFTP');
  await screenshot(page, 'admin-group-sftp');
});
