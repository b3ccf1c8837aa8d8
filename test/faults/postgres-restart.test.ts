/**
 * A private PostgreSQL instance (started by the test, never the shared
 * server) stopped and started again while clients keep writing through a
 * real `ferry serve`: during the outage every answer is 503 with Retry-After
 * (never a 500), every write acknowledged with 201 is there afterwards, and
 * the node serves again by itself, without a restart.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { ADMIN, call, createUser, serve, streamUpload, token, writeConfig, type Server } from './helpers/ferry.js';
import { PrivatePostgres, postgresBinDir } from './helpers/private-pg.js';

const CLIENTS = 12;
const PASSWORD = 'pg-restart-password-1';

t.test('PostgreSQL restart under load: 503 during the outage, no acknowledged write lost, recovery without restart', async (t) => {
  const bin = postgresBinDir();
  if (!bin) {
    t.plan(0, 'no PostgreSQL server binaries under /usr/lib/postgresql');
    return;
  }
  const pg = await PrivatePostgres.create(bin);
  t.teardown(() => pg.destroy());
  const base = await mkdtemp(path.join(os.tmpdir(), 'ferry-faults-pgr-'));
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const home = path.join(base, 'homes', 'u1');
  const server: Server = await serve(writeConfig(base, { databaseUrl: pg.url }));
  t.teardown(() => server.kill('SIGKILL'));
  const admin = await token(server.url, 'admin', ADMIN.username, ADMIN.password);
  const userToken = await createUser(t, server.url, admin, { username: 'u1', password: PASSWORD, home });

  const accounts: string[] = [];
  const files: string[] = [];
  /** Answers other than 201 and 503 (with Retry-After): must stay empty. */
  const wrong: string[] = [];
  let unavailable = 0;
  let stop = false;
  const check = (what: string, status: number, retryAfter: string | null, body: string) => {
    if (status === 503 && retryAfter) unavailable++;
    else if (status !== 201) wrong.push(`${what}: ${status} ${body.slice(0, 200)}`);
  };
  const client = async (c: number) => {
    for (let n = 0; !stop; n++) {
      if (n % 2 === 0) {
        const name = `acc-${c}-${n}`;
        const r = await call(`${server.url}/api/v2/users`, 'POST', {
          token: admin,
          body: { username: name, password: PASSWORD, status: 1, home_dir: path.join(base, 'homes', name), permissions: { '/': ['*'] } },
        }).catch((err: Error) => ({ status: 0, text: err.message, headers: new Headers() }));
        check(`POST /users ${name}`, r.status, r.headers.get('retry-after'), r.text);
        if (r.status === 201) accounts.push(name);
      } else {
        const name = `f-${c}-${n}`;
        const u = streamUpload(server.url, userToken, `/${name}`, 4096);
        u.end(Buffer.alloc(4096, c));
        const o = await u.outcome;
        if ('error' in o) wrong.push(`upload ${name}: ${o.error}`);
        else {
          // (streamUpload does not expose headers: a 503 there is checked for its JSON body)
          check(`upload ${name}`, o.status, o.status === 503 && /database is unavailable/.test(o.body) ? '5' : null, o.body);
          if (o.status === 201) files.push(name);
        }
      }
      if (unavailable > 0) await sleep(20); // during the outage, a client that was told to wait does not spin
    }
  };
  const load = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));

  // the load runs until every client had a write acknowledged
  for (let i = 0; i < 600 && accounts.length + files.length < CLIENTS; i++) await sleep(100);
  const before = accounts.length + files.length;
  await pg.stop();
  // the outage lasts until the clients were told 503 a few times
  for (let i = 0; i < 100 && unavailable < CLIENTS; i++) await sleep(100);
  const ready = await call(`${server.url}/readyz`, 'GET');
  t.equal(ready.status, 503, 'not ready while the database is down');
  t.equal((await call(`${server.url}/healthz`, 'GET')).status, 200, 'alive while the database is down');
  await pg.start();
  // recovery by itself: ready again without any restart of the node
  let back = 0;
  for (let i = 0; i < 150 && back !== 200; i++) {
    back = (await call(`${server.url}/readyz`, 'GET')).status;
    if (back !== 200) await sleep(200);
  }
  t.equal(back, 200, 'ready again after the database came back');
  const afterRestart = accounts.length + files.length;
  for (let i = 0; i < 100 && accounts.length + files.length < afterRestart + CLIENTS; i++) await sleep(100);
  stop = true;
  await load;

  t.ok(before > 0, `writes acknowledged before the outage (${before})`);
  t.ok(unavailable > 0, `clients were answered 503 with Retry-After during the outage (${unavailable})`);
  t.same(wrong, [], 'every answer was 201 or 503 (never a 500, never a cut connection)');
  // on a failure, the server's error lines say which error was not recognised as an outage
  if (wrong.length)
    t.comment(
      server
        .output()
        .split('\n')
        .filter((l) => /"level":50/.test(l))
        .join('\n'),
    );
  t.ok(accounts.length + files.length > afterRestart, 'writes are acknowledged again after the restart');

  const admin2 = await token(server.url, 'admin', ADMIN.username, ADMIN.password);
  const missing: string[] = [];
  for (const name of accounts) {
    const r = await call(`${server.url}/api/v2/users/${name}`, 'GET', { token: admin2 });
    if (r.status !== 200) missing.push(`account ${name}: ${r.status}`);
  }
  for (const name of files) {
    const st = await stat(path.join(home, name)).catch(() => undefined);
    if (st?.size !== 4096) missing.push(`file ${name}: ${st?.size}`);
  }
  t.same(missing, [], `no acknowledged write lost (${accounts.length} accounts, ${files.length} uploads)`);
  await server.kill('SIGTERM');
});
