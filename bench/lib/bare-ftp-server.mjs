#!/usr/bin/env node
// The Node.js reference of bench/ftp.bench.mjs: the least FTP server that
// curl can store into and retrieve from, doing the same file work as Ferry's
// FTP service and nothing else, so the bench can tell Node's own ceiling
// (socket to file and back on the event loop) from Ferry's overhead.
//
//   node bench/lib/bare-ftp-server.mjs     (reads { root } on stdin)
//
// Plain FTP only, one passive data connection per transfer (EPSV or PASV),
// any USER/PASS accepted. STOR writes into a temporary file of the same
// directory and renames it into place on success (as Ferry's atomic uploads);
// RETR streams the file (fs.createReadStream). Paths are taken under `root`
// (no confinement beyond refusing ".."). Prints { port } once listening;
// stops on SIGTERM.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

let input = '';
for await (const d of process.stdin) input += d;
const { root } = JSON.parse(input);

function local(cwd, arg) {
  const rel = path.posix.resolve(cwd, arg);
  if (rel.split('/').includes('..')) throw new Error('bad path');
  return path.join(root, rel);
}

/** A passive listener for one data connection: resolves its port, then the socket. */
function passive() {
  const srv = net.createServer();
  const socket = new Promise((resolve, reject) => {
    srv.once('connection', (s) => {
      srv.close();
      resolve(s);
    });
    srv.once('error', reject);
  });
  socket.catch(() => undefined);
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve({ port: srv.address().port, socket })));
}

const server = net.createServer((control) => {
  control.setNoDelay(true);
  let cwd = '/';
  let data;
  let buffered = '';
  let queue = Promise.resolve();
  const reply = (line) => control.write(`${line}\r\n`);
  const commands = {
    USER: () => reply('331 any password'),
    PASS: () => reply('230 logged in'),
    PWD: () => reply(`257 "${cwd}"`),
    CWD: (arg) => {
      cwd = path.posix.resolve(cwd, arg);
      reply('250 ok');
    },
    TYPE: () => reply('200 ok'),
    EPSV: async () => {
      data = await passive();
      reply(`229 passive (|||${data.port}|)`);
    },
    PASV: async () => {
      data = await passive();
      reply(`227 passive (127,0,0,1,${data.port >> 8},${data.port & 255})`);
    },
    SIZE: async (arg) => reply(`213 ${(await stat(local(cwd, arg))).size}`),
    STOR: async (arg) => {
      const file = local(cwd, arg);
      const temp = path.join(path.dirname(file), `.${randomUUID()}.part`);
      const socket = await data.socket;
      reply('150 sending');
      try {
        await pipeline(socket, createWriteStream(temp));
        await rename(temp, file);
        reply('226 stored');
      } catch {
        await rm(temp, { force: true });
        reply('451 failed');
      }
    },
    RETR: async (arg) => {
      const socket = await data.socket;
      reply('150 sending');
      try {
        await pipeline(createReadStream(local(cwd, arg)), socket);
        reply('226 sent');
      } catch {
        reply('451 failed');
      }
    },
    QUIT: () => {
      reply('221 bye');
      control.end();
    },
  };
  control.on('data', (chunk) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).replace(/\r$/, '');
      buffered = buffered.slice(nl + 1);
      const [verb, ...rest] = line.split(' ');
      const run = commands[verb.toUpperCase()];
      queue = queue.then(() => (run ? run(rest.join(' ')) : reply('502 not here'))).catch(() => reply('550 failed'));
    }
  });
  control.on('error', () => undefined);
  reply('220 bare node ftp');
});

server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('SIGTERM', () => process.exit(0));
