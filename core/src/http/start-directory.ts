import type { Request } from '@hapi/hapi';
import type { WebSession } from '../data/entities/index.js';
import type { Logger } from '../logger.js';
import { startDirectoryOf } from '../vfs/file-session.js';
import type { FileSessions } from '../vfs/file-sessions.service.js';
import { Protocol } from '../sdk/protocols.js';
import { openFileSession } from './user-session.js';

/**
 * The directory a user's web session starts in (what the web client opens
 * when its address names no folder): the account's start directory as its
 * file session checks it (FileSession.startDirectory: '/' when missing or
 * not a directory). `filters`: the account's effective filters when known;
 * without a start directory there no file session is opened. The file
 * session shares the connection of the web session's other requests. A
 * session that cannot be opened (max_sessions reached, a refusal) answers
 * '/': the web session itself stays usable, its file requests answer why.
 */
export async function webStartDirectory(
  sessions: FileSessions,
  request: Request,
  web: WebSession,
  filters: Record<string, unknown> | undefined,
  logger: Logger,
): Promise<string> {
  if (filters && startDirectoryOf(filters) === '/') return '/';
  let s;
  try {
    s = await openFileSession(sessions, request, { username: web.username, key: `web:${web.id_hash}`, protocol: Protocol.HTTP }, 'start directory');
  } catch (err) {
    logger.debug({ user: web.username, err: (err as Error).message }, 'no file session for the start directory: the web client starts in /');
    return '/';
  }
  try {
    return await s.startDirectory();
  } finally {
    await s.close();
  }
}
