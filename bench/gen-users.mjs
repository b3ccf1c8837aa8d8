#!/usr/bin/env node
// Generates N users directly in a Ferry database (bulk INSERTs, no API), for
// the users benchmark. Run from the repository root:
//
//   node bench/gen-users.mjs --count 100000 [--sqlite <file>]      (default: <os tmpdir>/ferry-bench-users.db)
//   node bench/gen-users.mjs --count 100000 --pg postgresql://postgres@127.0.0.1:5432/ferry_bench   (existing database)
//
// The database is created and migrated when needed. Users are user0000001 ..,
// all with the password "bench-password" (one argon2 hash shared by all),
// home /srv/bench/<name>; 20 groups (every user is in one, as a secondary
// group) and 10 virtual folders (every 10th user has one mapped at /shared).
// Also importable: generateUsers(orm, count) (bench/users.bench.mjs uses it).
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);

// The core is TypeScript (exports condition "ferry-src"): re-run under the loader tap uses.
if (isMain && !process.execArgv.includes('--conditions=ferry-src')) {
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

export const BENCH_PASSWORD = 'bench-password';
export const userName = (i) => `user${String(i).padStart(7, '0')}`;

const GROUPS = 20;
const FOLDERS = 10;
const BATCH = 500;

/** Inserts `count` users (plus groups, folders and mappings) through raw multi-row INSERTs. */
export async function generateUsers(orm, count, { log = () => {} } = {}) {
  const { hashPassword } = await import('../core/src/accounts/password.ts');
  const hash = await hashPassword(BENCH_PASSWORD);
  const conn = orm.em.getConnection();
  const now = Date.now();
  const t0 = performance.now();
  await orm.em.fork().transactional(async (em) => {
    const ctx = em.getTransactionContext();
    const exec = (sql, params) => conn.execute(sql, params, 'run', ctx);
    for (let g = 1; g <= GROUPS; g++) {
      await exec('insert into groups (name, description, user_settings, created_at, updated_at) values (?, ?, ?, ?, ?)', [
        `bench-group-${g}`,
        '',
        JSON.stringify({ quota_size: 1 << 30, filters: { denied_protocols: ['FTP'] } }),
        now,
        now,
      ]);
    }
    for (let f = 1; f <= FOLDERS; f++) {
      await exec('insert into folders (name, description, mapped_path, filesystem, created_at, updated_at) values (?, ?, ?, ?, ?, ?)', [
        `bench-folder-${f}`,
        '',
        `/srv/bench-folders/${f}`,
        JSON.stringify({ provider: 0, osconfig: {} }),
        now,
        now,
      ]);
    }
  });
  const cols = [
    'username',
    'email',
    'password_hash',
    'public_keys',
    'home_dir',
    'permissions',
    'filters',
    'filesystem',
    'custom_placeholders',
    'oidc_custom_fields',
    'quota_size',
    'created_at',
    'updated_at',
  ];
  const rowSql = `(${cols.map(() => '?').join(', ')})`;
  for (let start = 1; start <= count; start += BATCH) {
    const end = Math.min(count, start + BATCH - 1);
    const params = [];
    for (let i = start; i <= end; i++) {
      const name = userName(i);
      params.push(name, `${name}@bench.test`, hash, '[]', `/srv/bench/${name}`, '{"/":["*"]}', '{}', '{"provider":0}', '[]', '{}', 0, now, now);
    }
    await conn.execute(`insert into users (${cols.join(', ')}) values ${Array.from({ length: end - start + 1 }, () => rowSql).join(', ')}`, params, 'run');
    if (end % 20000 < BATCH) log(`  ${end} users`);
  }
  const [{ gmin }] = await conn.execute('select min(id) as gmin from groups where name like ?', ['bench-group-%']);
  const [{ fmin }] = await conn.execute('select min(id) as fmin from folders where name like ?', ['bench-folder-%']);
  await conn.execute(
    `insert into users_groups (user_id, group_id, type) select id, ${Number(gmin)} + (id % ${GROUPS}), 2 from users where username like ?`,
    ['user%'],
    'run',
  );
  await conn.execute(
    `insert into users_folders (user_id, folder_id, virtual_path, quota_size, quota_files) select id, ${Number(fmin)} + (id % ${FOLDERS}), '/shared', -1, -1 from users where username like ? and id % 10 = 0`,
    ['user%'],
    'run',
  );
  // fresh statistics for the query planners (SQLite and PostgreSQL both know ANALYZE); on PostgreSQL
  // also the visibility map autovacuum keeps on a live database, without which a bulk-loaded table
  // gets no index-only scans (list pages skip their offset on the username index alone)
  const pg = orm.em.getPlatform().constructor.name.startsWith('PostgreSql');
  await conn.execute(pg ? 'vacuum analyze' : 'analyze', [], 'run').catch(() => {});
  return { users: count, ms: performance.now() - t0 };
}

if (isMain) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : dflt;
  };
  const count = Number(arg('count', '100000'));
  const pg = arg('pg');
  const sqlite = arg('sqlite', path.join(os.tmpdir(), 'ferry-bench-users.db'));
  const { openOrm, migrate } = await import('../core/src/data/orm.ts');
  const orm = pg ? await openOrm({ driver: 'postgresql', url: pg }) : await openOrm({ driver: 'sqlite', sqlitePath: path.resolve(sqlite) });
  await migrate(orm);
  const r = await generateUsers(orm, count, { log: console.log });
  console.log(`generated ${r.users} users in ${(r.ms / 1000).toFixed(1)} s (${pg ? 'postgresql' : path.resolve(sqlite)})`);
  await orm.close(true);
}
