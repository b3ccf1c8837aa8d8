import Joi from 'joi';

/** One address the SSH server listens on (port 0: any free port, shown by /status). */
export interface SftpBinding {
  address: string;
  port: number;
}

/** The SSH algorithms offered, by ssh2's names. */
export interface SftpAlgorithms {
  kex: string[];
  cipher: string[];
  hmac: string[];
  serverHostKey: string[];
  compress: string[];
}

export interface SftpConfig {
  bindings: SftpBinding[];
  /** Private host key files; empty: an ed25519 and an ecdsa key generated into `<dataDir>/sftp/` on first start. */
  host_keys: string[];
  algorithms: SftpAlgorithms;
  /** Seconds without a request before a logged-in connection is closed (0: never). */
  idle_timeout: number;
  /** Failed authentication attempts allowed on one connection before it is closed. */
  max_auth_tries: number;
  /** Seconds a connection has to log in (0: no limit). */
  login_grace_time: number;
  /** Text shown to clients before they log in ('' for none). */
  banner: string;
  /** The commands an SSH exec request may run (`scp` is the legacy SCP protocol); nothing else, no shell. */
  enabled_ssh_commands: string[];
}

/** The SSH commands Ferry implements, all enabled by default. */
export const SSH_COMMANDS: readonly string[] = ['md5sum', 'sha1sum', 'sha256sum', 'sha512sum', 'cd', 'pwd', 'scp'];

/**
 * Modern defaults: no SHA-1 (MACs, kex, the ssh-rsa signature), no CBC
 * ciphers. Anything ssh2 supports can be configured instead.
 */
export const DEFAULT_ALGORITHMS: SftpAlgorithms = Object.freeze({
  kex: [
    'curve25519-sha256',
    'curve25519-sha256@libssh.org',
    'ecdh-sha2-nistp256',
    'ecdh-sha2-nistp384',
    'ecdh-sha2-nistp521',
    'diffie-hellman-group-exchange-sha256',
    'diffie-hellman-group14-sha256',
    'diffie-hellman-group16-sha512',
    'diffie-hellman-group18-sha512',
  ],
  cipher: ['aes128-gcm@openssh.com', 'aes256-gcm@openssh.com', 'chacha20-poly1305@openssh.com', 'aes128-ctr', 'aes192-ctr', 'aes256-ctr'],
  hmac: ['hmac-sha2-256-etm@openssh.com', 'hmac-sha2-512-etm@openssh.com', 'hmac-sha2-256', 'hmac-sha2-512'],
  serverHostKey: ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'rsa-sha2-512', 'rsa-sha2-256'],
  compress: ['none', 'zlib@openssh.com', 'zlib'],
});

const names = (defaults: string[]) =>
  Joi.array()
    .items(Joi.string().min(1))
    .min(1)
    .default([...defaults]);

export const configSchema = Joi.object<SftpConfig>({
  bindings: Joi.array()
    .items(
      Joi.object({
        address: Joi.string().default('127.0.0.1'),
        port: Joi.number().integer().min(0).max(65535).default(2022),
      }),
    )
    .min(1)
    .default([{ address: '127.0.0.1', port: 2022 }]),
  host_keys: Joi.array().items(Joi.string().min(1)).default([]),
  algorithms: Joi.object({
    kex: names(DEFAULT_ALGORITHMS.kex),
    cipher: names(DEFAULT_ALGORITHMS.cipher),
    hmac: names(DEFAULT_ALGORITHMS.hmac),
    serverHostKey: names(DEFAULT_ALGORITHMS.serverHostKey),
    compress: names(DEFAULT_ALGORITHMS.compress),
  }).default(),
  idle_timeout: Joi.number().integer().min(0).default(900),
  max_auth_tries: Joi.number().integer().min(1).default(6),
  login_grace_time: Joi.number().integer().min(0).default(120),
  banner: Joi.string().allow('').default(''),
  enabled_ssh_commands: Joi.array()
    .items(Joi.string().min(1))
    .unique()
    .default([...SSH_COMMANDS]),
});
