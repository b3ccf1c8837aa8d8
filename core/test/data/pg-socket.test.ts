import t from 'tap';
import { existsSync } from 'node:fs';
import { openOrm, pgSocketDir } from '../../src/data/orm.js';
import { loadConfig } from '../../src/config/load.js';
import { createPgDatabase, usePostgres } from '../../src/testing.js';

/**
 * PostgreSQL through its Unix socket, in the form config/default.yaml gives
 * (postgresql://user@localhost/db?host=<socket directory>): the config takes
 * it and the connection is a socket one (PostgreSQL sees no client address).
 */
const SOCKET_DIR = '/var/run/postgresql';
const skip = !usePostgres() ? 'PostgreSQL only' : !existsSync(`${SOCKET_DIR}/.s.PGSQL.5432`) ? `no PostgreSQL socket in ${SOCKET_DIR}` : false;

t.test('a Unix socket URL is taken and connects through the socket', { skip }, async (t) => {
  const pg = await createPgDatabase();
  t.teardown(() => pg.drop());
  const tcp = new URL(pg.url);
  const url = `postgresql://${tcp.username}@localhost${tcp.pathname}?host=${SOCKET_DIR}`;
  const { config } = loadConfig({ env: { SERVICE_DATA_PROVIDER__DRIVER: 'postgresql', SERVICE_DATA_PROVIDER__URL: url } });
  t.equal(config.data_provider.url, url);
  const orm = await openOrm({ driver: 'postgresql', url: config.data_provider.url });
  t.teardown(() => orm.close(true));
  const rows = await orm.em.getConnection().execute('select inet_client_addr() as addr, current_database() as db');
  t.same(rows, [{ addr: null, db: tcp.pathname.slice(1) }], 'no client address: a socket connection, to the database named');
});

t.test('pgSocketDir: only a host parameter that is a directory path names a socket', async (t) => {
  t.equal(pgSocketDir('postgresql://u@localhost/db?host=/var/run/postgresql'), '/var/run/postgresql');
  t.equal(pgSocketDir('postgresql://u:p@db.example:5432/db'), undefined, 'TCP');
  t.equal(pgSocketDir('postgresql://u@localhost/db?host=db.example'), undefined, 'a host name is not a socket');
  t.equal(pgSocketDir('postgresql://u@/db?host=/tmp'), undefined, 'not a URL (refused by the config check)');
  t.equal(pgSocketDir(''), undefined);
});
