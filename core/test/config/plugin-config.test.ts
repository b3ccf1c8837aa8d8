import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { applyEnv, ConfigError, foldPluginConfig, loadConfig, pluginEnvKey } from '../../src/config/load.js';

const configOf = (config: { plugins: { name: string; config: Record<string, unknown> }[] }, name: string) =>
  config.plugins.find((p) => p.name === name)?.config;

t.test('the key of a plugin in environment variables', async (t) => {
  t.equal(pluginEnvKey('@ferry/fs-s3'), 'fs_s3', 'scope dropped, - as _');
  t.equal(pluginEnvKey('@ferry/action-email'), 'action_email');
  t.equal(pluginEnvKey('ferry-plugin-service-line'), 'ferry_plugin_service_line', 'unscoped');
  t.equal(pluginEnvKey('My.Plugin'), 'my_plugin');
});

t.test('SERVICE_PLUGINS__<NAME>__...: a plugin named by its name, whatever its place in the list', async (t) => {
  const env = { SERVICE_PLUGINS__ACTION_EMAIL__CONFIG__TIMEOUT: '30', SERVICE_PLUGINS__FS_GCS__ENABLED: 'false' };
  const { config } = loadConfig({ env });
  t.equal(configOf(config, '@ferry/action-email')!.timeout, '30', 'set (converted by the plugin config schema at load)');
  t.equal(configOf(config, '@ferry/action-email')!.max_attachments_size, 10485760, 'the rest of its config kept');
  t.equal(config.plugins.find((p) => p.name === '@ferry/fs-gcs')!.enabled, false);
  // enabling another plugin ahead of it does not move the override
  const dir = t.testdir({});
  const file = path.join(dir, 'ferry.yaml');
  writeFileSync(file, 'plugins:\n  - name: "extra-plugin"\n  - name: "@ferry/action-email"\n    config: { timeout: 10 }\n');
  const moved = loadConfig({ file, env: { SERVICE_PLUGINS__ACTION_EMAIL__CONFIG__TIMEOUT: '30' }, skipDefaultFile: true }).config;
  t.same(configOf(moved, '@ferry/action-email'), { timeout: '30' }, 'env wins over the file, at its new index');
  t.same(configOf(moved, 'extra-plugin'), {}, 'the plugin ahead of it untouched');
});

t.test('the index form stays an alias', async (t) => {
  const out = applyEnv(
    { plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-s3', config: {} }] },
    { SERVICE_PLUGINS__1__CONFIG__PART_SIZE: '8', SERVICE_PLUGINS__FS_S3__CONFIG__REGION: 'eu' },
  );
  t.same(out.plugins, [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-s3', config: { part_size: '8', region: 'eu' } }]);
});

t.test('a name the list does not hold, or holds twice, is refused naming the variable', async (t) => {
  t.throws(
    () => applyEnv({ plugins: [{ name: '@ferry/fs-local' }] }, { SERVICE_PLUGINS__FS_S4__CONFIG__X: '1' }),
    new ConfigError('SERVICE_PLUGINS__FS_S4__CONFIG__X: no plugin of the "plugins" list is named "fs_s4" (its name without the scope, \'-\' as \'_\')'),
  );
  t.throws(
    () => applyEnv({}, { SERVICE_PLUGINS__FS_S3__CONFIG__X: '1' }),
    /SERVICE_PLUGINS__FS_S3__CONFIG__X: no plugin of the "plugins" list is named "fs_s3"/,
  );
  t.throws(
    () => applyEnv({ plugins: [{ name: '@a/fs-s3' }, { name: '@b/fs-s3' }] }, { SERVICE_PLUGINS__FS_S3__CONFIG__X: '1' }),
    /SERVICE_PLUGINS__FS_S3__CONFIG__X: "fs_s3" names several plugins of the "plugins" list: give its index instead/,
  );
});

t.test('plugin_config: a plugin config given by name in a file, merged into the default list', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'ferry.yaml');
  writeFileSync(file, 'plugin_config:\n  "@ferry/action-email":\n    timeout: 12\n  "@ferry/events-search":\n    retention_days: 7\n');
  const { config } = loadConfig({ file, env: { SERVICE_PLUGINS__EVENTS_SEARCH__CONFIG__RETENTION_DAYS: '9' } });
  t.equal(configOf(config, '@ferry/action-email')!.timeout, 12, 'merged into the listed entry');
  t.equal(configOf(config, '@ferry/action-email')!.max_attachments_size, 10485760, 'its other keys kept');
  t.equal(configOf(config, '@ferry/events-search')!.retention_days, '9', 'the environment still wins');
  t.ok(config.plugins.length > 5, 'the default list is kept whole');
  t.notOk('plugin_config' in config, 'folded away');
});

t.test('plugin_config errors name the key', async (t) => {
  t.throws(
    () => foldPluginConfig({ plugins: [{ name: 'a' }], plugin_config: { b: {} } }),
    /invalid configuration at "plugin_config.b": no plugin of the "plugins" list has that name/,
  );
  t.throws(() => foldPluginConfig({ plugins: [{ name: 'a' }], plugin_config: { a: 3 } }), /invalid configuration at "plugin_config.a": it must be a mapping/);
  t.throws(() => foldPluginConfig({ plugin_config: [] }), /invalid configuration at "plugin_config": it must map plugin names to their config/);
  t.same(foldPluginConfig({ plugins: [{ name: 'a', config: { x: { y: 1, z: 2 } } }], plugin_config: { a: { x: { y: 3 } } } }), {
    plugins: [{ name: 'a', config: { x: { y: 3, z: 2 } } }],
  });
});
