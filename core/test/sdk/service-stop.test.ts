import net from 'node:net';
import t from 'tap';
import { drainService } from '../../src/sdk/service-stop.js';

const listening = () =>
  new Promise<net.Server>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => resolve(s));
  });

// drainService's polling timer does not hold the process: the test does, as a running server would
const alive = setInterval(() => undefined, 1000);
t.teardown(() => clearInterval(alive));

t.test('resolves once the clients are gone, with the listeners closed', async (t) => {
  const server = await listening();
  let clients = 2;
  let cuts = 0;
  const done = drainService({ servers: [server], signal: new AbortController().signal, clients: () => clients, cut: () => void cuts++ });
  setTimeout(() => (clients = 0), 20);
  await done;
  t.equal(server.listening, false, 'the listener is closed');
  t.equal(cuts, 1, 'cut once at the end (nothing left to cut)');
});

t.test('cuts the clients left when the grace period ends', async (t) => {
  const server = await listening();
  const grace = new AbortController();
  let clients = 1;
  const done = drainService({ servers: [server], signal: grace.signal, clients: () => clients, cut: () => void (clients = 0) });
  grace.abort();
  await done;
  t.equal(clients, 0, 'the client left was cut');
});
