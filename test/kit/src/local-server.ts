import type net from 'node:net';

/** Listens on a free port of 127.0.0.1 and resolves with the port. */
export async function listenOnLoopback(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

/** Closes a server (connections already ended or destroyed by the caller). */
export function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A test server on 127.0.0.1: start() listens on a free port, `endpoint` is its base URL. */
export abstract class LoopbackServer {
  port = 0;
  protected abstract readonly server: net.Server;

  async start(): Promise<this> {
    this.port = await listenOnLoopback(this.server);
    return this;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }
}
