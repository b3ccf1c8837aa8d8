/**
 * The protocols Ferry knows, in one place: what connections, filesystem
 * events, log events and event rule conditions name, and what the account
 * restrictions (`filters.denied_protocols`, `two_factor_protocols`) name.
 * A leaf module: it imports nothing.
 *
 * A front-end names the protocol of every login and session it opens (no
 * function of the core picks one for it). Sub-protocols are checked against
 * the account restrictions as their login protocol: SFTP and SCP as SSH,
 * HTTPShare (a share's public routes) and OIDC as HTTP.
 */
export const Protocol = {
  /** The REST API and the web client. */
  HTTP: 'HTTP',
  /** A share's public routes (external parties). */
  HTTPShare: 'HTTPShare',
  /** SSH commands. */
  SSH: 'SSH',
  SFTP: 'SFTP',
  SCP: 'SCP',
  /** Plain FTP, explicit and implicit FTPS. */
  FTP: 'FTP',
  /** WebDAV. */
  DAV: 'DAV',
  /** A login through an OpenID Connect provider. */
  OIDC: 'OIDC',
  /** The data retention checks of event actions. */
  DataRetention: 'DataRetention',
  /** Filesystem work of event actions. */
  EventAction: 'EventAction',
} as const;
export type Protocol = (typeof Protocol)[keyof typeof Protocol];

/** Every protocol, in the order the API documents them. */
export const PROTOCOLS: readonly Protocol[] = Object.freeze([
  Protocol.SSH,
  Protocol.SFTP,
  Protocol.SCP,
  Protocol.FTP,
  Protocol.DAV,
  Protocol.HTTP,
  Protocol.HTTPShare,
  Protocol.DataRetention,
  Protocol.EventAction,
  Protocol.OIDC,
]);

/** The protocols an account's `denied_protocols` and the IP lists name (SupportedProtocols). */
export const LOGIN_PROTOCOLS = Object.freeze(['SSH', 'FTP', 'DAV', 'HTTP'] as const);
export type LoginProtocol = (typeof LOGIN_PROTOCOLS)[number];

/** The protocols a second factor can be required for (`two_factor_protocols`, MFAProtocols). */
export const MFA_PROTOCOLS = Object.freeze(['SSH', 'FTP', 'HTTP'] as const);
export type MfaProtocol = (typeof MFA_PROTOCOLS)[number];

/** The protocols an event rule's conditions may name (EventProtocols of the rules' conditions). */
export const RULE_PROTOCOLS: readonly Protocol[] = Object.freeze([
  Protocol.SFTP,
  Protocol.SCP,
  Protocol.SSH,
  Protocol.FTP,
  Protocol.DAV,
  Protocol.HTTP,
  Protocol.HTTPShare,
  Protocol.OIDC,
]);

/** True for a known protocol name. */
export function isProtocol(p: unknown): p is Protocol {
  return typeof p === 'string' && (PROTOCOLS as readonly string[]).includes(p);
}

/**
 * The login protocol a protocol is checked as: SFTP and SCP are SSH,
 * HTTPShare and OIDC are HTTP; DataRetention and EventAction (the server's
 * own work) have none.
 */
export function loginProtocolOf(p: Protocol): LoginProtocol | null {
  switch (p) {
    case Protocol.SSH:
    case Protocol.SFTP:
    case Protocol.SCP:
      return 'SSH';
    case Protocol.FTP:
      return 'FTP';
    case Protocol.DAV:
      return 'DAV';
    case Protocol.HTTP:
    case Protocol.HTTPShare:
    case Protocol.OIDC:
      return 'HTTP';
    default:
      return null;
  }
}
