import t, { type Test } from 'tap';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe } from '../helpers/serve.js';

// What a `ferry serve` on the shipped configuration (every bundled plugin)
// loads before anyone uses a feature: the modules of features used rarely or
// only when configured are imported on first use, so an idle server does not
// hold them; nor does any server load a migration framework (migrations are
// core/src/data/migrate.ts, a few statements). A preload (core/test/fixtures/module-trace.mjs) lists every
// module the process loaded.

const TRACE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/module-trace.mjs');

/** Loaded on first use only: the feature, and the packages that must not be loaded before it. */
const ON_FIRST_USE: Record<string, string[]> = {
  'a mail': ['nodemailer'],
  'a TOTP secret': ['qrcode', 'pngjs'],
  'an OIDC login': ['openid-client', 'oauth4webapi', 'jose'],
  'a PGP action': ['openpgp'],
  'an IMAP action': ['imapflow'],
  // (ssh2 itself loads at start: the shipped SFTP service, plugins/service-sftp, listens with it)
  'a remote storage user': ['@aws-sdk/client-s3', '@azure/storage-blob', '@google-cloud/storage', 'ssh2-sftp-client'],
};

/** Starts `ferry serve` on `dataDir`, gets an admin token and checks /healthz, stops it; the packages it loaded. */
async function serveOnce(t: Test, dataDir: string, trace: string): Promise<Set<string>> {
  rmSync(`${trace}.esm`, { force: true });
  rmSync(`${trace}.cjs`, { force: true });
  const { base, stop } = await startServe(
    t,
    {
      FERRY_MODULE_TRACE: trace,
      SERVICE_COMMON__DATA_DIR: dataDir,
      SERVICE_HTTPD__BINDINGS__0__PORT: '0',
      SERVICE_DEFAULT_ADMIN_USERNAME: 'admin',
      SERVICE_DEFAULT_ADMIN_PASSWORD: 'Idle-Modules-Pw-1',
    },
    [`--import=${TRACE}`],
  );
  const tok = await fetch(`${base}/api/v2/token`, { headers: { authorization: 'Basic ' + Buffer.from('admin:Idle-Modules-Pw-1').toString('base64') } });
  t.equal(tok.status, 200, 'the admin gets a token');
  t.equal((await fetch(`${base}/healthz`)).status, 200, 'healthy');
  t.equal(await stop(), 0, 'stops cleanly');
  const lines = [readFileSync(`${trace}.esm`, 'utf8'), readFileSync(`${trace}.cjs`, 'utf8')].join('\n').split('\n');
  const packages = new Set<string>();
  for (const l of lines) {
    // code only: MikroORM reads the package.json of every @mikro-orm package at start
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/.*\.(?:c|m)?js$/.exec(l);
    if (m) packages.add(m[1]!);
  }
  return packages;
}

t.test('an idle server on an up-to-date database loads no module of a feature before its first use', async (t) => {
  const dir = t.testdir({});
  const dataDir = path.join(dir, 'data');
  const first = await serveOnce(t, dataDir, path.join(dir, 'first'));
  t.ok(first.has('@hapi/hapi') && first.has('jsonwebtoken'), 'the trace sees what loads');
  for (const p of ['@mikro-orm/migrations', 'umzug']) t.notOk(first.has(p), `migrating a new database loads no ${p}`);
  const again = await serveOnce(t, dataDir, path.join(dir, 'again'));
  t.ok(again.has('@hapi/hapi') && again.has('jsonwebtoken'), 'the trace of the second start');
  for (const [feature, packages] of Object.entries(ON_FIRST_USE)) {
    t.same(
      packages.filter((p) => again.has(p)),
      [],
      `nothing of ${packages.join(', ')} before ${feature}`,
    );
  }
});
