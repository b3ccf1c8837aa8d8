import { randomBytes } from 'node:crypto';
import net from 'node:net';
import t from 'tap';
import * as openpgp from 'openpgp';
import { plainSecret } from '@ferry/testkit';
import { crypt, harness, local, s3, S3_ENDPOINT } from './helpers.js';

// PGP round trips on three real backends: what the action encrypts is
// decrypted by openpgp directly with the private key (or the password),
// and what openpgp encrypts directly is decrypted by the action; armored
// and binary; failures (wrong passphrase, wrong password, tampered data,
// not a PGP message) leave no target behind.

const s3Port = Number(new URL(S3_ENDPOINT).port);
const s3Up = await new Promise<boolean>((resolve) => {
  const sock = net.connect({ host: '127.0.0.1', port: s3Port }, () => (sock.destroy(), resolve(true)));
  sock.once('error', () => resolve(false));
});
if (!s3Up && process.env.CI === 'true') throw new Error(`s3rver is not listening on ${S3_ENDPOINT}: CI must start it (scripts/servers/up.sh)`);

const h = await harness();
t.teardown(() => h.close());

const PASSPHRASE = `key-pass-${randomBytes(6).toString('hex')}`;
const alice = await openpgp.generateKey({
  type: 'ecc',
  curve: 'curve25519Legacy',
  userIDs: [{ name: 'Alice', email: 'alice@example.com' }],
  passphrase: PASSPHRASE,
  format: 'armored',
});
const bob = await openpgp.generateKey({ type: 'rsa', rsaBits: 2048, userIDs: [{ name: 'Bob', email: 'bob@example.com' }], format: 'armored' });
const alicePriv = await openpgp.decryptKey({ privateKey: await openpgp.readPrivateKey({ armoredKey: alice.privateKey }), passphrase: PASSPHRASE });
const bobPriv = await openpgp.readPrivateKey({ armoredKey: bob.privateKey });

async function decryptDirect(data: Buffer, o: { key?: openpgp.PrivateKey; password?: string }): Promise<Buffer> {
  const armored = data.subarray(0, 30).toString('latin1').startsWith('-----BEGIN PGP MESSAGE');
  const message = armored
    ? await openpgp.readMessage({ armoredMessage: data.toString('utf8') })
    : await openpgp.readMessage({ binaryMessage: new Uint8Array(data) });
  const { data: out } = await openpgp.decrypt({
    message,
    format: 'binary',
    ...(o.key ? { decryptionKeys: o.key } : {}),
    ...(o.password ? { passwords: [o.password] } : {}),
  });
  return Buffer.from(out as Uint8Array);
}

async function encryptDirect(data: Buffer, o: { keys?: string[]; password?: string; armor: boolean }): Promise<Buffer> {
  const message = await openpgp.createMessage({ binary: new Uint8Array(data) });
  const encryptionKeys = o.keys ? await Promise.all(o.keys.map((k) => openpgp.readKey({ armoredKey: k }))) : undefined;
  const common = { message, ...(encryptionKeys ? { encryptionKeys } : {}), ...(o.password ? { passwords: [o.password] } : {}) };
  if (o.armor) return Buffer.from(await openpgp.encrypt({ ...common, format: 'armored' }));
  return Buffer.from(await openpgp.encrypt({ ...common, format: 'binary' }));
}

const backends = [
  { name: 'fs-local', fs: () => local },
  { name: 'fs-crypt', fs: () => crypt() },
  { name: 's3 (s3rver)', fs: () => s3(), skip: s3Up ? false : `s3rver is not listening on ${S3_ENDPOINT} (bash scripts/servers/start-s3.sh)` },
];

let n = 0;
for (const b of backends) {
  t.test(b.name, { skip: b.skip }, async (t) => {
    const U = `pgp-${n++}`;
    await h.user(U, b.fs());
    // larger than openpgp's and the backends' chunks, with a recognisable start
    const plain = Buffer.concat([Buffer.from('PLAINTEXT-MARKER '.repeat(100)), randomBytes(3 * 1024 * 1024 + 17)]);
    await h.put(U, '/in/data.bin', plain);

    await t.test('encrypt with two public keys, binary: each private key decrypts it', async (t) => {
      await h.run(
        U,
        { type: 7, pgp: { mode: 1, paths: [{ key: '/in/data.bin', value: '/enc/{{.ObjectName}}.pgp' }], public_keys: [alice.publicKey, bob.publicKey] } },
        { event: { virtual_path: '/in/data.bin' } },
      );
      const enc = await h.get(U, '/enc/data.bin.pgp');
      t.notOk(enc.includes(Buffer.from('PLAINTEXT-MARKER')), 'stored encrypted');
      t.ok(enc.length > plain.length, 'binary output');
      t.same(await decryptDirect(enc, { key: alicePriv }), plain, 'Alice decrypts it');
      t.same(await decryptDirect(enc, { key: bobPriv }), plain, 'Bob decrypts it');
    });

    await t.test('encrypt with a public key and a password, armored', async (t) => {
      const pw = `pw-${randomBytes(4).toString('hex')}`;
      await h.run(U, {
        type: 7,
        pgp: { mode: 1, paths: [{ key: '/in/data.bin', value: '/enc/data.asc' }], public_keys: [bob.publicKey], password: plainSecret(pw), armor: true },
      });
      const enc = await h.get(U, '/enc/data.asc');
      t.match(enc.subarray(0, 40).toString(), /^-----BEGIN PGP MESSAGE-----/);
      t.same(await decryptDirect(enc, { password: pw }), plain, 'the password decrypts it');
      t.same(await decryptDirect(enc, { key: bobPriv }), plain, 'the key decrypts it');
    });

    await t.test('decrypt with a protected private key + passphrase (binary and armored input)', async (t) => {
      await h.put(U, '/in/direct.pgp', await encryptDirect(plain, { keys: [alice.publicKey], armor: false }));
      await h.put(U, '/in/direct.asc', await encryptDirect(plain, { keys: [alice.publicKey], armor: true }));
      await h.run(U, {
        type: 7,
        pgp: {
          mode: 2,
          paths: [
            { key: '/in/direct.pgp', value: '/dec/from-binary.bin' },
            { key: '/in/direct.asc', value: '/dec/from-armored.bin' },
          ],
          private_key: plainSecret(alice.privateKey),
          passphrase: plainSecret(PASSPHRASE),
        },
      });
      t.same(await h.get(U, '/dec/from-binary.bin'), plain);
      t.same(await h.get(U, '/dec/from-armored.bin'), plain);
    });

    await t.test('decrypt with a password; the action decrypts what it encrypted', async (t) => {
      const pw = `pw-${randomBytes(4).toString('hex')}`;
      await h.put(U, '/in/sym.pgp', await encryptDirect(plain, { password: pw, armor: false }));
      await h.run(U, { type: 7, pgp: { mode: 2, paths: [{ key: '/in/sym.pgp', value: '/dec/sym.bin' }], password: plainSecret(pw) } });
      t.same(await h.get(U, '/dec/sym.bin'), plain);
      await h.run(U, { type: 7, pgp: { mode: 1, paths: [{ key: '/in/data.bin', value: '/rt/data.pgp' }], public_keys: [bob.publicKey] } });
      await h.run(U, { type: 7, pgp: { mode: 2, paths: [{ key: '/rt/data.pgp', value: '/rt/data.bin' }], private_key: plainSecret(bob.privateKey) } });
      t.same(await h.get(U, '/rt/data.bin'), plain, 'round trip through the action');
    });

    await t.test('failures leave no target', async (t) => {
      await t.rejects(
        h.run(U, {
          type: 7,
          pgp: {
            mode: 2,
            paths: [{ key: '/in/direct.pgp', value: '/fail/a.bin' }],
            private_key: plainSecret(alice.privateKey),
            passphrase: plainSecret('wrong'),
          },
        }),
        /cannot unlock it with the passphrase/,
      );
      await t.rejects(
        h.run(U, { type: 7, pgp: { mode: 2, paths: [{ key: '/in/direct.pgp', value: '/fail/a.bin' }], private_key: plainSecret(alice.privateKey) } }),
        /protected by a passphrase and no passphrase is set/,
      );
      await t.rejects(
        h.run(U, { type: 7, pgp: { mode: 2, paths: [{ key: '/in/sym.pgp', value: '/fail/b.bin' }], password: plainSecret('wrong-password') } }),
        /pgp decrypt \/in\/sym\.pgp -> \/fail\/b\.bin/,
      );
      await t.rejects(
        h.run(U, { type: 7, pgp: { mode: 2, paths: [{ key: '/in/data.bin', value: '/fail/c.bin' }], password: plainSecret('x') } }),
        /pgp decrypt/,
      );
      // a flipped byte deep in the data: the integrity check at the end fails the stream, the write is aborted
      const tampered = await h.get(U, '/rt/data.pgp');
      tampered[tampered.length - 5000] ^= 0xff;
      await h.put(U, '/in/tampered.pgp', tampered);
      await t.rejects(
        h.run(U, { type: 7, pgp: { mode: 2, paths: [{ key: '/in/tampered.pgp', value: '/fail/d.bin' }], private_key: plainSecret(bob.privateKey) } }),
        /pgp decrypt/,
      );
      await t.rejects(
        h.run(U, { type: 7, pgp: { mode: 1, paths: [{ key: '/in/missing', value: '/fail/e.pgp' }], public_keys: [bob.publicKey] } }),
        /no such file/,
      );
      t.same(await h.tree(U, '/fail'), [], 'nothing written under /fail');
    });
  });
}
