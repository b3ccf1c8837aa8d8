// A third-party Ferry service plugin: a line-based TCP front-end. A client
// logs in with `user NAME PASSWORD` (Ferry's login service: account state,
// allow list, second factor, login events, defender scoring), then sends
// `ls PATH` or `mkdir PATH` against its file session (the user's permissions,
// filesystem events), and `quit`. Every answer ends with a line `OK ...` or
// `ERR reason`. Listed by GET /api/v2/connections while logged in, closed by
// DELETE /api/v2/connections/{id}.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import readline from 'node:readline';
import Joi from 'joi';

/** Checked against the accounts' denied_protocols and named by the events (see README.md for why FTP). */
const PROTOCOL = 'FTP';

const configSchema = Joi.object({
  address: Joi.string().default('127.0.0.1'),
  /** 0: any free port (GET /api/v2/status shows the one bound). */
  port: Joi.number().integer().min(0).max(65535).default(0),
});

/** @type {import('@ferry/core').PluginManifest<{address: string, port: number}>} */
export default {
  name: 'ferry-plugin-service-line',
  version: '1.0.0',
  apiVersion: 1,
  configSchema,
  register(ctx, config) {
    const core = ctx.host.services; // login, sessions, defender: resolved on first use
    const sockets = new Set();
    let server;
    let bound = null;

    async function serve(socket) {
      const ip = socket.remoteAddress ?? '';
      const gone = new AbortController();
      socket.on('close', () => gone.abort());
      socket.on('error', (err) => ctx.logger.debug({ err, ip }, 'client socket error'));
      const reply = (line) => socket.writable && socket.write(line + '\n');
      if (await core.defender.isBanned(ip, PROTOCOL)) return void socket.end('ERR your address is banned\n');
      let session = null;
      try {
        for await (const line of readline.createInterface({ input: socket, crlfDelay: Infinity })) {
          const [cmd = '', arg = '', ...rest] = line.trim().split(/\s+/);
          try {
            if (cmd === 'quit') return void socket.end('OK bye\n');
            if (cmd === 'user' && !session) {
              await core.login.authenticate({ username: arg, credential: { method: 'password', password: rest.join(' ') }, ip, protocol: PROTOCOL });
              session = await core.sessions.open({ username: arg, ip, protocol: PROTOCOL, sessionKey: randomUUID(), signal: gone.signal });
              // closed by an administrator (DELETE /api/v2/connections/{id}, from any node)
              session.signal.addEventListener('abort', () => socket.destroy(), { once: true });
              reply('OK logged in');
            } else if (!session) reply('ERR log in first: user NAME PASSWORD');
            else if (cmd === 'ls') {
              for await (const page of await session.list(arg || '/')) for (const e of page) reply(`${e.isDir ? 'd' : '-'} ${e.size} ${e.name}`);
              reply('OK');
            } else if (cmd === 'mkdir') reply((await session.mkdir(arg), 'OK'));
            else reply('ERR unknown command');
          } catch (err) {
            reply(`ERR ${err.message}`);
          }
        }
      } finally {
        await session?.close();
      }
    }

    ctx.registerService({
      name: 'lined',
      statusKey: 'line',
      async start() {
        server = net.createServer((socket) => {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          serve(socket).catch((err) => {
            ctx.logger.warn({ err }, 'client failed');
            socket.destroy();
          });
        });
        await new Promise((resolve, reject) => {
          server.once('error', reject);
          server.listen(config.port, config.address, resolve);
        });
        bound = server.address();
      },
      async stop({ signal }) {
        bound = null;
        // no new clients; the connected ones are told, and cut when the grace period is over
        const closed = new Promise((resolve) => server.close(resolve));
        for (const s of sockets) s.end('BYE the server is stopping\n');
        const cut = () => sockets.forEach((s) => s.destroy());
        signal.addEventListener('abort', cut, { once: true });
        await closed;
        signal.removeEventListener('abort', cut);
      },
      status() {
        return { is_active: bound !== null, bindings: bound && [{ address: bound.address, port: bound.port }] };
      },
    });
  },
};
