#!/usr/bin/env node
// A bare Hapi server, the reference of bench/api-throughput.bench.mjs for
// "what an authenticated JSON route costs at least": the same JWT check as
// Ferry's bearer strategies (hapi-auth-jwt2, HS256 with a secret KeyObject, audience "admin"), then
// the answer, an object serialised by Hapi on every request. No database, no
// revocation or account checks, no logging.
//
//   node bench/lib/bare-jwt-server.mjs      (reads { key, bodies: { "<path>": object } } on stdin)
//
// GET <path> answers bodies[<path>] (the path without its query string is
// looked up too); prints { port } once listening; stops on SIGTERM.
import { createSecretKey } from 'node:crypto';
import Hapi from '@hapi/hapi';
import * as HapiJwt from 'hapi-auth-jwt2';

let input = '';
for await (const d of process.stdin) input += d;
const { key, bodies } = JSON.parse(input);

const server = Hapi.server({ host: '127.0.0.1', port: 0 });
await server.register(HapiJwt);
server.auth.strategy('jwt', 'jwt', {
  // a KeyObject, as Ferry gives it (a string is first tried as a PEM public key on every verification)
  key: createSecretKey(Buffer.from(key)),
  tokenType: 'Bearer',
  urlKey: false,
  cookieKey: false,
  verifyOptions: { algorithms: ['HS256'], audience: 'admin' },
  validate: async (decoded) => ({ isValid: decoded.aud === 'admin' && typeof decoded.jti === 'string' }),
});
server.route({
  method: 'GET',
  path: '/{any*}',
  options: { auth: 'jwt' },
  handler: (request, h) => {
    const body = bodies[request.url.pathname + request.url.search] ?? bodies[request.url.pathname];
    return body === undefined ? h.response({ message: 'no such path', error: 'Not Found' }).code(404) : body;
  },
});
await server.start();
process.stdout.write(JSON.stringify({ port: server.info.port }) + '\n');
process.on('SIGTERM', () => server.stop({ timeout: 1000 }).then(() => process.exit(0)));
