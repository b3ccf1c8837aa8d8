// A fresh PostgreSQL database for a benchmark, on FERRY_TEST_PG_URL (default
// postgresql://postgres@127.0.0.1:5432/postgres, trust auth, as the tests use).
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.FERRY_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** Creates a database named `<prefix>_<random>`; resolves to { name, url, drop() }. */
export async function createBenchDatabase(prefix = 'ferry_bench') {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
