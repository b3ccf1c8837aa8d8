import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import * as openpgp from 'openpgp';
import { harness, local } from './helpers.js';

// Through the REST API of a server loading the plugin: every sub-type is
// accepted by POST /api/v2/eventactions, bad options are 400s naming the
// field, secrets are stored encrypted and rendered redacted; and rules run
// the action on uploads (sync), where the action's own writes fire no event
// (a rule copying every upload does not loop).

const h = await harness();
t.teardown(() => h.close());
const { ta, admin } = h;
const q = encodeURIComponent;
const post = (name: string, fs_config: unknown) =>
  ta.inject('POST', '/api/v2/eventactions', { token: admin, payload: { name, type: 9, options: { fs_config } } });

const keys = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'Ops', email: 'ops@example.com' }], format: 'armored' });

const valid: Record<string, Record<string, unknown>> = {
  rename: { type: 1, renames: [{ key: '/in/{{.ObjectName}}', value: '/done/{{.ObjectName}}', update_modtime: true }] },
  delete: { type: 2, deletes: ['/tmp/', '/old'] },
  mkdirs: { type: 3, mkdirs: ['/a/b'] },
  exist: { type: 4, exist: ['{{.VirtualPath}}'] },
  compress: { type: 5, compress: { name: '/archives/{{.UID}}.zip', paths: ['/in', '/other.txt'] } },
  copy: { type: 6, copy: [{ key: '{{.VirtualPath}}', value: '/backup{{.VirtualPath}}' }] },
  'pgp-encrypt': {
    type: 7,
    pgp: {
      mode: 1,
      paths: [{ key: '{{.VirtualPath}}', value: '/enc/{{.ObjectName}}.pgp' }],
      public_keys: [keys.publicKey],
      password: { status: 'Plain', payload: 'sym-pass' },
      armor: true,
    },
  },
  'pgp-decrypt': {
    type: 7,
    pgp: {
      mode: 2,
      paths: [{ key: '/enc/a.pgp', value: '/dec/a' }],
      private_key: { status: 'Plain', payload: keys.privateKey },
      passphrase: { status: 'Plain', payload: 'pp' },
    },
  },
  'metadata-check': { type: 8, metadata_check: { paths: ['{{.VirtualPath}}'], max_size: 1000, metadata: [{ key: 'scan', value: 'clean' }] } },
  decompress: { type: 9, decompress: { name: '{{.VirtualPath}}', target: '/unzipped/{{.ObjectName}}', overwrite: 3, max_entries: 100 } },
};

t.test('each sub-type is accepted and stored', async (t) => {
  for (const [name, cfg] of Object.entries(valid)) {
    const r = await post(`fs-${name}`, cfg);
    t.equal(r.statusCode, 201, `${name}: ${r.payload}`);
  }
  const r = await ta.inject('GET', '/api/v2/eventactions/fs-decompress', { token: admin });
  const fsc = (r.result as { options: { fs_config: Record<string, unknown> } }).options.fs_config;
  t.same(
    fsc,
    {
      type: 9,
      timeout: 0,
      decompress: { name: '{{.VirtualPath}}', target: '/unzipped/{{.ObjectName}}', overwrite: 3, max_entries: 100, max_size: 1024 ** 3, max_ratio: 100 },
    },
    'defaults filled in, other members dropped',
  );
  const enc = await ta.inject('GET', '/api/v2/eventactions/fs-pgp-decrypt', { token: admin });
  const pgp = (enc.result as { options: { fs_config: { pgp: Record<string, { status: string; payload?: string }> } } }).options.fs_config.pgp;
  t.not(pgp.private_key!.status, 'Plain', 'the private key is stored as a secret');
  t.notOk(enc.payload.includes('PRIVATE KEY BLOCK'), 'and never rendered');
  t.notOk(enc.payload.includes('"pp"'));
  const stripped = await post('fs-strip', { type: 3, mkdirs: ['/x'], deletes: ['/y'], exist: ['/z'] });
  t.equal(stripped.statusCode, 201, 'members of other sub-types are dropped');
  const s = await ta.inject('GET', '/api/v2/eventactions/fs-strip', { token: admin });
  t.same((s.result as { options: { fs_config: unknown } }).options.fs_config, { type: 3, timeout: 0, mkdirs: ['/x'] });
});

t.test('bad options are 400s naming the field', async (t) => {
  const bad: [unknown, RegExp][] = [
    [{ type: 10 }, /"type" must be 1 \(rename\), 2 \(delete\).*9 \(decompress\)/],
    [{ type: 1 }, /"renames" is required for type 1 \(rename\)/],
    [{ type: 9, mkdirs: ['/x'] }, /"decompress" is required for type 9 \(decompress\)/],
    [{ type: 1, renames: [{ key: '/a' }] }, /"renames\[0\]\.value" is required/],
    [{ type: 2, deletes: [] }, /"deletes" must contain at least 1 items/],
    [{ type: 5, compress: { paths: ['/a'] } }, /"compress\.name" is required/],
    [{ type: 7, pgp: { mode: 3, paths: [{ key: '/a', value: '/b' }] } }, /"pgp\.mode" must be 1 \(encrypt\) or 2 \(decrypt\)/],
    [{ type: 7, pgp: { mode: 1, paths: [{ key: '/a', value: '/b' }] } }, /"pgp": encryption needs public_keys, a password or both/],
    [
      { type: 7, pgp: { mode: 1, paths: [{ key: '/a', value: '/b' }], public_keys: ['not a key'] } },
      /"pgp\.public_keys\[0\]" must be an ASCII-armored public key block/,
    ],
    [{ type: 7, pgp: { mode: 2, paths: [{ key: '/a', value: '/b' }] } }, /decryption needs a private_key \(with its passphrase\) or a password/],
    [{ type: 7, pgp: { mode: 2, paths: [{ key: '/a', value: '/b' }], password: 'plain-string' } }, /"pgp\.password" must be of type object/],
    [
      { type: 7, pgp: { mode: 2, paths: [{ key: '/a', value: '/b' }], password: { status: 'Plain', payload: 'x' }, public_keys: [keys.publicKey] } },
      /public_keys are for encryption/,
    ],
    [{ type: 8, metadata_check: { paths: ['/a'] } }, /"metadata_check" has no condition/],
    [{ type: 8, metadata_check: { paths: ['/a'], min_size: 10, max_size: 5 } }, /min_size is greater than max_size/],
    [{ type: 8, metadata_check: { paths: ['/a'], metadata: [{ key: 'k', condition: 7 }] } }, /"metadata_check\.metadata\[0\]\.condition" must be 1 \(equals\)/],
    [{ type: 9, decompress: { name: '/a.zip', target: '/x', max_ratio: 0 } }, /"decompress\.max_ratio" must be greater than or equal to 1/],
    [{ type: 9, decompress: { name: '/a.zip', target: '/x', overwrite: 4 } }, /"decompress\.overwrite" must be 1 \(fail\), 2 \(replace\) or 3 \(skip\)/],
    [{ type: 9, decompress: { name: '/a.zip', target: '/x', max_entries: 2_000_000 } }, /"decompress\.max_entries" must be less than or equal to 1000000/],
    [{ type: 4, exist: ['{{.Name'] }, /options\.fs_config\.exist\[0\]: invalid template/],
    [{ type: 4, exist: ['/a'], timeout: -1 }, /"timeout" must be greater than or equal to 0/],
  ];
  for (const [i, [cfg, msg]] of bad.entries()) {
    const r = await post(`bad-${i}`, cfg);
    t.equal(r.statusCode, 400, JSON.stringify(cfg));
    t.match((r.result as { message: string }).message, /options\.fs_config/, 'the message names fs_config');
    t.match((r.result as { message: string }).message, msg);
  }
});

t.test('rules on uploads: PGP-encrypt *.csv then delete the original; a copy-every-upload rule does not loop', async (t) => {
  const home = await h.user('web', local, { permissions: { '/': ['*'] } });
  const token = await ta.userToken('web', 'web-password-1');
  const mk = async (name: string, fs_config: unknown) => t.equal((await post(name, fs_config)).statusCode, 201);
  await mk('enc-csv', {
    type: 7,
    pgp: { mode: 1, paths: [{ key: '{{.VirtualPath}}', value: '/encrypted/{{.ObjectName}}.pgp' }], public_keys: [keys.publicKey] },
  });
  await mk('rm-csv', { type: 2, deletes: ['{{.VirtualPath}}'] });
  await mk('copy-all', { type: 6, copy: [{ key: '{{.VirtualPath}}', value: '/copies/{{.ObjectName}}.copy' }] });
  const rule = (name: string, actions: string[], paths: string[]) =>
    ta.inject('POST', '/api/v2/eventrules', {
      token: admin,
      payload: {
        name,
        status: 1,
        trigger: 1,
        conditions: { fs_events: ['upload'], options: { fs_paths: paths.map((pattern) => ({ pattern })) } },
        actions: actions.map((a, i) => ({ name: a, order: i + 1, relation_options: { execute_sync: true, stop_on_failure: true } })),
      },
    });
  t.equal((await rule('csv', ['enc-csv', 'rm-csv'], ['/in/*.csv'])).statusCode, 201);
  t.equal((await rule('copy', ['copy-all'], ['/*', '/*/*'])).statusCode, 201);

  const body = Buffer.from(`id,amount\n${randomBytes(8).toString('hex')},42\n`);
  const up = await ta.inject('POST', `/api/v2/user/files/upload?path=${q('/in/report.csv')}&mkdir_parents=true`, {
    token,
    payload: body,
    headers: { 'content-type': 'application/octet-stream' },
  });
  t.ok(up.statusCode < 300, `upload: ${up.statusCode} ${up.payload}`);
  t.notOk(existsSync(path.join(home, 'in/report.csv')), 'the original is deleted');
  const enc = readFileSync(path.join(home, 'encrypted/report.csv.pgp'));
  const priv = await openpgp.readPrivateKey({ armoredKey: keys.privateKey });
  const { data } = await openpgp.decrypt({
    message: await openpgp.readMessage({ binaryMessage: new Uint8Array(enc) }),
    decryptionKeys: priv,
    format: 'binary',
  });
  t.same(Buffer.from(data as Uint8Array), body, 'the encrypted file decrypts to the upload');

  const up2 = await ta.inject('POST', `/api/v2/user/files/upload?path=${q('/note.txt')}`, {
    token,
    payload: 'hello',
    headers: { 'content-type': 'application/octet-stream' },
  });
  t.ok(up2.statusCode < 300, `upload: ${up2.payload}`);
  await sleep(500);
  t.same(readdirSync(path.join(home, 'copies')).sort(), ['note.txt.copy', 'report.csv.copy'].filter((n) => existsSync(path.join(home, 'copies', n))).sort());
  t.ok(existsSync(path.join(home, 'copies/note.txt.copy')), 'the upload was copied');
  t.notOk(
    readdirSync(path.join(home, 'copies')).some((n) => n.endsWith('.copy.copy')),
    'the copy fired no upload event (no loop)',
  );
});
