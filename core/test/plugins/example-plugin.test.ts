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
  // with_account reads the user through the typed plugin host (ctx.host.accounts)
  const created = await ta.inject('POST', '/api/v2/groups', { token, payload: { name: 'auditors', description: '' } });
  t.equal(created.statusCode, 201);
  const user = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: {
      username: 'audited',
      password: 'audited-password-1',
      status: 1,
      permissions: { '/': ['*'] },
      home_dir: path.join(dir, 'home'),
      groups: [{ name: 'auditors', type: 2 }],
    },
  });
  t.equal(user.statusCode, 201, JSON.stringify(user.result));
  const withAccount = await def.create({ file: 'audit2.log', line: 'l', with_account: true });
  const run = (username: string) =>
    withAccount.execute({
      trigger: 1,
      ruleName: 'r',
      actionName: 'a',
      params: {},
      username,
      render: (s: string) => s,
      signal: new AbortController().signal,
      logger: silentLogger(),
    });
  await run('audited');
  await run('nobody');
  t.equal(readFileSync(path.join(dir, 'audit2.log'), 'utf8'), 'l role=- groups=auditors\nl account=unknown\n');
  await t.rejects(
    createTestApp({ plugins: [{ name: 'ferry-plugin-action-audit-log', path: 'examples/action-audit-log' }] }),
    /invalid config: "directory" is required/,
  );
});
