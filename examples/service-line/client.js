// A client of the line service, for tests and trying it out:
//   const c = await connectLine(port); await c.send('user alice secret'); ...
import net from 'node:net';
import readline from 'node:readline';
import { once } from 'node:events';

/** Connects; `send` resolves with the answer's lines, the last one `OK ...` or `ERR ...`; `closed` when the server closes. */
export async function connectLine(port, host = '127.0.0.1') {
  const socket = net.connect(port, host);
  await once(socket, 'connect');
  const received = [];
  let wake = () => {};
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.on('error', () => {});
  readline.createInterface({ input: socket, crlfDelay: Infinity }).on('line', (line) => {
    received.push(line);
    wake();
  });
  /** The next line, or null once the socket is closed with nothing left. */
  const nextLine = async () => {
    while (!received.length) {
      if (socket.destroyed || socket.readableEnded) return null;
      await Promise.race([new Promise((resolve) => (wake = resolve)), closed]);
    }
    return received.shift();
  };
  return {
    socket,
    closed,
    nextLine,
    async send(command) {
      socket.write(command + '\n');
      const answer = [];
      for (;;) {
        const line = await nextLine();
        if (line === null) throw new Error(`the server closed the connection (answer so far: ${JSON.stringify(answer)})`);
        answer.push(line);
        if (/^(OK|ERR)\b/.test(line)) return answer;
      }
    },
    close() {
      socket.destroy();
      return closed;
    },
  };
}
