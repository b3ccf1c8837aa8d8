import net from 'node:net';
import { createPgDatabase } from '../../src/testing.js';

/**
 * A TCP relay to PostgreSQL on 127.0.0.1:5432 for database outage tests: a test
 * app connects through it; `cut()` resets every connection and stops listening
 * (the shared server is never stopped), `start()` again restores it on the same
 * port, and `dropNext()` cuts the connection that sends a given statement.
 */
export class PgRelay {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  /** When set, the next client message whose bytes match it cuts its connection instead of reaching PostgreSQL. */
  private dropWhen?: RegExp;
  /** Connections cut by dropWhen. */
  dropped = 0;

  /** Cuts the connection that sends the next statement matching `re` (the statement never reaches the server). */
  dropNext(re: RegExp): void {
    this.dropWhen = re;
  }

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(5432, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => this.sockets.delete(s));
      }
      client.on('data', (chunk: Buffer) => {
        if (this.dropWhen?.test(chunk.toString('latin1'))) {
          this.dropWhen = undefined;
          this.dropped++;
          client.destroy();
          upstream.destroy();
          return;
        }
        if (!upstream.write(chunk)) client.pause();
      });
      upstream.on('drain', () => client.resume());
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

/**
 * A fresh PostgreSQL database reached through a started PgRelay, both undone
 * by `teardown` (tap's t.teardown): the relay and the database URL through it.
 */
export async function pgBehindRelay(teardown: (fn: () => unknown) => void): Promise<{ relay: PgRelay; url: string }> {
  const db = await createPgDatabase();
  teardown(() => db.drop());
  const relay = new PgRelay();
  await relay.start();
  teardown(() => relay.cut());
  const url = new URL(db.url);
  url.port = String(relay.port);
  return { relay, url: url.toString() };
}
