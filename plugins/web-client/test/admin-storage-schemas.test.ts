/**
 * The web admin's storage form (app/src/admin/storage-model.ts) against the
 * storage plugins themselves: every option a provider's joi schema accepts
 * has its field, no field names an option the schema would drop, a secret
 * field is one of the provider's secrets, a required field is required by
 * the schema, and the choices of a select are values the schema accepts.
 * (admin-storage-unit.test.ts checks the same form against reference.yaml;
 * this one catches a plugin that gains, renames or restricts an option.)
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PROVIDERS } from '../app/src/admin/storage-model.js';

interface ProviderDef {
  provider: number;
  configKey: string;
  /** A joi object schema (only what this test calls of it). */
  optionsSchema: { describe(): unknown; extract(key: string): { validate(value: unknown): { error?: unknown } } };
  secretFields?: readonly string[];
}
interface Plugin {
  register(ctx: unknown, config: Record<string, unknown>): void | Promise<void>;
}
interface KeyDescription {
  type: string;
  flags?: { presence?: string; only?: boolean };
  allow?: unknown[];
}

const PACKAGES = ['@ferry/fs-local', '@ferry/fs-s3', '@ferry/fs-gcs', '@ferry/fs-azblob', '@ferry/fs-crypt', '@ferry/fs-sftp', '@ferry/fs-http'];

/** What each plugin registers, through a plugin context that only collects. */
async function registeredProviders(): Promise<ProviderDef[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-storage-schemas-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const logger = { info() {}, warn() {}, error() {}, debug() {}, child: () => logger };
  const defs: ProviderDef[] = [];
  for (const name of PACKAGES) {
    const plugin = ((await import(name)) as { default: Plugin }).default;
    await plugin.register({ dataDir, logger, registerFsProvider: (d: ProviderDef) => defs.push(d) }, {});
  }
  return defs;
}

const defs = await registeredProviders();

t.same(defs.map((d) => d.provider).sort(), PROVIDERS.map((p) => p.provider).sort(), 'the form has a section for each provider the storage plugins register');

for (const p of PROVIDERS) {
  const def = defs.find((d) => d.provider === p.provider);
  if (!def) continue;
  t.test(`${p.configKey} (provider ${p.provider}, its plugin's schema)`, async (t) => {
    t.equal(def.configKey, p.configKey, 'the same config object');
    const keys = (def.optionsSchema.describe() as { keys: Record<string, KeyDescription> }).keys;
    t.same(p.options.map((o) => o.key).sort(), Object.keys(keys).sort(), 'a field for every option the schema accepts, and no other');
    const secrets = p.options.filter((o) => o.kind === 'secret').map((o) => o.key);
    t.same(secrets.sort(), [...(def.secretFields ?? [])].sort(), 'the secret fields are the plugin’s secrets');
    for (const o of p.options) {
      const k = keys[o.key];
      if (!k) continue;
      if (o.required) t.equal(k.flags?.presence, 'required', `${o.key}: required by the schema too`);
      if (o.kind === 'number') t.equal(k.type, 'number', `${o.key}: a number`);
      if (o.kind === 'bool') t.equal(k.type, 'boolean', `${o.key}: a boolean`);
      if (o.kind === 'select') {
        for (const choice of o.choices ?? []) {
          const error = def.optionsSchema.extract(o.key).validate(choice).error;
          t.notOk(error, `${o.key}: the choice ${JSON.stringify(choice)} is accepted`);
        }
      }
    }
  });
}
