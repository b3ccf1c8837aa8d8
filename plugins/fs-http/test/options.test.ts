import { readFileSync } from 'node:fs';
import t from 'tap';
import { silentLogger, type FsProviderDef, type PluginContext } from '@ferry/core';
import plugin, {
  HTTP_CAPABILITIES,
  HTTP_PROVIDER,
  httpFsOptionsSchema,
  httpFsPluginConfigSchema,
  isSameResource,
  resolveSettings,
  createHttpProvider,
  AgentPool,
} from '../src/index.js';

const plain = (payload: string) => ({ status: 'Plain' as const, payload });
const refusal = (opts: unknown) => httpFsOptionsSchema.validate(opts).error?.message ?? '';
const endpoint = 'https://files.example.com/api/v1';

t.test('optionsSchema', async (t) => {
  await t.test('accepts complete configurations', async (t) => {
    t.error(
      httpFsOptionsSchema.validate({
        endpoint,
        username: 'ferry',
        password: plain('p'),
        api_key: plain('k'),
        skip_tls_verify: true,
        equality_check_mode: 1,
      }).error,
    );
    t.error(httpFsOptionsSchema.validate({ endpoint: 'http://127.0.0.1:9999/api/v1' }).error, 'no credentials (open server)');
    t.error(httpFsOptionsSchema.validate({ endpoint, api_key: plain('k') }).error, 'API key only');
    t.error(httpFsOptionsSchema.validate({ endpoint, username: 'u', password: { status: 'Redacted' } }).error, 'redacted secret kept');
    t.error(httpFsOptionsSchema.validate({ endpoint: 'http://[::1]:8080' }).error, 'IPv6 host, no path');
    t.error(
      httpFsOptionsSchema.validate({ endpoint: 'https://h/users/%username%', username: '%username%', password: plain('p') }).error,
      'placeholders in endpoint and username',
    );
  });
  await t.test('refuses a missing or malformed endpoint', async (t) => {
    t.match(refusal({}), /httpconfig.endpoint is required/);
    t.match(refusal({ endpoint: '' }), /endpoint must not be empty/);
    t.match(refusal({ endpoint: 42 }), /endpoint must be a string/);
    for (const bad of ['127.0.0.1:9999/api/v1', 'ftp://host/api', 'files.example.com', 'http://', 'https:///api', '/api/v1']) {
      t.match(refusal({ endpoint: bad }), /endpoint must be an http:\/\/ or https:\/\/ URL with a host/, `${bad} refused`);
    }
    t.match(refusal({ endpoint: 'https://u:p@files.example.com/api' }), /must not embed credentials/);
    t.match(refusal({ endpoint: 'https://files.example.com/api?x=1' }), /query string or fragment/);
    t.match(
      refusal({ endpoint: 'https://files.example.com/api?x=1' }),
      'the client appends /{operation}/{name}',
      'the braces are shown, not rendered as joi templates',
    );
    t.match(refusal({ endpoint: 'https://files.example.com/api#frag' }), /query string or fragment/);
  });
  await t.test('refuses incomplete Basic credentials', async (t) => {
    t.match(refusal({ endpoint, username: 'ferry' }), /password is required with username/);
    t.match(refusal({ endpoint, username: 'ferry', password: plain('') }), /password is required with username/);
    t.match(refusal({ endpoint, password: plain('p') }), /username is required with password/);
    t.match(refusal({ endpoint, username: 'a:b', password: plain('p') }), /username must not contain a colon/);
  });
  await t.test('refuses bad flags', async (t) => {
    t.match(refusal({ endpoint: 'http://h/api', skip_tls_verify: true }), /skip_tls_verify only applies to https/);
    t.match(refusal({ endpoint, skip_tls_verify: 'yes please' }), /skip_tls_verify must be true or false/);
    t.match(refusal({ endpoint, equality_check_mode: 2 }), /equality_check_mode must be 0/);
    t.match(refusal({ endpoint, password: 'plain string' }), /password/);
    t.match(refusal({ endpoint, api_key: { status: 'Bogus' } }), /api_key/);
    t.match(refusal({ endpoint, bucket: 'x' }), /"bucket" is not allowed/);
  });
});

t.test('plugin configSchema', async (t) => {
  t.error(httpFsPluginConfigSchema.validate({ request_timeout_ms: 5000, transfer_idle_timeout_ms: 60000 }).error);
  t.match(httpFsPluginConfigSchema.validate({ request_timeout_ms: 5 }).error?.message, /at least 100 ms/);
  t.match(httpFsPluginConfigSchema.validate({ connections_per_endpoint: 0 }).error?.message, /at least 1/);
});

t.test('resolveSettings()', async (t) => {
  const s = resolveSettings({ endpoint: ' https://h/api/v1// ', username: 'u', password: 'decrypted', api_key: plain('k') });
  t.equal(s.endpoint, 'https://h/api/v1', 'trimmed, no trailing slash');
  t.equal(s.password, 'decrypted', 'create() receives decrypted strings');
  t.equal(s.apiKey, 'k');
  t.equal(s.skipTlsVerify, false);
  t.equal(s.requestTimeoutMs, 30_000);
  t.equal(s.transferIdleTimeoutMs, 300_000);
  t.equal(resolveSettings({ endpoint }, { request_timeout_ms: 1234 }).requestTimeoutMs, 1234);
  t.throws(() => resolveSettings({ endpoint, username: 'u', password: { status: 'AES-256-GCM', payload: 'x' } }), /still encrypted/);
});

t.test('isSameResource() (equality_check_mode)', async (t) => {
  t.ok(isSameResource({ endpoint: 'https://h/api/' }, { endpoint: 'https://h/api' }), 'mode 0: same endpoint, same (empty) username');
  t.notOk(isSameResource({ endpoint, username: 'a' }, { endpoint, username: 'b' }), 'mode 0: usernames differ');
  t.ok(isSameResource({ endpoint, username: 'a' }, { endpoint, username: 'a' }), 'mode 0: endpoint and username match');
  t.notOk(isSameResource({ endpoint: 'https://h/a' }, { endpoint: 'https://h/b' }), 'different endpoints never match');
  t.ok(
    isSameResource({ endpoint, username: 'a', equality_check_mode: 1 }, { endpoint, username: 'b', equality_check_mode: 1 }),
    'mode 1 on both: endpoint only',
  );
  t.notOk(isSameResource({ endpoint, username: 'a', equality_check_mode: 1 }, { endpoint, username: 'b' }), 'a mode 0 side keeps its username check');
  t.notOk(isSameResource({ endpoint: 'https://h/a', equality_check_mode: 1 }, { endpoint: 'https://h/b', equality_check_mode: 1 }));
});

t.test('manifest', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
  t.equal(plugin.name, '@ferry/fs-http');
  t.equal(plugin.name, pkg.name);
  t.equal(plugin.version, pkg.version);
  t.equal(plugin.apiVersion, 1);
  const registered: FsProviderDef[] = [];
  const ctx = {
    name: plugin.name,
    logger: silentLogger,
    config: {},
    dataDir: '.',
    registerFsProvider: (d: FsProviderDef) => registered.push(d),
    registerActionType: () => undefined,
  } as unknown as PluginContext;
  await plugin.register(ctx, {});
  t.equal(registered.length, 1);
  const def = registered[0]!;
  t.equal(def.provider, HTTP_PROVIDER);
  t.equal(def.provider, 6);
  t.equal(def.key, 'http');
  t.equal(def.configKey, 'httpconfig');
  t.same(def.secretFields, ['password', 'api_key']);
  t.same(def.capabilities, HTTP_CAPABILITIES);
  t.same(def.describe?.({ endpoint: `${endpoint}/`, username: 'u', password: 'secret' }), { endpoint }, 'no secrets in describe()');
  await plugin.teardown?.();
});

t.test('provider', async (t) => {
  const provider = createHttpProvider({}, new AgentPool(2));
  t.teardown(() => provider.agents.destroy());
  const scope = { username: 'u', dataDir: '.' };
  const a = await provider.create({ endpoint: 'https://h:8443/api/v1' }, scope);
  const b = await provider.create({ endpoint: 'https://h:8443/other', api_key: 'k' }, scope);
  t.equal(provider.agents.size, 1, 'one pool per origin, shared by Fs instances');
  const c = await provider.create({ endpoint: 'https://h:8443/api/v1', skip_tls_verify: true }, scope);
  t.equal(provider.agents.size, 2, 'skip_tls_verify gets its own pool');
  t.same(a.capabilities, HTTP_CAPABILITIES);
  for (const fs of [a, b, c]) await fs.close();
  await t.rejects(a.stat('/'), { code: 'UNAVAILABLE' }, 'a closed Fs refuses calls');
});
