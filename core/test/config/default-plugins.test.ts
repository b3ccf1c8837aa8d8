import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import type { PluginRegistry } from '../../src/plugins/registry.js';
import { TOKENS } from '../../src/tokens.js';
import { createTestApp } from '../../src/testing.js';
import { filesystemOfEachProvider, remoteProviderOptions, userOn } from '../helpers/provider-options.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

// The shipped configuration (config/default.yaml, read by the real config
// loader) turns on every bundled plugin, and the remote storage plugins among
// them do not load their SDK until their provider is used.

const BUNDLED = [
  '@ferry/fs-local',
  '@ferry/fs-crypt',
  '@ferry/fs-s3',
  '@ferry/fs-gcs',
  '@ferry/fs-azblob',
  '@ferry/fs-sftp',
  '@ferry/fs-http',
  '@ferry/actions-builtin',
  '@ferry/events-search',
  '@ferry/action-email',
  '@ferry/action-imap',
  '@ferry/action-http',
  '@ferry/action-command',
  '@ferry/action-fs',
  '@ferry/action-icap',
  '@ferry/service-sftp',
  '@ferry/service-webdav',
  '@ferry/web-client',
  '@ferry/service-ftp',
];

const plain = (payload: string) => ({ status: 'Plain', payload });
const REMOTE = remoteProviderOptions();

t.test('the shipped configuration loads every bundled plugin', async (t) => {
  const { config } = loadConfig({ env: {} });
  t.same(
    config.plugins.map((p) => p.name),
    BUNDLED,
    'config/default.yaml lists every bundled filesystem and action plugin',
  );
  t.ok(
    config.plugins.every((p) => p.enabled),
    'none is disabled',
  );

  const ta = await createTestApp({ plugins: config.plugins });
  t.teardown(() => ta.close());
  const registry = ta.app.container.resolve<PluginRegistry>(TOKENS.Plugins);
  t.same(
    registry.fsProviders().map((d) => d.provider),
    [0, 1, 2, 3, 4, 5, 6],
    'filesystem providers 0-6 are registered',
  );
  const owner = Object.fromEntries(registry.plugins.flatMap((p) => p.fsProviders.map((n) => [n, p.name])));
  t.same(owner, {
    0: '@ferry/fs-local',
    1: '@ferry/fs-s3',
    2: '@ferry/fs-gcs',
    3: '@ferry/fs-azblob',
    4: '@ferry/fs-crypt',
    5: '@ferry/fs-sftp',
    6: '@ferry/fs-http',
  });
  t.same(
    registry.plugins.find((p) => p.name === '@ferry/actions-builtin')?.actionTypes.sort((a, b) => a - b),
    [4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 18, 19],
    'the built-in event actions are registered',
  );
  t.same(
    registry.plugins.map((p) => p.name),
    BUNDLED,
  );

  const token = await ta.adminToken();
  for (const [kind, filesystem] of filesystemOfEachProvider(REMOTE)) {
    const payload = userOn(kind, filesystem, path.join(ta.dataDir, 'homes'));
    const username = payload.username as string;
    const r = await ta.inject('POST', '/api/v2/users', { token, payload });
    t.equal(r.statusCode, 201, `a user on provider ${String(filesystem.provider)} (${kind}) is created${r.statusCode === 201 ? '' : `: ${r.payload}`}`);
    const back = await ta.inject('GET', `/api/v2/users/${username}`, { token });
    t.match(JSON.parse(back.payload), { filesystem: { provider: filesystem.provider } }, `${username} is stored on provider ${String(filesystem.provider)}`);
  }
});

t.test('every package under plugins/ is in the shipped plugin list (a new plugin is on by default)', async (t) => {
  const packages = readdirSync(path.join(ROOT, 'plugins'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => {
      try {
        return [(JSON.parse(readFileSync(path.join(ROOT, 'plugins', d.name, 'package.json'), 'utf8')) as { name: string }).name];
      } catch {
        return [];
      }
    })
    .sort();
  t.ok(packages.length >= BUNDLED.length, `${packages.length} bundled plugin packages`);
  const { config } = loadConfig({ env: {} });
  t.same(config.plugins.map((p) => p.name).sort(), packages, 'config/default.yaml loads every package of plugins/, and nothing else');
  t.same([...BUNDLED].sort(), packages, 'and this test knows each of them');
});

/** Resolved modules of these packages are the SDKs (and their own dependencies). */
const SDK = String.raw`/node_modules/(@aws-sdk|@smithy|@google-cloud|google-auth-library|gaxios|gcp-metadata|@azure|ssh2|ssh2-sftp-client|undici)/`;

/** Module hooks: any import that resolves into an SDK throws, naming it. */
const BLOCK_SDK_HOOKS = `
const sdk = new RegExp(${JSON.stringify(SDK)});
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (sdk.test(r.url)) throw new Error('SDK module imported: ' + specifier + ' (' + r.url + ')');
  return r;
}`;

/**
 * Runs in a fresh node (the sources through tap's TypeScript loader, or the
 * build with FERRY_TEST_USE_DIST=1) with
 * BLOCK_SDK_HOOKS registered: imports each remote plugin's entry, registers
 * it, uses what must stay SDK-free (schema, sameResource, describe,
 * teardown), then calls create(), which must try to import the SDK half;
 * last, imports each '/lib' subpath, which must load its SDK (this shows the
 * hooks do catch that plugin's SDK). Prints one JSON line.
 */
const PROBE = `
import { register, createRequire } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(BLOCK_SDK_HOOKS)}));
const sdk = new RegExp(${JSON.stringify(SDK)});
const plugins = JSON.parse(process.env.PROBE_PLUGINS);
const { silentLogger } = await import('@ferry/core');
const out = {};
const message = (e) => (e instanceof Error ? e.message : String(e));
for (const [name, { options }] of Object.entries(plugins)) {
  const r = (out[name] = {});
  try {
    const m = await import(name);
    const defs = [];
    await m.default.register({ name, logger: silentLogger(), config: {}, registerFsProvider: (d) => defs.push(d), registerActionType: () => {} }, {});
    const def = defs[0];
    r.provider = def.provider;
    r.schemaError = def.optionsSchema.validate(options).error?.message ?? null;
    r.sameResource = def.sameResource ? def.sameResource(options, options) : null;
    r.describe = def.describe ? def.describe(options) : null;
    r.capabilities = typeof def.capabilities?.rangeRead === 'boolean';
    await m.default.teardown?.();
    r.entry = 'ok';
    r.create = await Promise.resolve()
      .then(() => def.create(options, { username: 'u', dataDir: '.' }))
      .then(() => 'created', message);
  } catch (e) {
    r.entry = message(e);
  }
}
for (const name of Object.keys(plugins)) {
  out[name].lib = await import(name + '/lib').then(() => 'loaded', message);
}
const cjs = Object.keys(createRequire(process.cwd() + '/').cache).filter((k) => sdk.test(k));
console.log(JSON.stringify({ out, cjs }));
`;

t.test('a remote plugin entry does not load its SDK; create() is what imports it', async (t) => {
  // the compiled packages when the suite runs on the build (CI), else the sources
  const loader = process.env.FERRY_TEST_USE_DIST === '1' ? [] : ['--conditions=ferry-src', '--import=@tapjs/typescript/import'];
  const r = spawnSync(process.execPath, [...loader, '--no-warnings', '--input-type=module', '-e', PROBE], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1', PROBE_PLUGINS: JSON.stringify(REMOTE) },
    timeout: 240_000,
  });
  t.equal(r.status, 0, `the probe ran: ${r.stderr}`);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  const { out, cjs } = JSON.parse(line) as { out: Record<string, Record<string, unknown>>; cjs: string[] };
  for (const [name, { provider }] of Object.entries(REMOTE)) {
    const p = out[name]!;
    t.equal(p.entry, 'ok', `${name}: importing, registering, checking options and tearing down load no SDK module`);
    t.equal(p.provider, provider, `${name}: provider ${provider} registered`);
    t.equal(p.schemaError, null, `${name}: the options schema works without the SDK`);
    t.equal(p.sameResource, true, `${name}: sameResource works without the SDK`);
    t.type(p.describe, 'object', `${name}: describe works without the SDK`);
    t.equal(p.capabilities, true, `${name}: capabilities without the SDK`);
    t.match(p.create, /^SDK module imported: /, `${name}: create() imports the SDK half`);
    t.match(p.lib, /^SDK module imported: /, `${name}/lib loads the SDK (the check sees it)`);
  }
  t.same(cjs, [], 'no SDK module in the CommonJS cache');
});

t.test('SERVICE_HOOK__ENABLED_ACTION_COMMANDS is the allow list of command actions (type 2)', async (t) => {
  const { config } = loadConfig({ env: { SERVICE_HOOK__ENABLED_ACTION_COMMANDS: '/bin/true,/usr/bin/env' } });
  t.same(config.hook.enabled_action_commands, ['/bin/true', '/usr/bin/env'], 'a comma-separated list');
  const ta = await createTestApp({ plugins: config.plugins, config: { hook: config.hook } });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  const save = (name: string, cmd: string) =>
    ta.inject('POST', '/api/v2/eventactions', { token, payload: { name, type: 2, options: { cmd_config: { cmd } } } });
  t.equal((await save('listed', '/usr/bin/env')).statusCode, 201, 'a listed command is saved');
  const refused = await save('unlisted', '/bin/false');
  t.equal(refused.statusCode, 400);
  t.match(
    JSON.parse(refused.payload).message,
    /"cmd" "\/bin\/false" is not allowed: add it to hook\.enabled_action_commands \(SERVICE_HOOK__ENABLED_ACTION_COMMANDS\)/,
  );
});

t.test('email (3) and IMAP (16) actions on the shipped configuration: saved once a server is set, refused with a clear message before', async (t) => {
  const email = { email_config: { recipients: ['ops@example.com'], subject: 'Upload {{.Name}}', body: '{{.VirtualPath}}', attachments: ['{{.VirtualPath}}'] } };
  const imap = (o: Record<string, unknown> = {}) => ({
    imap_config: { subject: 'Upload {{.Name}}', body: '{{.VirtualPath}}', target_folder: 'Ferry/{{.Name}}', ...o },
  });
  const bare = loadConfig({ env: {} }).config;
  const ta = await createTestApp({ plugins: bare.plugins });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  const save = (app: typeof ta, tok: string, name: string, type: number, options: unknown) =>
    app.inject('POST', '/api/v2/eventactions', { token: tok, payload: { name, type, options } });
  const noMail = await save(ta, token, 'mail', 3, email);
  t.equal(noMail.statusCode, 400, 'no smtp.host: an email action is refused');
  t.match(JSON.parse(noMail.payload).message, /event action type 3 \(email\) cannot be used: no mail server is configured: set smtp\.host/);
  const noImap = await save(ta, token, 'imap', 16, imap());
  t.equal(noImap.statusCode, 400, 'no IMAP server in the action nor in the plugin config');
  t.match(JSON.parse(noImap.payload).message, /options\.imap_config: "host" is required: no IMAP server is set in the action nor in the plugin config/);
  const own = await save(ta, token, 'imap', 16, imap({ host: 'imap.example.com', username: 'u@example.com', password: plain('p') }));
  t.equal(own.statusCode, 201, `an IMAP action naming its server is saved: ${own.payload}`);

  const { config } = loadConfig({ env: { SERVICE_SMTP__HOST: '127.0.0.1', SERVICE_SMTP__PORT: '2525' } });
  const withMail = await createTestApp({ plugins: config.plugins, config: { smtp: config.smtp } });
  t.teardown(() => withMail.close());
  const ok = await save(withMail, await withMail.adminToken(), 'mail', 3, email);
  t.equal(ok.statusCode, 201, `with smtp.host set an email action is saved: ${ok.payload}`);
});

t.test('an ICAP action (type 17) is accepted on the shipped configuration; a bad endpoint is a 400', async (t) => {
  const { config } = loadConfig({ env: {} });
  const ta = await createTestApp({ plugins: config.plugins });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  const save = (name: string, endpoint: string) =>
    ta.inject('POST', '/api/v2/eventactions', {
      token,
      payload: { name, type: 17, options: { icap_config: { endpoint, paths: ['{{.VirtualPath}}'], block_action: 3 } } },
    });
  t.equal((await save('av', 'icap://127.0.0.1:1344/avscan')).statusCode, 201, 'saved (nothing is contacted)');
  const bad = await save('bad', 'http://127.0.0.1/avscan');
  t.equal(bad.statusCode, 400);
  t.match(JSON.parse(bad.payload).message, /endpoint.*icap:\/\/ URL/);
});
