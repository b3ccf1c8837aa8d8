import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { applyEnv, loadConfig, ConfigError } from '../../src/config/load.js';

t.test('defaults come from config/default.yaml', async (t) => {
  const { config } = loadConfig({ env: {} });
  t.equal(config.httpd.bindings[0]!.port, 8080);
  t.equal(config.httpd.bindings[0]!.address, '127.0.0.1');
  t.equal(config.data_provider.driver, 'sqlite');
  t.equal(config.httpd.token_lifetime, 20);
  t.equal(config.common.max_per_host_transfers, 20);
  t.ok(path.isAbsolute(config.common.data_dir));
  t.same(config.plugins.map((p) => p.name).includes('@ferry/fs-local'), true);
});

t.test('a --config file is merged over the defaults, then environment overrides', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'ferry.yaml');
  writeFileSync(file, 'log:\n  level: debug\nhttpd:\n  bindings:\n    - port: 9000\n');
  const { config, baseDir } = loadConfig({
    file,
    env: {
      SERVICE_HTTPD__BINDINGS__0__PORT: '9091',
      SERVICE_HOOK__ENABLED_ACTION_COMMANDS: '/usr/bin/true,/bin/echo',
      SERVICE_COMMON__DATA_DIR: 'mydata',
      SERVICE_DEFAULT_ADMIN_USERNAME: 'root-admin',
      SERVICE_UNRELATED: 'x',
    },
  });
  t.equal(config.log.level, 'debug');
  t.equal(config.httpd.bindings[0]!.port, 9091, 'env wins over the file');
  t.equal(config.httpd.bindings[0]!.address, '127.0.0.1', 'binding defaults kept');
  t.same(config.hook.enabled_action_commands, ['/usr/bin/true', '/bin/echo'], 'comma-separated list');
  t.equal(config.common.data_dir, path.join(dir, 'mydata'), 'relative to the config file');
  t.equal(baseDir, dir);
  t.equal(config.defaults.admin_username, 'root-admin');
});

t.test('JSON config files and JSON env values', async (t) => {
  const dir = t.testdir({ 'c.json': JSON.stringify({ plugins: [{ name: 'a' }] }) });
  const { config } = loadConfig({ file: path.join(dir, 'c.json'), env: { SERVICE_HTTPD__BINDINGS: '[{"port": 1234}, {"port": 1235}]' } });
  t.same(
    config.plugins.map((p) => p.name),
    ['a'],
  );
  t.same(
    config.httpd.bindings.map((b) => b.port),
    [1234, 1235],
  );
});

t.test('bad values are refused naming the key', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ SERVICE_HTTPD__BINDINGS__0__PORT: 'eighty' }, /"httpd.bindings\[0\].port" must be a number|at "httpd.bindings.0.port"/],
    [{ SERVICE_HTTPD__BINDINGS__0__PORT: '70000' }, /httpd.bindings.0.port/],
    [{ SERVICE_LOG__LEVEL: 'loud' }, /at "log.level"/],
    [{ SERVICE_DATA_PROVIDER__DRIVER: 'oracle' }, /at "data_provider.driver"/],
    [{ SERVICE_DATA_PROVIDER__DRIVER: 'postgresql' }, /data_provider.url" must be a postgresql:\/\/ URL/],
    [
      { SERVICE_DATA_PROVIDER__DRIVER: 'postgresql', SERVICE_DATA_PROVIDER__URL: 'postgresql://ferry:s3cret@/ferry?host=/var/run/postgresql' },
      /^(?!.*s3cret).*"data_provider.url" is not a valid URL \(a Unix socket is written postgresql:\/\/user@localhost\/dbname\?host=/,
    ],
    [{ SERVICE_DATA_PROVIDER__DRIVER: 'postgresql', SERVICE_DATA_PROVIDER__URL: 'postgresql://ferry:s3cret@db:99999/ferry' }, /^(?!.*s3cret).*not a valid URL/],
    [{ SERVICE_HTTPD__TOKEN_LIFETIME: '0' }, /at "httpd.token_lifetime"/],
    [{ SERVICE_COMMON__NO_SUCH_KEY: '1' }, /at "common.no_such_key".*not allowed/],
    [{ SERVICE_HTTPD____PORT: '1' }, /malformed environment variable/],
  ];
  for (const [env, re] of cases) {
    t.throws(() => loadConfig({ env }), re, JSON.stringify(env));
  }
  const dir = t.testdir({ 'bad.yaml': 'log: [unclosed', 'list.yaml': '- a\n- b\n' });
  t.throws(() => loadConfig({ env: {}, file: path.join(dir, 'bad.yaml') }), ConfigError);
  t.throws(() => loadConfig({ env: {}, file: path.join(dir, 'list.yaml') }), /top level must be a mapping/);
  t.throws(() => loadConfig({ env: {}, file: path.join(dir, 'missing.yaml') }), /cannot read config file/);
});

t.test('applyEnv builds nested objects and array entries', async (t) => {
  const out = applyEnv({}, { SERVICE_A__B__0__C: 'x', SERVICE_A__LIST: 'p,q' });
  t.same(out, { a: { b: [{ c: 'x' }], list: 'p,q' } });
});
