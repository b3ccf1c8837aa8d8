import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { accountsApp, fixture, s3, tmpDir, user } from './accounts-helpers.js';
import { createLogger } from '../../src/logger.js';
import { FsFactory } from '../../src/vfs/fs-factory.js';
import { UserService } from '../../src/accounts/user.service.js';
import { QuotaScanService } from '../../src/vfs/quota-scan.service.js';

const ta = await accountsApp();
t.teardown(() => ta.close());
const { token } = ta;
const fsFactory = ta.app.container.resolve(FsFactory);
const users = ta.app.container.resolve(UserService);

const PLAINTEXTS = [
  'S3-SECRET-PLAIN',
  'SSE-KEY-PLAIN',
  'SFTP-PASS-PLAIN',
  'SFTP-KEY-PLAIN',
  'CRYPT-PASS-PLAIN',
  'GROUP-S3-PLAIN',
  'FOLDER-S3-PLAIN',
  'STRING-PASS-PLAIN',
];

/** The decrypted options the provider would get for a user's own filesystem. */
async function plainOptions(username: string) {
  const eff = await users.effectiveUser(username);
  return fsFactory.options(eff.filesystem, { username });
}

t.test('tagged union: provider selects one config, the others are cleared; unknown provider is a 400', async (t) => {
  const c = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: user('tu', {
      filesystem: {
        ...s3(),
        sftpconfig: { endpoint: 'h:22', username: 'x', password: { status: 'Plain', payload: 'SFTP-PASS-PLAIN' } },
        cryptconfig: { passphrase: { status: 'Plain', payload: 'x' } },
        gcsconfig: null,
      },
    }),
  });
  t.equal(c.statusCode, 201, c.payload);
  const fs = ta.json(c).filesystem;
  t.same(Object.keys(fs).sort(), ['provider', 's3config']);
  t.same(fs.s3config.access_secret, { status: 'AES-256-GCM' }, 'the status names the encrypted form; payload, key, additional data hidden');
  const raw = (await ta.sql('select filesystem from users where username = ?', ['tu']))[0]!.filesystem;
  t.notMatch(String(typeof raw === 'string' ? raw : JSON.stringify(raw)), /sftpconfig|SFTP-PASS-PLAIN/, 'unused configs not stored');
  for (const p of [9, 42]) {
    const r = await ta.inject('POST', '/api/v2/users', { token, payload: user(`p${p}`, { filesystem: { provider: p } }) });
    t.equal(r.statusCode, 400);
    t.match(ta.json(r).message, new RegExp(`provider ${p} is not available`));
  }
  // switching provider drops the old config
  const sw = await ta.inject('PUT', '/api/v2/users/tu', { token, payload: user('tu', { filesystem: { provider: 0, s3config: { bucket: 'ignored' } } }) });
  t.equal(sw.statusCode, 200, sw.payload);
  t.same(ta.json(await ta.inject('GET', '/api/v2/users/tu', { token })).filesystem, { provider: 0, osconfig: {} });
});

t.test('secrets: encrypted at rest, hidden on read, confidential_data for *, kept when sent back', async (t) => {
  const fsIn = s3({ sse_customer_key: { status: 'Plain', payload: 'SSE-KEY-PLAIN' }, key_prefix: 'home/%username%/' });
  const c = await ta.inject('POST', '/api/v2/users?confidential_data=1', { token, payload: user('sec', { filesystem: fsIn }) });
  t.equal(c.statusCode, 201, c.payload);
  const enc = ta.json(c).filesystem.s3config.access_secret;
  t.match(enc, { status: 'AES-256-GCM', payload: String, key: String, additional_data: 'sec' }, 'confidential: the encrypted form, bound to the owner');
  t.notOk(c.payload.includes('S3-SECRET-PLAIN'), 'never the plaintext');
  t.same((await plainOptions('sec')).access_secret, 'S3-SECRET-PLAIN', 'the provider gets the plaintext');
  t.equal((await plainOptions('sec')).key_prefix, 'home/sec/', 'placeholder interpolated for the provider');

  const hidden = ta.json(await ta.inject('GET', '/api/v2/users/sec', { token }));
  t.same(hidden.filesystem.s3config.access_secret, { status: 'AES-256-GCM' });
  t.same(hidden.filesystem.s3config.sse_customer_key, { status: 'AES-256-GCM' });
  t.equal(hidden.filesystem.s3config.key_prefix, 'home/%username%/', 'stored as written');

  // a non-* admin asking for confidential data gets the hidden form
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'viewer', password: 'viewer-pw', permissions: ['view_users', 'edit_users'] } });
  const vt = await ta.adminToken('viewer', 'viewer-pw');
  t.same(ta.json(await ta.inject('GET', '/api/v2/users/sec?confidential_data=1', { token: vt })).filesystem.s3config.access_secret, { status: 'AES-256-GCM' });
  const conf = ta.json(await ta.inject('GET', '/api/v2/users/sec?confidential_data=1', { token }));
  t.same(conf.filesystem.s3config.access_secret, enc, 'confidential read returns the stored encrypted form');

  // sending back what was read (hidden form) keeps the secrets
  const back = await ta.inject('PUT', '/api/v2/users/sec', { token: vt, payload: { ...hidden, password: undefined } });
  t.equal(back.statusCode, 200, back.payload);
  t.same((await plainOptions('sec')).access_secret, 'S3-SECRET-PLAIN');
  t.same((await plainOptions('sec')).sse_customer_key, 'SSE-KEY-PLAIN');
  // sending back the encrypted form unchanged keeps it as is
  t.equal((await ta.inject('PUT', '/api/v2/users/sec', { token, payload: { ...conf, password: undefined } })).statusCode, 200);
  const again = ta.json(await ta.inject('GET', '/api/v2/users/sec?confidential_data=1', { token }));
  t.same(again.filesystem.s3config.access_secret, enc, 'unchanged ciphertext');
  // Plain replaces; an empty Plain clears (and the plugin then refuses access_key without secret)
  const repl = await ta.inject('PUT', '/api/v2/users/sec', {
    token,
    payload: user('sec', { filesystem: s3({ access_secret: { status: 'Plain', payload: 'S3-NEW-PLAIN' } }) }),
  });
  t.equal(repl.statusCode, 200, repl.payload);
  t.same((await plainOptions('sec')).access_secret, 'S3-NEW-PLAIN');
  const cleared = await ta.inject('PUT', '/api/v2/users/sec', {
    token,
    payload: user('sec', { filesystem: s3({ access_secret: { status: 'Plain', payload: '' } }) }),
  });
  t.equal(cleared.statusCode, 400);
  t.match(ta.json(cleared).message, /access_secret is required when access_key is set/);
  const noKey = await ta.inject('PUT', '/api/v2/users/sec', {
    token,
    payload: user('sec', { filesystem: { provider: 1, s3config: { bucket: 'b', access_secret: { status: 'Plain', payload: '' } } } }),
  });
  t.equal(noKey.statusCode, 200);
  t.notOk(ta.json(await ta.inject('GET', '/api/v2/users/sec', { token })).filesystem.s3config.access_secret, 'cleared');
  // an encrypted form from another owner is accepted only because this server can decrypt it
  const copy = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: user('sec-copy', { filesystem: { provider: 1, s3config: { bucket: 'b', access_key: 'k', access_secret: enc } } }),
  });
  t.equal(copy.statusCode, 201, copy.payload);
  t.same((await plainOptions('sec-copy')).access_secret, 'S3-SECRET-PLAIN');
});

t.test('every secret field of a provider, strings included, is encrypted (users, groups, folders)', async (t) => {
  const sftp = {
    provider: 5,
    sftpconfig: {
      endpoint: 'sftp.example.test:22',
      username: 'remote',
      password: 'STRING-PASS-PLAIN',
      private_key: { status: 'Plain', payload: 'SFTP-KEY-PLAIN' },
      prefix: '/data/%custom1%',
    },
  };
  const u = await ta.inject('POST', '/api/v2/users', { token, payload: user('sftpu', { filesystem: sftp, custom_placeholders: ['team-x'] }) });
  t.equal(u.statusCode, 201, u.payload);
  t.same(ta.json(u).filesystem.sftpconfig.password, { status: 'AES-256-GCM' }, 'a cleartext string became an encrypted secret');
  const opts = await plainOptions('sftpu');
  t.equal(opts.password, 'STRING-PASS-PLAIN');
  t.equal(opts.private_key, 'SFTP-KEY-PLAIN');
  t.equal(opts.prefix, '/data/team-x');

  const cu = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: user('cryptu', { filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'CRYPT-PASS-PLAIN' } } } }),
  });
  t.equal(cu.statusCode, 201, cu.payload);
  const g = await ta.inject('POST', '/api/v2/groups?confidential_data=1', {
    token,
    payload: { name: 'sec-group', user_settings: { filesystem: s3({ access_secret: { status: 'Plain', payload: 'GROUP-S3-PLAIN' } }) } },
  });
  t.equal(g.statusCode, 201, g.payload);
  t.match(ta.json(g).user_settings.filesystem.s3config.access_secret, { status: 'AES-256-GCM', additional_data: 'sec-group' });
  t.same(ta.json(await ta.inject('GET', '/api/v2/groups/sec-group', { token })).user_settings.filesystem.s3config.access_secret, { status: 'AES-256-GCM' });
  const f = await ta.inject('POST', '/api/v2/folders', {
    token,
    payload: { name: 'sec-folder', filesystem: s3({ access_secret: { status: 'Plain', payload: 'FOLDER-S3-PLAIN' } }) },
  });
  t.equal(f.statusCode, 201, f.payload);
  t.same(ta.json(f).filesystem.s3config.access_secret, { status: 'AES-256-GCM' });
  // sending a group back unchanged keeps its secret
  const gread = ta.json(await ta.inject('GET', '/api/v2/groups/sec-group', { token }));
  t.equal((await ta.inject('PUT', '/api/v2/groups/sec-group', { token, payload: gread })).statusCode, 200);
  const stored = await ta.sql('select user_settings from groups where name = ?', ['sec-group']);
  const us = typeof stored[0]!.user_settings === 'string' ? JSON.parse(stored[0]!.user_settings as string) : stored[0]!.user_settings;
  const secrets = ta.app.container.resolve<import('../../src/secrets/secret.js').SecretsService>(Symbol.for('ferry.Secrets'));
  t.equal(await secrets.decrypt(us.filesystem.s3config.access_secret), 'GROUP-S3-PLAIN');
});

t.test('no plaintext secret in the database, in provider events or in responses', async (t) => {
  const tables = ['users', 'groups', 'folders'];
  const dump: string[] = [];
  for (const table of tables) dump.push(JSON.stringify(await ta.sql(`select * from ${table}`)));
  const all = dump.join('\n');
  t.ok(all.includes('AES-256-GCM'), 'secrets are there, encrypted');
  for (const p of PLAINTEXTS) t.notOk(all.includes(p), `${p} not in the database`);
  t.notOk(all.includes('-password"'), 'no cleartext password');
  const events = JSON.stringify(ta.events);
  t.ok(ta.events.length > 5);
  for (const p of PLAINTEXTS) t.notOk(events.includes(p), `${p} not in provider events`);
  t.notOk(/"payload"|"key":|argon2/.test(events), 'no encrypted payloads or hashes in provider events either');
  const list = await ta.inject('GET', '/api/v2/users?limit=500', { token });
  t.notOk(/"payload"/.test(list.payload), 'lists never show payloads');
  t.ok(fixture().created.every((c) => typeof c.options === 'object'));
});

t.test('no plaintext secret or password in the log, at the most verbose level', async (t) => {
  const file = path.join(tmpDir('ferry-log-'), 'ferry.log');
  const logger = createLogger({ level: 'trace', file });
  const la = await accountsApp({ logger });
  t.teardown(() => la.close());
  const tok = la.token;
  const must = async (method: string, url: string, payload?: unknown, status = 200) => {
    const r = await la.inject(method, url, { token: tok, payload });
    t.equal(r.statusCode, status, `${method} ${url}: ${r.payload.slice(0, 200)}`);
    return r;
  };
  const secret = (payload: string) => ({ status: 'Plain', payload });
  await must('POST', '/api/v2/folders', { name: 'log-folder', filesystem: s3({ access_secret: secret('LOG-FOLDER-PLAIN') }) }, 201);
  await must('PUT', '/api/v2/folders/log-folder', { name: 'log-folder', filesystem: s3({ access_secret: secret('LOG-FOLDER-PLAIN-2') }) });
  await must('POST', '/api/v2/groups', { name: 'log-group', user_settings: { filesystem: s3({ access_secret: secret('LOG-GROUP-PLAIN') }) } }, 201);
  await must('PUT', '/api/v2/groups/log-group', { name: 'log-group', user_settings: { filesystem: s3({ access_secret: secret('LOG-GROUP-PLAIN-2') }) } });
  const sftp = { provider: 5, sftpconfig: { endpoint: 'h:22', username: 'u', password: 'LOG-SFTP-PASS-PLAIN', private_key: secret('LOG-SFTP-KEY-PLAIN') } };
  await must('POST', '/api/v2/users', { ...user('log-u', { filesystem: sftp }), password: 'LOG-USER-PASSWORD-1' }, 201);
  await must('PUT', '/api/v2/users/log-u', {
    ...user('log-u', { filesystem: s3({ access_secret: secret('LOG-USER-S3-PLAIN') }) }),
    password: 'LOG-USER-PASSWORD-2',
  });
  await must('GET', '/api/v2/users/log-u?confidential_data=1');
  await must('GET', '/api/v2/dumpdata?output-data=1');
  // refusals: a validation error and a wrong password
  await must(
    'POST',
    '/api/v2/users',
    { ...user('log-bad', { filesystem: s3({ access_secret: secret('LOG-REFUSED-PLAIN'), bucket: '' }) }), password: 'LOG-REFUSED-PASSWORD' },
    400,
  );
  t.equal((await la.inject('GET', '/api/v2/user/token', { basic: { username: 'log-u', password: 'LOG-WRONG-PASSWORD' } })).statusCode, 401);
  const ut = await la.userToken('log-u', 'LOG-USER-PASSWORD-2');
  t.equal((await la.inject('GET', '/api/v2/user/profile', { token: ut })).statusCode, 200);
  await must('POST', '/api/v2/quotas/users/log-u/scan', undefined, 202);
  await la.app.container.resolve(QuotaScanService).idle();

  // the file is written asynchronously: a last line marks the end of everything logged before it
  logger.info('log capture complete');
  let log = '';
  for (let i = 0; i < 500 && !log.includes('log capture complete'); i++) {
    await new Promise((r) => setTimeout(r, 10));
    log = readFileSync(file, 'utf8');
  }
  t.match(log, /"path":"\/api\/v2\/users\/log-u"/, 'the requests were logged (the capture works)');
  t.match(log, /user quota scan done/);
  const plain = log.match(/LOG-[A-Z0-9-]*(PLAIN|PASSWORD)[A-Z0-9-]*/g);
  t.same(plain, null, 'no plaintext secret or password in the log');
  t.notMatch(log, /\$argon2/, 'no password hash');
  t.notMatch(log, new RegExp(tok), 'no admin token');
  t.notMatch(log, new RegExp(ut), 'no user token');
});
