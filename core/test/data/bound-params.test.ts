import t from 'tap';
import type { EntityMetadata } from '@mikro-orm/core';
import type { AbstractSqlPlatform, SqlEntityManager } from '@mikro-orm/knex';
import { raw } from '@mikro-orm/core';
import { createTestApp, usePostgres } from '../../src/testing.js';
import { bindParameters } from '../../src/data/bound-sql.js';

/**
 * Every query runs with bound parameters (core/src/data/bound-sql.ts): values
 * that SQL text would have to escape round-trip through every entity unchanged,
 * and never appear in the statement text.
 */
const ta = await createTestApp({ plugins: [] });
t.teardown(() => ta.close());
const orm = ta.app.orm;
const pg = usePostgres();
const em = () => orm.em.fork() as unknown as SqlEntityManager;
const conn = () => em().getConnection();
const platform = orm.em.getPlatform() as AbstractSqlPlatform;

/** Quotes, backslashes, placeholders of both dialects, LIKE wildcards, a JSON-looking piece and a marker to find it in SQL text. */
const TRICKY = `zq7 it's "q" \\ \\' ? ?? $1 :name % _ {"a":1} --x /*y*/ é 😀`;

/** Writable columns of an entity, with their kind. */
function columns(meta: EntityMetadata) {
  return meta.props.filter((p) => !(p.primary && p.autoincrement) && ['scalar', 'm:1'].includes(p.kind));
}

/** Entities ordered so that the target of every many-to-one comes first. */
function orderedEntities(): EntityMetadata[] {
  const all = Object.values(orm.getMetadata().getAll()).filter((m) => !m.embeddable && !m.virtual && m.tableName);
  const out: EntityMetadata[] = [];
  const seen = new Set<string>();
  const visit = (m: EntityMetadata) => {
    if (seen.has(m.className)) return;
    seen.add(m.className);
    for (const p of columns(m)) if (p.kind === 'm:1') visit(all.find((x) => x.className === p.type)!);
    out.push(m);
  };
  all.forEach(visit);
  return out;
}

const jsonOf = (v: string) => ({ [v]: [v, { k: v }], plain: v });

/** Stores one row per entity with every string column (and JSON key and value) set to `v`; returns the rows' primary keys. */
/** The value as a column of declared length holds it (PostgreSQL refuses longer values; the bindings are what is checked). */
const fitted = (p: { length?: number }, v: string): string => (pg && p.length && p.length < v.length ? v.slice(0, p.length) : v);

async function storeEverywhere(v: string): Promise<Map<string, unknown>> {
  const e = em();
  const stored = new Map<string, object>();
  for (const m of orderedEntities()) {
    const data: Record<string, unknown> = {};
    for (const p of columns(m)) {
      if (p.kind === 'm:1') data[p.name] = stored.get(p.type);
      else if (p.runtimeType === 'string') data[p.name] = fitted(p, v);
      else if (p.columnTypes?.[0] === 'json') data[p.name] = jsonOf(v);
      else data[p.name] = typeof p.default === 'number' ? p.default : 0;
    }
    stored.set(m.className, e.create(m.className, data as never));
  }
  await e.flush();
  return new Map([...stored].map(([name, entity]) => [name, e.getMetadata(name).primaryKeys.map((k) => (entity as Record<string, unknown>)[k])[0]]));
}

/** Removes the rows storeEverywhere made (dependents first). */
async function removeEverywhere(keys: Map<string, unknown>): Promise<void> {
  const e = em();
  for (const m of orderedEntities().reverse()) {
    await e.nativeDelete(m.className, { [m.primaryKeys[0]!]: keys.get(m.className) } as never);
  }
}

t.test('the entities cover what the API stores', async (t) => {
  const tables = orderedEntities().map((m) => m.tableName);
  for (const table of [
    'users',
    'groups',
    'folders',
    'admins',
    'roles',
    'api_keys',
    'shares',
    'event_actions',
    'event_rules',
    'ip_lists',
    'users_groups',
    'users_folders',
    'settings',
  ]) {
    t.ok(tables.includes(table), table);
  }
});

t.test('a tricky value round-trips through every entity unchanged', async (t) => {
  const queries: { sql: string; bindings?: unknown[] }[] = [];
  const knex = conn().getKnex();
  const onQuery = (q: { sql: string; bindings?: unknown[] }) => void queries.push(q);
  knex.on('query', onQuery);
  const keys = await storeEverywhere(TRICKY);
  try {
    const e = em();
    for (const m of orderedEntities()) {
      const row = (await e.findOneOrFail(m.className, { [m.primaryKeys[0]!]: keys.get(m.className) } as never)) as Record<string, unknown>;
      for (const p of columns(m)) {
        if (p.kind === 'm:1') continue;
        if (p.runtimeType === 'string') t.equal(row[p.name], fitted(p, TRICKY), `${m.className}.${p.name}`);
        else if (p.columnTypes?.[0] === 'json') t.same(row[p.name], jsonOf(TRICKY), `${m.className}.${p.name}`);
      }
      // found again by the value: the where clause carries it as a binding too
      const byProp = columns(m).find((p) => p.runtimeType === 'string' && !p.primary && fitted(p, TRICKY) === TRICKY);
      if (byProp) t.equal(await e.count(m.className, { [byProp.name]: TRICKY } as never), 1, `${m.className} by ${byProp.name}`);
    }
  } finally {
    knex.off('query', onQuery);
    await removeEverywhere(keys);
  }
  t.ok(queries.length > 20, 'queries seen');
  t.notOk(
    queries.some((q) => q.sql.includes('zq7')),
    'the value is never in the SQL text',
  );
  t.ok(
    queries.some((q) => q.bindings?.includes(TRICKY)),
    'the value is passed as a binding',
  );
});

t.test('NUL in a value', async (t) => {
  const v = `nul\u0000${TRICKY}\u0000end`;
  if (pg) {
    // PostgreSQL text cannot hold NUL: refused with an error, never cut short
    await t.rejects(storeEverywhere(v), /0x00/);
    t.equal(await em().count('Role', { name: { $like: 'nul%' } } as never), 0, 'nothing stored');
    return;
  }
  // SQLite holds it: every byte stored and found by equality. (The libsql driver
  // returns TEXT cut at the first NUL when reading, so the stored bytes are compared.)
  const keys = await storeEverywhere(v);
  try {
    const hex = Buffer.from(v, 'utf8').toString('hex').toUpperCase();
    for (const m of orderedEntities()) {
      for (const p of columns(m)) {
        if (p.kind !== 'scalar' || p.runtimeType !== 'string') continue;
        const rows = await conn().execute<{ h: string }[]>(
          `select hex(${platform.quoteIdentifier(p.fieldNames[0]!)}) as h from ${platform.quoteIdentifier(m.tableName)} where ${platform.quoteIdentifier(p.fieldNames[0]!)} = ?`,
          [v],
        );
        t.same(
          rows.map((r) => r.h),
          [hex],
          `${m.className}.${p.name}`,
        );
      }
      const row = (await em().findOneOrFail(m.className, { [m.primaryKeys[0]!]: keys.get(m.className) } as never)) as Record<string, unknown>;
      for (const p of columns(m)) if (p.columnTypes?.[0] === 'json') t.same(row[p.name], jsonOf(v), `${m.className}.${p.name} (JSON)`);
    }
  } finally {
    await removeEverywhere(keys);
  }
});

t.test('raw statements: a ? inside a string literal is text, values are bound', async (t) => {
  const [row] = await conn().execute<{ a: string; b: string; c: string }[]>(`select ? as a, 'lit?''s' as b, ? as c -- a comment?`, [TRICKY, 'x?']);
  t.same(row, { a: TRICKY, b: "lit?'s", c: 'x?' });
  const [n] = await conn().execute<{ n: number | string }[]>('select count(*) as n from roles where name in (?) or name = ?', [['a', TRICKY], TRICKY]);
  t.equal(Number(n!.n), 0);
  const [id] = await conn().execute<{ v: string }[]>('select ?? as v from (select ? as ??) s', ['x y', TRICKY, 'x y']);
  t.equal(id!.v, TRICKY, 'identifiers still quoted into the text');
});

t.test('bindParameters', async (t) => {
  const d = pg ? 'postgresql' : 'sqlite';
  t.same(bindParameters('select ? , ?', ["it's", null], d, platform), { sql: 'select ? , ?', bindings: ["it's", null] });
  t.same(bindParameters('x in (?)', [[1, 2, 3]], d, platform), { sql: 'x in (?, ?, ?)', bindings: [1, 2, 3] });
  t.same(bindParameters('x = ?', [undefined], d, platform).bindings, [null], 'undefined is NULL, as MikroORM writes it');
  t.same(bindParameters('x = ?', [{ a: "'" }], d, platform).bindings, ['{"a":"\'"}'], 'objects as JSON');
  t.same(bindParameters('x = ?', [raw('lower(?)', ['A'])], d, platform), { sql: 'x = lower(?)', bindings: ['A'] }, 'raw fragments spliced');
  t.same(
    bindParameters('x = \'?\' and y = ? and z = "?"', ['v'], d, platform).bindings,
    ['?', 'v'],
    'a string literal with ? becomes a binding; identifiers stay',
  );
  t.same(bindParameters('a \\? b and c = ?', [1], d, platform), { sql: 'a \\? b and c = ?', bindings: [1] }, 'literal ? kept escaped for knex');
  t.same(
    bindParameters('a \\? b and c = ??', ['col'], d, platform),
    { sql: `a ? b and c = ${platform.quoteIdentifier('col')}`, bindings: [] },
    'and plain without bindings',
  );
  t.same(bindParameters('/* ? */ x = ? -- ?\n', [2], d, platform), { sql: '/* _ */ x = ? -- _\n', bindings: [2] }, 'comments hold no placeholders');
  const date = new Date(1700000000123);
  t.same(bindParameters('x = ?', [date], d, platform).bindings, [
    pg ? (platform as unknown as { formatDate(d: Date): string }).formatDate(date) : 1700000000123,
  ]);
  t.same(bindParameters('x = ?', [Buffer.from('ab')], d, platform).bindings, [Buffer.from('ab')]);
  const jsonArray = platform.cloneEmbeddable([1, 'a']);
  t.same(bindParameters('x = ?', [jsonArray], d, platform), { sql: 'x = ?', bindings: ['[1,"a"]'] }, 'a JSON array is one value');
  t.same(
    bindParameters(
      '(a, b) in (?)',
      [
        [
          [1, 2],
          [3, 4],
        ],
      ],
      d,
      platform,
    ),
    pg ? { sql: '(a, b) in (?, ?, ?, ?)', bindings: [1, 2, 3, 4] } : { sql: '(a, b) in ((?, ?), (?, ?))', bindings: [1, 2, 3, 4] },
    'nested arrays as MikroORM writes them',
  );
  t.same(
    bindParameters("x = E'it\\'s ?' and y = ?", [1], 'postgresql', platform),
    { sql: "x = E'it\\'s ?' and y = ?", bindings: [1] },
    'E-strings with a ? are left to fail loudly, not bound',
  );
});

t.test('the query log still shows queries, with values only when asked', async (t) => {
  // the debug setting, not logger.setDebugMode: the configuration puts its own setting back on every change
  const logger = orm.config.getLogger() as unknown as { writer: (m: string) => void };
  const writer = logger.writer;
  const lines: string[] = [];
  logger.writer = (m) => {
    lines.push(m);
  };
  try {
    orm.config.set('debug', ['query']);
    await em().count('Role', { name: 'zq7-log' } as never);
    t.match(lines.join('\n'), pg ? /"name" = \$1/ : /`name` = \?/, 'placeholders without query-params');
    t.notMatch(lines.join('\n'), /zq7-log/);
    lines.length = 0;
    orm.config.set('debug', ['query', 'query-params']);
    await em().count('Role', { name: 'zq7-log' } as never);
    t.match(lines.join('\n'), /'zq7-log'/, 'values with query-params');
  } finally {
    orm.config.set('debug', false);
    logger.writer = writer;
  }
});
