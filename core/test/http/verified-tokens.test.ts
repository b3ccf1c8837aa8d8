import t from 'tap';
import { createSecretKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { VerifiedTokens } from '../../src/http/verified-tokens.js';

// VerifiedTokens (core/src/http/verified-tokens.ts): a token's signature is
// checked once, its time claims on every use, and what is kept is bounded.

const secret = 'verified-tokens-test-key';
const key = createSecretKey(Buffer.from(secret));
const sign = (c: Record<string, unknown>, k = secret) => jwt.sign(c, k, { algorithm: 'HS256', noTimestamp: true });
const now = Date.parse('2026-12-07T00:00:00Z');
const s = Math.floor(now / 1000);

t.test('claims of a good token, remembered; each caller gets its own object', async (t) => {
  const v = new VerifiedTokens(key, { algorithms: ['HS256'], audience: 'user' });
  const token = sign({ sub: 'u', aud: 'user', jti: 'j', exp: s + 60 });
  const a = v.claims(token, now);
  t.match(a, { sub: 'u', aud: 'user', jti: 'j', exp: s + 60 });
  a.sub = 'changed';
  const b = v.claims(token, now + 1000);
  t.equal(b.sub, 'u', "a caller's change does not reach the next");
  t.equal(v.size, 1);
});

t.test('refusals are jsonwebtoken errors, and nothing refused is kept', async (t) => {
  const v = new VerifiedTokens(key, { algorithms: ['HS256'], audience: 'user' });
  t.throws(() => v.claims(sign({ aud: 'user', exp: s + 60 }, 'other-key'), now), { message: 'invalid signature' });
  t.throws(() => v.claims(sign({ aud: 'admin', exp: s + 60 }), now), { message: /jwt audience invalid/ });
  t.throws(() => v.claims(sign({ aud: 'user', exp: s - 1 }), now), { name: 'TokenExpiredError', message: 'jwt expired' });
  t.throws(() => v.claims(sign({ aud: 'user', nbf: s + 60 }), now), { name: 'NotBeforeError' });
  t.throws(() => v.claims('a.b.c', now), { name: 'JsonWebTokenError' });
  t.equal(v.size, 0);
});

t.test('time claims are looked at on every use', async (t) => {
  const v = new VerifiedTokens(key, { algorithms: ['HS256'], audience: 'user' });
  const token = sign({ aud: 'user', exp: s + 60 });
  v.claims(token, now);
  t.ok(v.claims(token, (s + 59) * 1000), 'a second before its expiry');
  t.throws(() => v.claims(token, (s + 60) * 1000), { name: 'TokenExpiredError' }, 'expired once remembered');
  t.equal(v.size, 0, 'and forgotten');
  const later = sign({ aud: 'user', nbf: s + 10, exp: s + 60 });
  v.claims(later, (s + 10) * 1000);
  t.throws(() => v.claims(later, (s + 9) * 1000), { name: 'NotBeforeError' }, 'not before is checked again too');
});

t.test('at most `max` tokens kept, the oldest forgotten first', async (t) => {
  const v = new VerifiedTokens(key, { algorithms: ['HS256'], audience: 'user' }, 3);
  const tokens = [1, 2, 3, 4].map((i) => sign({ aud: 'user', jti: String(i), exp: s + 60 }));
  for (const tk of tokens) v.claims(tk, now);
  t.equal(v.size, 3);
});
