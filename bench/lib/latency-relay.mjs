// A TCP relay that adds network latency: every byte crossing it, in either
// direction, is passed on `oneWayMs` after it arrived (a round trip through
// it takes 2 x oneWayMs more). Benchmarks put it in front of a storage server
// to see what a design costs in round trips, as against a server in another
// building rather than on the loopback.
//
//   const relay = await startLatencyRelay({ port: 19000, oneWayMs: 10 });
//   ... connect to 127.0.0.1:relay.port ...
//   await relay.stop();
//
// Bytes keep their order (every delay is the same, and Node fires timers of
// one duration in the order they were set). No pacing: throughput is what
// the two ends manage.
import net from 'node:net';

/** Passes `from`'s bytes to `to`, each `ms` later; ends `to` after the last. */
function delayed(from, to, ms) {
  from.on('data', (chunk) => setTimeout(() => to.destroyed || to.write(chunk), ms));
  from.on('end', () => setTimeout(() => to.destroyed || to.end(), ms));
  from.on('error', () => setTimeout(() => to.destroy(), ms));
  from.on('close', () => setTimeout(() => to.destroy(), ms + 1));
}

export async function startLatencyRelay({ port, host = '127.0.0.1', oneWayMs }) {
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect({ port, host });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on('close', () => sockets.delete(s));
    }
    delayed(client, upstream, oneWayMs);
    delayed(upstream, client, oneWayMs);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    stop: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
