import t from 'tap';
import { LocalSecretsService } from '../../src/secrets/local-secrets.js';

const svc = new LocalSecretsService('a master key of enough bytes');

t.test('round trip, with and without additional data', async (t) => {
  const a = await svc.encrypt('s3cret');
  t.equal(a.status, 'AES-256-GCM');
  t.notMatch(JSON.stringify(a), /s3cret/, 'the plaintext is not stored');
  t.equal(await svc.decrypt(a), 's3cret');
  t.equal(await svc.decrypt(a), 's3cret', 'twice (the data key kept)');
  const b = await svc.encrypt('with aad', 'user:alice');
  t.equal(await svc.decrypt(b), 'with aad');
  await t.rejects(svc.decrypt({ ...b, additional_data: 'user:bob' }), 'other additional data: refused');
});

t.test('more secrets than data keys kept: every one still decrypts', async (t) => {
  const secrets = await Promise.all(Array.from({ length: 1100 }, (_, i) => svc.encrypt(`value ${i}`)));
  // a fresh service (nothing kept) and the warm one agree
  const cold = new LocalSecretsService('a master key of enough bytes');
  for (const i of [0, 1, 500, 1099]) {
    t.equal(await svc.decrypt(secrets[i]!), `value ${i}`);
    t.equal(await cold.decrypt(secrets[i]!), `value ${i}`);
  }
});

t.test('another master key or a changed payload is refused', async (t) => {
  const s = await svc.encrypt('payload');
  await t.rejects(new LocalSecretsService('another master key, long enough').decrypt(s));
  const buf = Buffer.from(s.payload!, 'base64');
  buf[14] = buf[14]! ^ 1;
  await t.rejects(svc.decrypt({ ...s, payload: buf.toString('base64') }));
  await t.rejects(svc.decrypt({ ...s, key: Buffer.alloc(16).toString('base64') }), 'another salt: another data key');
});
