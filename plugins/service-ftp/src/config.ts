import net from 'node:net';
import Joi from 'joi';

/**
 * TLS on a binding: `plain` (no TLS offered), `explicit` (AUTH TLS offered,
 * not required), `explicit-required` (a client must send AUTH TLS before
 * USER, and protect its data connections), `implicit` (TLS from the first
 * byte, the FTPS of port 990).
 */
export type TlsMode = 'plain' | 'explicit' | 'explicit-required' | 'implicit';

/** One address the FTP server listens on (port 0: any free port, shown by /status). */
export interface FtpBinding {
  address: string;
  port: number;
  /** Default: `explicit` on loopback addresses, `explicit-required` on the others. */
  tls_mode: TlsMode;
  /** The IPv4 address announced in PASV answers (NAT); '' for the control connection's local address. */
  force_passive_ip: string;
  /**
   * TLS client certificates (FTPDBinding.client_auth_type): 0 not asked,
   * 1 required (a client without a trusted one is disconnected), 2 verified
   * when the client sends one. A trusted certificate logs in the account
   * named by its common name where the account allows it (docs/ftp.md).
   */
  client_auth_type: 0 | 1 | 2;
}

export interface FtpConfig {
  bindings: FtpBinding[];
  /** PEM certificate (chain) and unencrypted key for FTPS; both '' for none (then only plain bindings may start). */
  certificate_file: string;
  certificate_key_file: string;
  min_tls_version: 12 | 13;
  /**
   * Protected data connections must resume the control connection's TLS
   * session (vsftpd's require_ssl_reuse): without it anyone who reaches the
   * passive port first from the client's address could take the transfer.
   * Turn off only for clients that cannot (rclone with an IP address as host).
   */
  require_tls_session_reuse: boolean;
  tls_cipher_suites: string[];
  /** PEM files of the certificate authorities client certificates must chain to (needed by bindings with client_auth_type 1 or 2). */
  ca_certificates: string[];
  /** Ports of passive data connections; 0 and 0: any free port. */
  passive_port_range: { start: number; end: number };
  /**
   * Accept PORT and EPRT (active mode: the server connects to the client).
   * Off by default; when on, only to the control connection's own address
   * and to ports from 1024 (no FXP, no bounce).
   */
  active_mode: boolean;
  /** Seconds without a command before a connection is closed (0: never; not counted during a transfer). */
  idle_timeout: number;
  /** Seconds a client has to open the data connection it asked for. */
  data_timeout: number;
  /** Seconds a connection has to log in (0: no limit). */
  login_grace_time: number;
  /** Failed logins on one connection before it is closed. */
  max_auth_tries: number;
  /** Control connections from one address at a time (0: no limit). */
  max_clients_per_host: number;
  /** The greeting after 220 ('' for "Ferry FTP server ready"). */
  banner: string;
}

/** The binding's tls_mode as /status shows it (FTPDBinding.tls_mode: 0 plain or explicit, 1 explicit required, 2 implicit). */
export const TLS_MODE_NUMBER: Record<TlsMode, number> = { plain: 0, explicit: 0, 'explicit-required': 1, implicit: 2 };

const isLoopback = (address: string) => address === 'localhost' || address === '::1' || (net.isIPv4(address) && address.startsWith('127.'));

export const configSchema = Joi.object<FtpConfig>({
  bindings: Joi.array()
    .items(
      Joi.object({
        address: Joi.string().default('127.0.0.1'),
        port: Joi.number().integer().min(0).max(65535).default(2121),
        tls_mode: Joi.string().valid('plain', 'explicit', 'explicit-required', 'implicit'),
        force_passive_ip: Joi.string()
          .ip({ version: ['ipv4'], cidr: 'forbidden' })
          .allow('')
          .default(''),
        client_auth_type: Joi.number().valid(0, 1, 2).default(0),
      }).custom((b: FtpBinding) => ({ ...b, tls_mode: b.tls_mode ?? (isLoopback(b.address) ? 'explicit' : 'explicit-required') })),
    )
    .min(1)
    .default([{ address: '127.0.0.1', port: 2121, tls_mode: 'explicit', force_passive_ip: '', client_auth_type: 0 }]),
  certificate_file: Joi.string().allow('').default(''),
  certificate_key_file: Joi.string().allow('').default(''),
  min_tls_version: Joi.number().valid(12, 13).default(12),
  require_tls_session_reuse: Joi.boolean().default(true),
  tls_cipher_suites: Joi.array().items(Joi.string().min(1)).default([]),
  ca_certificates: Joi.array().items(Joi.string().min(1)).default([]),
  passive_port_range: Joi.object({
    start: Joi.number().integer().min(0).max(65535).default(0),
    end: Joi.number().integer().min(0).max(65535).default(0),
  })
    .custom((r: { start: number; end: number }, h) => (r.start > r.end ? h.message({ custom: '"passive_port_range.start" must not be above its end' }) : r))
    .default({ start: 0, end: 0 }),
  idle_timeout: Joi.number().integer().min(0).default(900),
  data_timeout: Joi.number().integer().min(1).default(60),
  login_grace_time: Joi.number().integer().min(0).default(120),
  active_mode: Joi.boolean().default(false),
  max_auth_tries: Joi.number().integer().min(1).default(3),
  max_clients_per_host: Joi.number().integer().min(0).default(0),
  banner: Joi.string().allow('').default(''),
}).custom((c: FtpConfig, h) => {
  const needsTls = c.bindings.find((b) => b.tls_mode === 'explicit-required' || b.tls_mode === 'implicit');
  if (needsTls && !(c.certificate_file && c.certificate_key_file)) {
    return h.message({
      custom: `binding ${needsTls.address}:${needsTls.port} has tls_mode ${needsTls.tls_mode}: set certificate_file and certificate_key_file`,
    });
  }
  const wantsCerts = c.bindings.find((b) => b.client_auth_type > 0);
  if (wantsCerts && (!c.ca_certificates.length || wantsCerts.tls_mode === 'plain' || !c.certificate_file)) {
    return h.message({
      custom: `binding ${wantsCerts.address}:${wantsCerts.port} has client_auth_type ${wantsCerts.client_auth_type}: it needs TLS (a certificate and a tls_mode other than plain) and ca_certificates`,
    });
  }
  return c;
});
