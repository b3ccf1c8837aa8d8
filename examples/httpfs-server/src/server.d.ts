/**
 * Types of the httpfs reference server's public API (the implementation is
 * plain JavaScript with JSDoc; this file lets TypeScript code embed it).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export interface HttpFsServerOptions {
  /** Directory served; every access stays under it. */
  root: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Listen address, default 127.0.0.1. */
  address?: string;
  /** API path prefix, default '/api/v1' ('' for none). */
  prefix?: string;
  /** Basic auth user name. */
  username?: string;
  /** Basic auth password. */
  password?: string;
  /** Expected X-API-KEY header value. */
  apiKey?: string;
  /** Run without authentication (refused unless set). */
  allowAnonymous?: boolean;
  /** Serve HTTPS with this key pair. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /** Largest accepted upload in bytes (413 above). Default: unlimited. */
  maxFileSize?: number;
  /** Called with one line per request. */
  log?: (line: string) => void;
}

export interface RunningHttpFsServer {
  server: Server;
  port: number;
  /** Endpoint for a client: scheme, host, port and prefix. */
  url: string;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Go's fs.ModeDir, set in FileInfo.mode for directories. */
export const GO_MODE_DIR: number;
/** Go's fs.ModeSymlink, set in FileInfo.mode for symlinks that are not followed. */
export const GO_MODE_SYMLINK: number;
/** `checks` bit asking that the parent directory already exists. */
export const CHECK_PARENT_DIR: number;

export function createHttpFsHandler(opts: HttpFsServerOptions): Promise<(req: IncomingMessage, res: ServerResponse) => void>;
export function startHttpFsServer(opts: HttpFsServerOptions): Promise<RunningHttpFsServer>;
