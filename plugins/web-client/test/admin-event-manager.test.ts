/**
 * The web admin's event manager in Debian's chromium against a real Ferry
 * (with the HTTP and filesystem action plugins): an HTTP action whose body
 * template is previewed in the browser (Go's error first, then the rendered
 * body), its password kept as set and never read back, a refused option
 * shown at its field; a filesystem action and an on-demand rule using it,
 * run from the rule's page (the directory it makes appears in the user's
 * home); axe-core on each page, screenshots (FERRY_SCREENSHOT_DIR).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import t from 'tap';
import { en as admin } from '../app/src/admin/strings.js';
import { openFromNav, restAs, signInAdmin } from './admin-helpers.js';
import { checkA11y, harness, screenshot, type Harness } from './page.js';

let h: Harness;
t.before(async () => {
  h = await harness(t, { plugins: [{ name: '@ferry/action-http' }, { name: '@ferry/action-fs' }] });
});
/** An action option's control (by its label; the preview of a template field is labelled after it). */
const opt = (page: Page, key: string) => page.getByLabel(admin.optionLabel(key), { exact: true });
const rest = (method: string, url: string, payload?: unknown) => restAs(h.f, method, url, payload);

t.test('an HTTP action: template preview (error, then the body), a refused option at its field, the password set and not read back', async (t) => {
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await openFromNav(page, admin.eventActions);
  await page.getByText(admin.noEventActions).waitFor();
  await checkA11y(t, page, 'event actions (none yet)');

  await page.getByRole('button', { name: admin.addEventAction }).click();
  await page.getByRole('heading', { name: admin.newEventAction }).waitFor();
  await page.getByLabel(admin.name, { exact: true }).fill('notify');
  t.equal(await page.getByLabel(admin.actionType).inputValue(), '1', 'a new action is an HTTP request');
  await opt(page, 'endpoint').fill('https://hooks.example.com/ferry/{{.Name}}');
  await page.getByTestId('ea-opt-endpoint-preview').filter({ hasText: 'https://hooks.example.com/ferry/alice' }).waitFor();

  const body = opt(page, 'body');
  await body.fill('{"user": "{{.Name}", "file": {{toJson .VirtualPath}}}');
  const bodyError = page.getByTestId('ea-opt-body-preview-error');
  await bodyError.waitFor();
  t.match(await bodyError.textContent(), /^template: preview:1: /, "Go's message for the broken template");
  await checkA11y(t, page, 'action form with a template error');
  await screenshot(page, 'admin-event-action-template-error');

  await body.fill('{"user": "{{.Name}}", "file": {{toJson .VirtualPath}}, "size": {{.FileSize}}, "event": "{{.Event}}"}');
  const preview = page.getByTestId('ea-opt-body-preview');
  await preview.waitFor();
  t.equal(
    await preview.textContent(),
    '{"user": "alice", "file": "/in/report.csv", "size": 1048576, "event": "upload"}',
    'the body rendered for a sample upload',
  );
  await page.getByLabel(admin.previewTrigger).selectOption({ label: admin.triggerName(2) });
  await preview.filter({ hasText: '"user": "bob"' }).waitFor();
  t.equal(await preview.textContent(), '{"user": "bob", "file": "", "size": 0, "event": "add"}', "a provider event's sample: the added user");
  await page.getByLabel(admin.previewTrigger).selectOption({ label: admin.triggerName(1) });
  await preview.filter({ hasText: '"user": "alice"' }).waitFor();

  await opt(page, 'headers').fill('X-Ferry-User={{.Name}}');
  await opt(page, 'password').fill('hunter2-secret');
  await opt(page, 'timeout').fill('999');
  await page.getByRole('button', { name: admin.create }).click();
  const timeout = page.locator('#ea-opt-timeout[aria-invalid="true"]');
  await timeout.waitFor();
  t.match(await page.locator('#ea-opt-timeout-error').textContent(), /"timeout"/, "the API's message at the option it names");
  t.equal((await rest('GET', '/api/v2/eventactions/notify')).status, 404, 'nothing created');

  await opt(page, 'timeout').fill('30');
  await opt(page, 'username').fill('ferry');
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('heading', { name: admin.editEventAction('notify') }).waitFor();
  const saved = await rest('GET', '/api/v2/eventactions/notify');
  t.match(saved.body, {
    type: 1,
    options: {
      http_config: {
        endpoint: 'https://hooks.example.com/ferry/{{.Name}}',
        method: 'POST',
        timeout: 30,
        headers: [{ key: 'X-Ferry-User', value: '{{.Name}}' }],
        body: '{"user": "{{.Name}}", "file": {{toJson .VirtualPath}}, "size": {{.FileSize}}, "event": "{{.Event}}"}',
      },
    },
  });
  const password = saved.body.options.http_config.password as Record<string, unknown>;
  t.not(password.status, 'Plain', 'the password is stored encrypted');
  t.notOk(saved.raw.includes('hunter2-secret'), 'the API never reads the password back');
  t.equal(await opt(page, 'password').inputValue(), '', 'the form shows no password');
  await page.getByText(admin.secretSet).waitFor();

  // saved again untouched: the stored password is kept
  await page.getByLabel(admin.description).fill('tells the partner');
  await page.getByRole('button', { name: admin.save, exact: true }).click();
  await page
    .getByRole('status')
    .filter({ hasText: admin.eventActionSaved('notify') })
    .waitFor();
  const again = await rest('GET', '/api/v2/eventactions/notify?confidential_data=1');
  t.equal(again.body.description, 'tells the partner');
  t.ok(again.body.options.http_config.password.payload, 'the password is still stored');
  await checkA11y(t, page, 'saved HTTP action');
  await screenshot(page, 'admin-event-action-http');
});

t.test(
  "an HTTP action's nested options as JSON (its multipart parts): refused as JSON in the browser, then the API's message at the field, then saved and read back",
  async (t) => {
    const { page } = await h.openPage(t);
    await signInAdmin(page, h.f);
    await page.goto(`${h.f.origin}/web/admin/new-event-action`);
    await page.getByRole('heading', { name: admin.newEventAction }).waitFor();
    await page.getByLabel(admin.name, { exact: true }).fill('post-file');
    await opt(page, 'endpoint').fill('https://hooks.example.com/in');
    const parts = opt(page, 'parts');
    const invalid = page.locator('#ea-opt-parts[aria-invalid="true"]');
    const message = page.locator('#ea-opt-parts-error');

    // not JSON: refused before any request, at the field
    let posted = 0;
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/api/v2/eventactions')) posted++;
    });
    await parts.fill('[{"name": "file", ');
    await page.getByRole('button', { name: admin.create }).click();
    await invalid.waitFor();
    t.match(await message.textContent(), /"parts" must be valid JSON/, 'the browser names the field');
    t.equal(posted, 0, 'nothing sent');

    // JSON the API refuses (a part with both a file and a body): its message at the same field
    await parts.fill('[{"name": "file", "filepath": "{{.VirtualPath}}", "body": "x"}]');
    await page.getByRole('button', { name: admin.create }).click();
    await message.filter({ hasText: /both a filepath and a body/ }).waitFor();
    t.match(await message.textContent(), /"parts\[0\]"/, "the API's message, naming the part");
    t.equal(await invalid.count(), 1);
    t.equal(posted, 1, 'sent once');
    t.equal((await rest('GET', '/api/v2/eventactions/post-file')).status, 404, 'nothing created');

    await parts.fill('[{"name": "file", "filepath": "{{.VirtualPath}}"}]');
    await page.getByRole('button', { name: admin.create }).click();
    await page.getByRole('heading', { name: admin.editEventAction('post-file') }).waitFor();
    const saved = await rest('GET', '/api/v2/eventactions/post-file');
    t.match(saved.body, { options: { http_config: { parts: [{ name: 'file', filepath: '{{.VirtualPath}}' }] } } });
    t.match(JSON.parse(await parts.inputValue()), [{ name: 'file', filepath: '{{.VirtualPath}}' }], 'read back into the field as JSON');
    t.equal(await invalid.count(), 0, 'no longer marked invalid');
  },
);

t.test('an on-demand rule running a filesystem action: created from the forms, run from its page, its result shown and its effect on disk', async (t) => {
  const home = await h.f.addUser('eve');
  const { page } = await h.openPage(t);
  await signInAdmin(page, h.f);
  await openFromNav(page, admin.eventActions);
  await page.getByRole('button', { name: admin.addEventAction }).click();
  await page.getByLabel(admin.name, { exact: true }).fill('make-outbox');
  await page.getByLabel(admin.actionType).selectOption({ label: admin.actionTypeName(9) });
  t.equal(await opt(page, 'type').inputValue(), '3', 'a filesystem action creates directories by default');
  await opt(page, 'mkdirs').fill('/outbox/{{.Name}}');
  await page.getByTestId('ea-opt-mkdirs-preview').filter({ hasText: '/outbox/alice' }).waitFor();
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('heading', { name: admin.editEventAction('make-outbox') }).waitFor();
  t.match((await rest('GET', '/api/v2/eventactions/make-outbox')).body.options, { fs_config: { type: 3, mkdirs: ['/outbox/{{.Name}}'] } });

  await openFromNav(page, admin.eventRules);
  await page.getByText(admin.noEventRules).waitFor();
  await page.getByRole('button', { name: admin.addEventRule }).click();
  await page.getByRole('heading', { name: admin.newEventRule }).waitFor();
  await page.getByLabel(admin.name, { exact: true }).fill('nightly');
  await page.getByLabel(admin.trigger, { exact: true }).selectOption({ label: admin.triggerName(6) });
  await page.getByLabel(admin.userNames).fill('eve');
  await page.getByLabel(admin.actionToAdd).selectOption('make-outbox');
  await page.getByRole('button', { name: admin.addRuleAction }).click();
  await page.getByLabel(admin.actionToAdd).selectOption('notify');
  await page.getByRole('button', { name: admin.addRuleAction }).click();
  await page.getByRole('button', { name: admin.moveUp('notify') }).click();
  const list = page.getByTestId('rule-actions');
  t.match(await list.textContent(), /^notify.*make-outbox/, 'the actions in their new order');
  await page.getByRole('button', { name: admin.removeRuleAction('notify') }).click();
  await list
    .getByRole('listitem')
    .getByRole('checkbox', { name: admin.relationOption('stop_on_failure') })
    .check();
  await checkA11y(t, page, 'new rule form');
  await page.getByRole('button', { name: admin.create }).click();
  await page.getByRole('heading', { name: admin.editEventRule('nightly') }).waitFor();
  t.match((await rest('GET', '/api/v2/eventrules/nightly')).body, {
    trigger: 6,
    status: 1,
    conditions: { options: { names: [{ pattern: 'eve', inverse_match: false }] } },
    actions: [{ name: 'make-outbox', order: 1, relation_options: { stop_on_failure: true, execute_sync: false } }],
  });

  await page.getByRole('button', { name: admin.runRule }).click();
  const result = page.getByTestId('run-result');
  await result.waitFor();
  t.match(await result.textContent(), /^Rule nightly started/, 'the run was accepted');
  const made = path.join(home, 'outbox', 'nightly');
  // the actions run in the background: wait for their effect (an on-demand rule's .Name is the rule's)
  for (let i = 0; i < 300 && !existsSync(made); i++) await sleep(100);
  t.ok(existsSync(made), 'the rule made the directory in the matching user home');
  await checkA11y(t, page, 'rule run on demand');
  await screenshot(page, 'admin-event-rule-run');

  await openFromNav(page, admin.eventRules);
  const row = page
    .getByTestId('event-rules')
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name: 'nightly' }) });
  t.match(await row.textContent(), `nightly${admin.triggerName(6)}${admin.enabled}make-outbox`);
  await checkA11y(t, page, 'event rules list');
  await screenshot(page, 'admin-event-rules');
  await row.getByRole('button', { name: admin.runRuleLabel('nightly') }).click();
  await page
    .getByRole('status')
    .filter({ hasText: /^Rule nightly started/ })
    .waitFor();
});

t.test('at tablet width in dark mode: the action and rule forms fit, keyboard-reachable, axe-clean', async (t) => {
  const created = await rest('POST', '/api/v2/eventactions', {
    name: 'hook-ops',
    type: 1,
    options: { http_config: { endpoint: 'https://ops.example.com/', method: 'PUT', headers: [{ key: 'X-A', value: '1' }] } },
  });
  t.equal(created.status, 201, created.raw);
  const { page } = await h.openPage(t, { width: 768, height: 1024, colorScheme: 'dark' });
  await signInAdmin(page, h.f);
  await openFromNav(page, admin.eventActions);
  await page.getByTestId('event-actions').getByRole('link', { name: 'hook-ops' }).click();
  await page.getByRole('heading', { name: admin.editEventAction('hook-ops') }).waitFor();
  t.equal(await opt(page, 'headers').inputValue(), 'X-A=1', 'the stored options read into the form');
  t.equal(await opt(page, 'method').inputValue(), 'PUT');
  // the body is reached with the keyboard from the query parameters and edited: the preview follows
  await opt(page, 'query_parameters').focus();
  await page.keyboard.press('Tab');
  t.equal(await page.evaluate(() => document.activeElement?.id), 'ea-opt-body', 'Tab goes to the next option');
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type('{{.Name}} sent {{.ObjectName}} ({{humanizeBytes .FileSize}})');
  await page.getByTestId('ea-opt-body-preview').filter({ hasText: 'alice sent report.csv' }).waitFor();
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scrolling at tablet width');
  await checkA11y(t, page, 'HTTP action, tablet width, dark mode');
  await screenshot(page, 'admin-event-action-tablet-dark');

  await openFromNav(page, admin.eventRules);
  await page.getByRole('button', { name: admin.addEventRule }).click();
  await page.getByRole('heading', { name: admin.newEventRule }).waitFor();
  await page.getByLabel(admin.trigger, { exact: true }).selectOption({ label: admin.triggerName(3) });
  await page.getByRole('button', { name: admin.addSchedule }).click();
  await page.getByRole('group', { name: admin.scheduleN(1) }).waitFor();
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the rule form fits too');
  await checkA11y(t, page, 'schedule rule form, tablet width, dark mode');
});
