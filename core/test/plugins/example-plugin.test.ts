import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createTestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import type { PluginRegistry } from '../../src/plugins/registry.js';
import { silentLogger } from '../../src/logger.js';

t.test('the third-party example plugin in examples/ loads from config and its action works', async (t) => {
  const dir = t.testdir({});
  const ta = await createTestApp({
    plugins: [{ name: 'ferry-plugin-action-audit-log', path: 'examples/action-audit-log', config: { directory: dir } }],
  });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  const v = await ta.inject('GET', '/api/v2/version', { token });
  t.same((v.result as { features: string[] }).features, ['ferry-plugin-action-audit-log@1.0.0']);
  const def = ta.app.container.resolve<PluginRegistry>(TOKENS.Plugins).actionType(5000)!;
  t.ok(def);
  t.match(def.optionsSchema!.validate({ file: '../x', line: 'a' }).error?.message, /"file"/);
  const runner = await def.create({ file: 'audit.log', line: 'l' });
  await runner.execute({
    trigger: 1,
    ruleName: 'r',
    actionName: 'a',
    params: {},
    render: (s: string) => `rendered:${s}`,
    signal: new AbortController().signal,
    logger: silentLogger(),
  });
  t.equal(readFileSync(path.join(dir, 'audit.log'), 'utf8'), 'rendered:l\n');
  await t.rejects(createTestApp({ plugins: [{ name: 'ferry-plugin-action-audit-log', path: 'examples/action-audit-log' }] }), /invalid config: "directory" is required/);
});
