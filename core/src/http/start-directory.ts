import type { Request } from '@hapi/hapi';
import type { FileSessions } from '../vfs/file-sessions.service.js';
import { Protocol } from '../sdk/protocols.js';
import { openFileSession } from './user-session.js';

/**
 * The directory a user's web session starts in (what the web client opens
 * when its address names no directory): the account's start directory as
 * its file session checks it (FileSession.startDirectory: '/' when unset,
 * missing or not a directory). `sessionId`: the web session's id hash; the
 * file session shares the connection of the web session's other requests.
 */
export async function webStartDirectory(sessions: FileSessions, request: Request, username: string, sessionId: string): Promise<string> {
  const s = await openFileSession(sessions, request, { username, key: `web:${sessionId}`, protocol: Protocol.HTTP }, 'start directory');
  try {
    return await s.startDirectory();
  } finally {
    await s.close();
  }
}
