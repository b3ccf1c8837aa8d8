import { ConflictError } from '../errors.js';
import { injectable } from 'tsyringe';
import type { RetentionTracker } from '../sdk/host.js';
import type { FolderRetention } from '../sdk/retention.js';

export type { FolderRetention } from '../sdk/retention.js';

/** RetentionCheck of the REST API: a check in progress. */
export interface RetentionCheck {
  username: string;
  folders: FolderRetention[];
  /** Unix ms. */
  start_time: number;
}

/** Data retention checks running on this node (GET /retention/users/checks); one per user at a time. */
@injectable()
export class RetentionChecks implements RetentionTracker {
  private readonly running = new Map<string, RetentionCheck>();

  /** Registers a check; 409 when one already runs for the user. Returns the function that ends it. */
  begin(username: string, folders: FolderRetention[]): () => void {
    if (this.running.has(username)) throw new ConflictError(`a retention check is already running for user "${username}"`);
    const check: RetentionCheck = { username, folders: folders.map((f) => ({ ...f })), start_time: Date.now() };
    this.running.set(username, check);
    return () => {
      if (this.running.get(username) === check) this.running.delete(username);
    };
  }

  list(): RetentionCheck[] {
    return [...this.running.values()].sort((a, b) => a.username.localeCompare(b.username));
  }
}
