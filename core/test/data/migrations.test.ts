import t from 'tap';
import { createTestApp, usePostgres } from '../../src/testing.js';
import { migrate } from '../../src/data/orm.js';

t.test(`migrations create exactly the schema the entities describe (${usePostgres() ? 'postgresql' : 'sqlite'})`, async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const diff = await ta.app.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
  t.equal(diff.trim(), '', 'no drift between entities and migrations: run `npm run db:generate -w @ferry/core`');
  t.same(await migrate(ta.app.orm), [], 'a second run applies nothing');
});
