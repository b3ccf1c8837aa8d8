/**
 * The c-icap test server started by scripts/servers/start-icap.sh
 * (127.0.0.1:11344; services echo, avscan, srv_clamav, dlp). Tests that need
 * it skip, saying why, when it does not answer (CI always starts it).
 */
import net from 'node:net';

export const C_ICAP_PORT = 11344;
export const cIcap = (service: string) => `icap://127.0.0.1:${C_ICAP_PORT}/${service}`;

/** The EICAR test string (68 bytes); the private clamd knows it as Eicar-Test-Signature-Local.UNOFFICIAL. */
export const EICAR = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*', 'latin1');
export const EICAR_THREAT = 'Eicar-Test-Signature-Local.UNOFFICIAL';

/**
 * undefined when c-icap answers, else the reason to skip. In CI (CI=true)
 * an absent server is an error, never a skip.
 */
export async function cIcapMissing(): Promise<string | undefined> {
  const ok = await new Promise<boolean>((resolve) => {
    const s = net.connect(C_ICAP_PORT, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
  if (ok) return undefined;
  const why = `c-icap does not answer on 127.0.0.1:${C_ICAP_PORT}: start it with scripts/servers/start-icap.sh`;
  if (process.env.CI === 'true') throw new Error(why);
  return why;
}

/** A port on 127.0.0.1 where nothing listens (a stopped service). */
export async function deadPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}
