import { loadSsh2 } from '../../src/sdk/ssh2-module.js';

/**
 * Logs in as u/pw with ssh2's client (`connect`: where to, ssh2's connect
 * options) and sends `data` to the server's `take <mode>` command in chunks
 * of 32 KiB, then ends the channel and waits for it to close.
 */
export async function uploadToTake(connect: Record<string, unknown>, mode: 'copy' | 'hold', data: Buffer, algorithms?: Record<string, string[]>) {
  const ssh2 = loadSsh2().module;
  const client = new ssh2.Client();
  try {
    await new Promise<void>((resolve, reject) => {
      client.on('error', reject);
      client.on('ready', () =>
        client.exec(`take ${mode}`, (err, stream) => {
          if (err) return reject(err);
          stream.on('close', () => resolve());
          stream.resume();
          let p = 0;
          const next = () => {
            while (p < data.length) {
              const chunk = data.subarray(p, p + 32 * 1024);
              p += chunk.length;
              if (!stream.write(chunk)) return void stream.once('drain', next);
            }
            stream.end();
          };
          next();
        }),
      );
      client.connect({ ...connect, username: 'u', password: 'pw', ...(algorithms ? { algorithms } : {}) });
    });
  } finally {
    client.end();
  }
}

/** A test server's connection: its socket's errors ignored (clients that go mid-transfer), password `pw` accepted. */
export function acceptTestLogin(conn: { on(event: string, listener: (...args: never[]) => void): unknown }): void {
  conn.on('error', () => undefined);
  conn.on('authentication', (ctx: { method: string; password?: string; accept(): void; reject(methods: string[]): void }) =>
    ctx.method === 'password' && ctx.password === 'pw' ? ctx.accept() : ctx.reject(['password']),
  );
}
