#!/usr/bin/env node
// Users at scale: list pages, lookups and token issuing through the REST API
// with 100,000 users, against raw SQL on the same table in the same run.
// Run from the repository root:
//
//   node bench/users.bench.mjs            # SQLite (a fresh file in the OS temp directory)
//   node bench/users.bench.mjs --pg       # PostgreSQL (a fresh database on FERRY_TEST_PG_URL or 127.0.0.1:5432)
//
// Options: --count N (default 100000), --rounds N (lookups per workload, default 2000).
// The users are generated directly in the database (bench/gen-users.mjs). Each
// workload prints ms/op, SQL queries/op and the ratio to its baseline:
//   lookup   GET /users/{name} and UserService.effectiveUser()  vs  select * from users where username = ?
//   page     GET /users?offset=..&limit=100 (start, middle, end)  vs  select * from users order by username limit 100 offset ..
//   token    GET /user/token (basic auth)  vs  the raw lookup + one argon2 verify (the floor of any password login)
//   request  a user bearer-token request (token checks + effective user)  vs  the raw lookup
// "GET /version" shows what every admin request costs before the handler runs
// (hapi routing, JWT verification, revocation and admin lookups).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!process.execArgv.includes('--conditions=ferry-src')) {
  const loader = path.join(root, 'node_modules/@tapjs/typescript/dist/esm/import.mjs');
  const r = spawnSync(
    process.execPath,
    [`--import=${loader}`, '--conditions=ferry-src', '--no-warnings', fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
      env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' },
    },
  );
  process.exit(r.status ?? 1);
}

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const PG = process.argv.includes('--pg');
const COUNT = Number(arg('count', '100000'));
const ROUNDS = Number(arg('rounds', '2000'));

const { generateUsers, userName, BENCH_PASSWORD } = await import('./gen-users.mjs');
const { openOrm, migrate } = await import('../core/src/data/orm.ts');
const { createTestApp, createPgDatabase } = await import('../core/src/testing.ts');
const { UserService } = await import('../core/src/accounts/user.service.ts');
const { verifyPassword } = await import('../core/src/accounts/password.ts');

// 1. the database, generated directly
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ferry-users-bench-'));
const sqliteFile = path.join(tmp, 'ferry.db');
const pg = PG ? await createPgDatabase() : null;
{
  const orm = pg ? await openOrm({ driver: 'postgresql', url: pg.url }) : await openOrm({ driver: 'sqlite', sqlitePath: sqliteFile });
  await migrate(orm);
  const g = await generateUsers(orm, COUNT);
  console.log(`${PG ? 'postgresql' : 'sqlite'}: generated ${COUNT} users in ${(g.ms / 1000).toFixed(1)} s`);
  await orm.close(true);
}

// 2. an app on it
const ta = await createTestApp({
  plugins: [],
  dataDir: tmp,
  databaseUrl: pg?.url,
  config: pg ? {} : { data_provider: { driver: 'sqlite', name: sqliteFile } },
});
const conn = ta.app.orm.em.getConnection();
let queries = 0;
conn.getKnex().on('query', () => void queries++);
const adminToken = await ta.adminToken();
const users = ta.app.container.resolve(UserService);
const hash = (await conn.execute('select password_hash from users where username = ?', [userName(1)]))[0].password_hash;
const rnd = () => userName(1 + Math.floor(Math.random() * COUNT));

async function measure(n, fn) {
  for (let i = 0; i < Math.max(3, n / 20); i++) await fn(i);
  queries = 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn(i);
  const ms = (performance.now() - t0) / n;
  return { ms, q: queries / n };
}

async function expect200(r, what) {
  if (r.statusCode !== 200) throw new Error(`${what}: ${r.statusCode} ${r.payload}`);
  return r;
}

const rows = [];
const row = (name, r, base) =>
  rows.push({ workload: name, 'ms/op': r.ms.toFixed(3), 'queries/op': r.q.toFixed(1), ratio: base ? `${(r.ms / base.ms).toFixed(1)}x` : 'baseline' });

// lookups
const rawLookup = await measure(ROUNDS, () => conn.execute('select * from users where username = ?', [rnd()]));
row('raw lookup (baseline)', rawLookup);
row(
  'GET /version (HTTP + admin token check only)',
  await measure(ROUNDS, async () => expect200(await ta.inject('GET', '/api/v2/version', { token: adminToken }), 'version')),
  rawLookup,
);
row(
  'GET /users/{name}',
  await measure(ROUNDS, async () => expect200(await ta.inject('GET', `/api/v2/users/${rnd()}`, { token: adminToken }), 'get')),
  rawLookup,
);
row('effectiveUser()', await measure(ROUNDS, () => users.effectiveUser(rnd())), rawLookup);

// list pages
const pages = Math.max(20, Math.floor(ROUNDS / 20));
for (const [label, offset] of [
  ['start', 0],
  ['middle', Math.floor(COUNT / 2)],
  ['end', Math.max(0, COUNT - 100)],
]) {
  const raw = await measure(pages, () => conn.execute('select * from users order by username asc limit 100 offset ?', [offset]));
  row(`raw page 100 @${label} (baseline)`, raw);
  row(
    `GET /users?limit=100 @${label}`,
    await measure(pages, async () => expect200(await ta.inject('GET', `/api/v2/users?offset=${offset}&limit=100`, { token: adminToken }), 'list')),
    raw,
  );
}
const raw500 = await measure(pages, () => conn.execute('select * from users order by username asc limit 500 offset ?', [Math.floor(COUNT / 2)]));
row('raw page 500 @middle (baseline)', raw500);
row(
  'GET /users?limit=500 @middle',
  await measure(pages, async () =>
    expect200(await ta.inject('GET', `/api/v2/users?offset=${Math.floor(COUNT / 2)}&limit=500`, { token: adminToken }), 'list500'),
  ),
  raw500,
);

// token issuing: argon2 dominates any password login
const logins = Math.max(10, Math.floor(ROUNDS / 50));
const rawLogin = await measure(logins, async () => {
  const r = await conn.execute('select * from users where username = ?', [rnd()]);
  await verifyPassword(r[0].password_hash ?? hash, BENCH_PASSWORD);
});
row('raw lookup + argon2 verify (baseline)', rawLogin);
let userToken = '';
row(
  'GET /user/token',
  await measure(logins, async () => {
    const r = await expect200(await ta.inject('GET', '/api/v2/user/token', { basic: { username: rnd(), password: BENCH_PASSWORD } }), 'token');
    userToken = JSON.parse(r.payload).access_token;
  }),
  rawLogin,
);

// an authenticated user request: JWT check, revocation, user + groups (effective view)
const probe = await ta.inject('GET', '/api/v2/user/profile', { token: userToken });
if (probe.statusCode === 200) {
  row(
    'GET /user/profile (bearer)',
    await measure(ROUNDS, async () => expect200(await ta.inject('GET', '/api/v2/user/profile', { token: userToken }), 'profile')),
    rawLookup,
  );
}

console.log(`\nFerry users benchmark: ${COUNT} users, ${PG ? 'PostgreSQL' : 'SQLite'}, node ${process.version}`);
console.table(rows);

await ta.close();
await pg?.drop();
rmSync(tmp, { recursive: true, force: true });
