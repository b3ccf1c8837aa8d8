// A fresh PostgreSQL database for a benchmark: the tests' own helper
// (createPgDatabase of core's testing module, compiled in core/dist) on
// FERRY_TEST_PG_URL (default postgresql://postgres@127.0.0.1:5432/postgres,
// trust auth). Load it after buildFerry(): the module comes from core/dist.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './common.mjs';

/** Creates a database; resolves to { url, drop() }. */
export async function createBenchDatabase() {
  const { createPgDatabase } = await import(pathToFileURL(path.join(root, 'core/dist/src/testing.js')).href);
  return createPgDatabase();
}
