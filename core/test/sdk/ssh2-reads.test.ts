import t from 'tap';
import type { Test } from 'tap';
import { once } from 'node:events';
import crypto from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadSsh2, pooledSshPackets } from '../../src/sdk/ssh2-module.js';
import { payloadTrackers, sshPayloadCopied } from '../../src/sdk/ssh2-packets.js';
import { SSH_READ_BYTES, sshReadBuffers, sshReadCounts, withSshReads } from '../../src/sdk/ssh2-reads.js';
import { generateSshKeyPair } from '../../src/sdk/ssh-keys.js';
import { acceptTestLogin, uploadToTake } from '../helpers/ssh2-upload.js';

// An SSH connection's socket read into reused buffers (core/src/sdk/ssh2-reads.ts):
// a buffer is read into again only when nothing can hold a view of what was
// read into it before, so what the server's consumers receive is what the
// client sent, whatever they keep, a rekey in the middle, a paused socket.

/** Listens on 127.0.0.1; each accepted socket (paused on connect) goes to `onSocket`. */
async function listen(t: Test, onSocket: (s: net.Socket) => void): Promise<number> {
  const srv = net.createServer({ pauseOnConnect: true }, onSocket);
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => srv.close());
  return (srv.address() as net.AddressInfo).port;
}

/**
 * An ssh2 server on TCP whose sockets read through withSshReads and whose
 * connections are pooled: its `take copy` command copies what it receives
 * and declares it copied, `take hold` keeps the views it was given.
 * `rekeyAt`: the server starts a rekey once that many bytes arrived.
 */
async function dataServer(t: Test, algorithms?: Record<string, string[]>, rekeyAt?: number) {
  const ssh2 = loadSsh2().module;
  const hostKey = generateSshKeyPair('ed25519').private;
  const received: Buffer[] = [];
  let rekeys = 0;
  const server = new ssh2.Server({ hostKeys: [hostKey], ...(algorithms ? { algorithms } : {}) }, (conn) => {
    pooledSshPackets(conn, (conn as unknown as { _sock: net.Socket })._sock);
    acceptTestLogin(conn);
    conn.on('rekey', () => rekeys++);
    conn.on('session', (accept) => {
      accept().once('exec', (acceptExec, _reject, info) => {
        const ch = acceptExec();
        const copy = info.command === 'take copy';
        let got = 0;
        let rekeyed = false;
        ch.on('data', (d: Buffer) => {
          if (copy) {
            received.push(Buffer.from(d));
            sshPayloadCopied(d);
          } else received.push(d);
          got += d.length;
          if (rekeyAt !== undefined && !rekeyed && got >= rekeyAt) {
            rekeyed = true;
            conn.rekey();
          }
        });
        ch.on('end', () => {
          ch.exit(0);
          ch.end();
        });
      });
    });
  });
  const port = await listen(t, (s) => server.injectSocket(withSshReads(s)));
  return { port, received, rekeys: () => rekeys };
}

/** Sends `data` to the server's `take <mode>` command on 127.0.0.1:`port`. */
const upload = (port: number, mode: 'copy' | 'hold', data: Buffer, algorithms?: Record<string, string[]>) =>
  uploadToTake({ host: '127.0.0.1', port }, mode, data, algorithms);

const counts = () => ({ ...sshReadCounts });
const since = (before: typeof sshReadCounts) => ({
  inPlace: sshReadCounts.inPlace - before.inPlace,
  copied: sshReadCounts.copied - before.copied,
  left: sshReadCounts.left - before.left,
});

for (const cipher of ['aes128-gcm@openssh.com', 'chacha20-poly1305@openssh.com']) {
  t.test(`${cipher}: reads declared copied go to one buffer read into again; kept views keep their bytes`, async (t) => {
    const algorithms = { cipher: [cipher] };
    const data = crypto.randomBytes(16 * 1024 * 1024 + 77);

    const server = await dataServer(t, algorithms);
    const before = counts();
    await upload(server.port, 'copy', data, algorithms);
    const copied = since(before);
    t.ok(Buffer.concat(server.received).equals(data), 'copied by the consumer: every byte arrived in order');
    t.ok(copied.inPlace > 20, `reads in a buffer read into again (${JSON.stringify(copied)})`);

    const holder = await dataServer(t, algorithms);
    const mid = counts();
    await upload(holder.port, 'hold', data, algorithms);
    const held = since(mid);
    t.ok(Buffer.concat(holder.received).equals(data), 'views kept by the consumer still hold their bytes');
    // (a read whose bytes all went to a packet spanning into the next read delivered nothing: read into again)
    t.ok(held.left > held.inPlace, `the buffers read into were left to their holders (${JSON.stringify(held)})`);
  });
}

t.test('a rekey in the middle of the upload: the key exchange is read from copies, the bytes arrive whole', async (t) => {
  const data = crypto.randomBytes(24 * 1024 * 1024);
  const server = await dataServer(t, undefined, 8 * 1024 * 1024);
  const before = counts();
  await upload(server.port, 'copy', data);
  t.equal(server.rekeys(), 1, 'the server rekeyed');
  t.ok(Buffer.concat(server.received).equals(data), 'every byte arrived in order');
  t.ok(since(before).inPlace > 20, `reads in place before and after the rekey (${JSON.stringify(since(before))})`);
});

t.test('a cipher ssh2 does not decrypt in place (aes128-ctr): every read copied out', async (t) => {
  const algorithms = { cipher: ['aes128-ctr'] };
  const data = crypto.randomBytes(4 * 1024 * 1024);
  const server = await dataServer(t, algorithms);
  const before = counts();
  await upload(server.port, 'copy', data, algorithms);
  t.ok(Buffer.concat(server.received).equals(data), 'every byte arrived');
  t.equal(since(before).inPlace, 0, 'no read in place');
});

t.test('a paused socket keeps a read in its buffer: that buffer is not read into again', async (t) => {
  const sent = crypto.randomBytes(24 * 1024 * 1024);
  const first = 4 * 1024 * 1024;
  let socket!: net.Socket;
  let client!: net.Socket;
  await new Promise<void>((resolve) => {
    void listen(t, (s) => {
      socket = withSshReads(s);
      // a readable side that takes whole reads while nobody reads it (a socket's is full at 16 KiB, which stops the reads)
      (socket as unknown as { _readableState: { highWaterMark: number } })._readableState.highWaterMark = 64 * 1024 * 1024;
      // as a connection whose decipher holds nothing and whose payloads all pass through the tracker
      payloadTrackers.get(socket)!.attach(() => null);
      resolve();
    }).then((port) => {
      client = net.connect(port, '127.0.0.1', () => client.write(sent.subarray(0, first)));
      t.teardown(() => client.destroy());
    });
  });
  const before = counts();
  // not flowing: what is read waits in the readable side
  await sleep(300);
  const paused = since(before);
  const tracker = payloadTrackers.get(socket)!;
  (socket as unknown as { _readableState: { highWaterMark: number } })._readableState.highWaterMark = 16 * 1024;
  const parts: Buffer[] = [];
  socket.on('data', (d: Buffer) => {
    // a view of the buffer being read into is copied (as a consumer declaring its copies does); any other is kept as it is
    parts.push(d.buffer === tracker.memory ? Buffer.from(d) : d);
  });
  client.end(sent.subarray(first));
  await once(socket, 'end');
  const got = Buffer.concat(parts);
  t.equal(got.length, sent.length, 'every byte read');
  t.ok(got.equals(sent), 'in order, none overwritten by a later read');
  t.ok(paused.left > 0 && paused.inPlace === 0, `while paused, each buffer read into was left to the readable side (${JSON.stringify(paused)})`);
  const c = since(before);
  t.ok(c.inPlace > paused.inPlace, `reads delivered at once (flowing) went in place (${JSON.stringify(c)})`);
});

for (const held of ['a view of it', 'payloads that bypass the tracker'] as const) {
  t.test(`a decipher that holds ${held} after a read: the buffer is not read into again`, async (t) => {
    const sent = crypto.randomBytes(8 * 1024 * 1024);
    let socket!: net.Socket;
    let taken = false;
    await new Promise<void>((resolve) => {
      void listen(t, (s) => {
        socket = withSshReads(s);
        const tracker = payloadTrackers.get(socket)!;
        // until the connection reads into a buffer of its own, a decipher that holds nothing; then the state named
        tracker.attach(() => {
          if (!taken) return null;
          return held === 'a view of it' ? (tracker.memory ?? null) : false;
        });
        resolve();
      }).then((port) => {
        const client = net.connect(port, '127.0.0.1', () => client.end(sent));
        t.teardown(() => client.destroy());
      });
    });
    const tracker = payloadTrackers.get(socket)!;
    const before = counts();
    const parts: Buffer[] = [];
    socket.on('data', (d: Buffer) => {
      taken ||= d.buffer === tracker.memory;
      parts.push(d);
    });
    await once(socket, 'end');
    t.ok(Buffer.concat(parts).equals(sent), 'every byte kept as read, in order');
    const c = since(before);
    t.ok(taken, 'the connection took a buffer of its own');
    t.equal(c.inPlace, 0, `never read into again (${JSON.stringify(c)})`);
    t.ok(c.left > 0, 'left to the decipher');
  });
}

t.test('a connection gives its buffer back when it closes', async (t) => {
  const sent = crypto.randomBytes(4 * 1024 * 1024);
  let socket!: net.Socket;
  await new Promise<void>((resolve) => {
    void listen(t, (s) => {
      socket = withSshReads(s);
      payloadTrackers.get(socket)!.attach(() => null);
      resolve();
    }).then((port) => {
      const client = net.connect(port, '127.0.0.1', () => client.write(sent));
      t.teardown(() => client.destroy());
    });
  });
  const tracker = payloadTrackers.get(socket)!;
  let got = 0;
  socket.on('data', (d: Buffer) => (got += d.length));
  while (got < sent.length) await sleep(10);
  t.ok(tracker.memory, 'the connection reads into a buffer of its own');
  t.equal(tracker.memory!.byteLength, SSH_READ_BYTES);
  const lent = sshReadBuffers.outstanding;
  const free = sshReadBuffers.held;
  socket.destroy();
  await once(socket, 'close');
  t.equal(sshReadBuffers.outstanding, lent - 1, 'no longer lent');
  t.equal(sshReadBuffers.held, free + 1, 'free for the next connection');
  t.equal(tracker.memory, undefined);
});
