import net from 'node:net';
import type { Logger, UploadBuffers } from '@ferry/core';
import { largeReadOption } from './large-reads.js';
import { FtpReply } from './replies.js';

/**
 * Active mode (PORT/EPRT): the server connects to the address the client
 * names, which must be the control connection's own address (no FXP, no
 * bounce to a third host) and a port of 1024 or above (no bounce to a
 * privileged service of the client's host).
 */
export interface ActiveTarget {
  host: string;
  port: number;
}

/** The target of `PORT h1,h2,h3,h4,p1,p2` (IPv4). */
export function parsePort(arg: string): ActiveTarget {
  const parts = arg.trim().split(',');
  if (parts.length !== 6 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) {
    throw new FtpReply(501, 'PORT needs h1,h2,h3,h4,p1,p2 (six numbers from 0 to 255).');
  }
  const n = parts.map(Number);
  return { host: n.slice(0, 4).join('.'), port: n[4]! * 256 + n[5]! };
}

/** The target of `EPRT |proto|address|port|` (RFC 2428; proto 1 IPv4, 2 IPv6; any delimiter from 33 to 126). */
export function parseEprt(arg: string): ActiveTarget {
  const s = arg.trim();
  const d = s[0];
  const fields = d ? s.split(d) : [];
  const code = d ? d.charCodeAt(0) : 0;
  if (code < 33 || code > 126 || fields.length !== 5 || fields[0] !== '' || fields[4] !== '') {
    throw new FtpReply(501, 'EPRT needs |protocol|address|port| (RFC 2428).');
  }
  const [, proto, host, port] = fields as [string, string, string, string, string];
  if (proto !== '1' && proto !== '2') throw new FtpReply(522, 'Network protocol not supported, use (1,2)');
  if ((proto === '1' && !net.isIPv4(host)) || (proto === '2' && !net.isIPv6(host)))
    throw new FtpReply(501, `EPRT: ${host} is not an IPv${proto === '1' ? 4 : 6} address.`);
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) throw new FtpReply(501, 'EPRT: the port must be a number from 0 to 65535.');
  return { host: host.replace(/^::ffff:/i, ''), port: Number(port) };
}

/** Refuses a target that is not the client itself, or a privileged port. */
export function checkTarget(t: ActiveTarget, clientIp: string): void {
  if (t.host !== clientIp) throw new FtpReply(501, `Active mode connects only to the client's own address (${clientIp}), not ${t.host}.`);
  if (t.port < 1024) throw new FtpReply(501, 'Active mode refuses ports below 1024.');
}

/**
 * The data connection of an active-mode transfer: connected when the
 * transfer starts, from the control connection's local address.
 */
export class ActiveConnector {
  private socket: net.Socket | null = null;
  private closed = false;

  constructor(private readonly o: { target: ActiveTarget; localAddress: string; logger: Logger }) {}

  /**
   * The connected socket, or null when the client does not accept within
   * `timeoutMs` (or once closed); reading in large chunks into `upload`'s
   * buffers when given (a plain upload's).
   */
  take(timeoutMs: number, upload?: UploadBuffers): Promise<net.Socket | null> {
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const s: net.Socket = net.connect({
        host: this.o.target.host,
        port: this.o.target.port,
        localAddress: this.o.localAddress,
        ...(upload ? { onread: largeReadOption(() => s, upload) } : {}),
      });
      this.socket = s;
      const timer = setTimeout(() => done(null), timeoutMs);
      const done = (ok: net.Socket | null) => {
        clearTimeout(timer);
        s.off('connect', onConnect);
        s.off('error', onError);
        if (!ok) s.destroy();
        resolve(ok);
      };
      const onConnect = () => {
        s.on('error', () => undefined);
        done(s);
      };
      const onError = (err: Error) => {
        this.o.logger.info({ target: this.o.target, err: err.message }, 'ftp active data connection failed');
        done(null);
      };
      s.once('connect', onConnect);
      s.once('error', onError);
    });
  }

  close(): void {
    this.closed = true;
    if (this.socket && !this.socket.destroyed) this.socket.destroy();
  }
}
