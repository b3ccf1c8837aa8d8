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
import { bareHapiWithJwt } from './bare-hapi-jwt.mjs';

let input = '';
for await (const d of process.stdin) input += d;
const { key, bodies } = JSON.parse(input);

const server = await bareHapiWithJwt(key, 'admin');
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
