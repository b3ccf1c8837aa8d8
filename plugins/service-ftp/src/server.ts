import net from 'node:net';
import tls from 'node:tls';
import { drainService, type Logger, type ServiceCertificate, type ServiceDef, type ServiceHost, type ServiceStatus } from '@ferry/core';
import { TLS_MODE_NUMBER, type FtpBinding, type FtpConfig } from './config.js';
import { FtpControl } from './control.js';
import { plainIp } from './passive.js';

export interface FtpServiceOptions {
  config: FtpConfig;
  logger: Logger;
  /** The core's services, resolved on first use. */
  host: () => ServiceHost;
}

/** The FTP server: one listener per binding, one FtpControl per client. */
export function ftpService(o: FtpServiceOptions): ServiceDef {
  const { config, logger } = o;
  const clients = new Map<net.Socket, FtpControl>();
  const perHost = new Map<string, number>();
  let listeners: { server: net.Server; binding: FtpBinding }[] = [];
  /** The FTPS certificate (core's loading and reload: a new one serves the control connections that come after). */
  let certificate: ServiceCertificate | null = null;
  let active = false;

  // a context per control connection (its own session ticket keys: a data connection can resume only its own control session)
  const secureContext = () => tls.createSecureContext(certificate!.serverOptions());

  function admit(socket: net.Socket, binding: FtpBinding): void {
    const ip = plainIp(socket.remoteAddress);
    socket.on('error', (err) => logger.debug({ err: err.message, ip }, 'ftp client socket error'));
    const count = (perHost.get(ip) ?? 0) + 1;
    perHost.set(ip, count);
    socket.on('close', () => {
      clients.delete(socket);
      const left = (perHost.get(ip) ?? 1) - 1;
      if (left > 0) perHost.set(ip, left);
      else perHost.delete(ip);
    });
    if (!active) return void socket.destroy();
    if (config.max_clients_per_host > 0 && count > config.max_clients_per_host) {
      logger.info({ ip }, 'ftp connection refused: too many connections from the host');
      socket.end('421 Too many connections from your address.\r\n');
      return;
    }
    o.host()
      .defender.isBanned(ip, 'FTP')
      .then((banned) => {
        if (banned || !active) {
          logger.info({ ip }, banned ? 'ftp connection from a banned host dropped' : 'ftp connection refused: stopping');
          return void socket.destroy();
        }
        const control = new FtpControl(socket, { config, binding, logger, host: o.host, secureContext: certificate ? secureContext : null });
        clients.set(socket, control);
        control.start();
      })
      .catch((err: unknown) => {
        logger.warn({ err, ip }, 'ftp connection dropped');
        socket.destroy();
      });
  }

  return {
    name: 'ftpd',
    statusKey: 'ftp',
    async start() {
      if (config.certificate_file && config.certificate_key_file) {
        certificate = await o.host().tls.certificate({
          key: 'ftp',
          certificate_file: config.certificate_file,
          certificate_key_file: config.certificate_key_file,
          min_tls_version: config.min_tls_version,
          tls_cipher_suites: config.tls_cipher_suites,
          ...(config.bindings.some((b) => b.client_auth_type > 0) ? { client_ca_files: config.ca_certificates } : {}),
        });
        certificate.start();
      }
      try {
        for (const binding of config.bindings) {
          const server = net.createServer((s) => admit(s, binding));
          await new Promise<void>((resolve, reject) => {
            server.once('error', reject);
            server.listen(binding.port, binding.address, () => (server.off('error', reject), resolve()));
          });
          listeners.push({ server, binding });
        }
      } catch (err) {
        for (const l of listeners) l.server.close();
        listeners = [];
        throw err;
      }
      active = true;
      logger.info({ bindings: listeners.map((l) => l.server.address()) }, 'ftp listening');
    },
    async stop({ signal }) {
      active = false;
      certificate?.stop();
      const servers = listeners.map((l) => l.server);
      listeners = [];
      for (const c of clients.values()) c.close('Server shutting down.');
      await drainService({ servers, signal, clients: () => clients.size, cut: () => clients.forEach((_c, s) => s.destroy()) });
    },
    status(): ServiceStatus {
      const bindings = listeners.flatMap(({ server, binding }) => {
        const a = server.address();
        if (!a || typeof a !== 'object') return [];
        return [
          {
            address: a.address,
            port: a.port,
            apply_proxy_config: false,
            tls_mode: TLS_MODE_NUMBER[binding.tls_mode],
            min_tls_version: config.min_tls_version,
            force_passive_ip: binding.force_passive_ip,
            tls_cipher_suites: config.tls_cipher_suites,
            passive_connections_security: 0,
            active_connections_security: 0,
            client_auth_type: binding.client_auth_type,
          },
        ];
      });
      return { is_active: active, bindings: active ? bindings : null, passive_port_range: { ...config.passive_port_range } };
    },
  };
}
