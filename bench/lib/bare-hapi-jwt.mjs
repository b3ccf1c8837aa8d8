// The JWT check of the bare Hapi baselines (bench/lib/bare-jwt-server.mjs,
// bench/lib/bare-files-server.mjs): the same as Ferry's bearer strategies
// (hapi-auth-jwt2, HS256 with a secret KeyObject, the audience of the token
// kind), nothing else: no revocation, no account checks.
import { createSecretKey } from 'node:crypto';
import Hapi from '@hapi/hapi';
import * as HapiJwt from 'hapi-auth-jwt2';

/** A Hapi server on a free port of 127.0.0.1 with the strategy 'jwt' for tokens of `audience`. */
export async function bareHapiWithJwt(key, audience) {
  const server = Hapi.server({ host: '127.0.0.1', port: 0 });
  await server.register(HapiJwt);
  server.auth.strategy('jwt', 'jwt', {
    // a KeyObject, as Ferry gives it (a string is first tried as a PEM public key on every verification)
    key: createSecretKey(Buffer.from(key)),
    tokenType: 'Bearer',
    urlKey: false,
    cookieKey: false,
    verifyOptions: { algorithms: ['HS256'], audience },
    validate: async (decoded) => ({ isValid: decoded.aud === audience && typeof decoded.jti === 'string' }),
  });
  return server;
}
