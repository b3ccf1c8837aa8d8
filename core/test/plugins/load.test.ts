import t, { type Test } from 'tap';
import { createTestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import type { PluginRegistry } from '../../src/plugins/registry.js';

const fx = (name: string) => ({ name: `fixture-${name}`, path: `core/test/fixtures/plugins/${name}` });

async function startFails(t: Test, plugins: { name: string; path?: string; config?: Record<string, unknown> }[], pattern: RegExp) {
  await t.rejects(createTestApp({ plugins }), pattern);
}

t.test('a valid plugin from a path registers its action type and appears in /version', async (t) => {
  const ta = await createTestApp({ plugins: [{ ...fx('good-action'), config: { greeting: 'hello' } }] });
  t.teardown(() => ta.close());
  const registry = ta.app.container.resolve<PluginRegistry>(TOKENS.Plugins);
  const def = registry.actionType(1001);
  t.ok(def, 'action type 1001 registered');
  const runner = await def!.create({ target: 'x' });
  const out = await runner.execute({} as never);
  t.same(out, { outputs: { greeting: 'hello' } }, 'plugin got its validated config');
  const token = await ta.adminToken();
  const v = await ta.inject('GET', '/api/v2/version', { token });
  t.match((v.result as { features: string[] }).features, ['fixture-good-action@1.0.0']);
});

t.test('dependsOn orders plugins and a missing dependency stops the start', async (t) => {
  const ta = await createTestApp({ plugins: [fx('needs-other'), fx('good-action')] });
  t.teardown(() => ta.close());
  t.same(
    ta.app.plugins.map((p) => p.name),
    ['fixture-good-action', 'fixture-needs-other'],
  );
  await startFails(t, [fx('needs-other')], /plugin fixture-needs-other: depends on plugin fixture-good-action, which is not enabled/);
});

t.test('every loading failure stops the start with a message naming the plugin', async (t) => {
  await startFails(t, [{ name: 'ferry-plugin-not-installed-anywhere' }], /plugin ferry-plugin-not-installed-anywhere: package is not installed/);
  await startFails(t, [fx('missing-dependency')], /plugin fixture-missing-dependency: failed to load: .*ferry-package-that-does-not-exist/);
  await startFails(t, [fx('broken')], /plugin fixture-broken: failed to load: boom at import time/);
  await startFails(t, [fx('wrong-api')], /plugin fixture-wrong-api: targets plugin API version 99, this core supports 1/);
  await startFails(t, [fx('dup-a'), fx('dup-b')], /plugin fixture-dup-b: filesystem provider 100 is already registered by plugin fixture-dup-a/);
  await startFails(
    t,
    [fx('good-action'), fx('dup-action')],
    /plugin fixture-dup-action: event action type 1001 is already registered by plugin fixture-good-action/,
  );
  await startFails(
    t,
    [fx('bad-options-schema')],
    /plugin fixture-bad-options-schema: invalid filesystem provider definition: "optionsSchema" must be a joi schema/,
  );
  await startFails(t, [fx('no-marker')], /plugin fixture-no-marker: package.json has no "ferry" marker/);
  await startFails(t, [fx('reserved-action')], /plugin fixture-reserved-action: event action type 10 is reserved/);
  await startFails(t, [{ ...fx('good-action'), config: { greeting: 42 } }], /plugin fixture-good-action: invalid config: "greeting" must be a string/);
  await startFails(
    t,
    [{ name: 'fixture-other-name', path: 'core/test/fixtures/plugins/good-action' }],
    /plugin fixture-other-name: manifest name "fixture-good-action" does not match/,
  );
  await startFails(t, [fx('good-action'), fx('good-action')], /plugin fixture-good-action: listed twice/);
  // plugins are imported together: of several failing ones, the first of the list is named
  await startFails(t, [fx('good-action'), fx('broken'), fx('wrong-api')], /plugin fixture-broken: failed to load: boom at import time/);
  await startFails(t, [fx('wrong-api'), fx('broken')], /plugin fixture-wrong-api: targets plugin API version 99/);
  await startFails(t, [{ name: 'fixture-nowhere', path: 'core/test/fixtures/plugins/does-not-exist' }], /plugin fixture-nowhere: no package found/);
});
