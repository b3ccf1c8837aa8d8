import crypto from 'node:crypto';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { EventBus } from '../events/event-bus.js';
import type { FsHooks } from '../events/fs-hooks.js';
import { loginProtocolOf, type Protocol } from '../sdk/protocols.js';
import type { FileSessionOpener, OpenFileSession } from '../sdk/file-session.js';
import { FsFactory } from './fs-factory.js';
import type { Logger } from '../logger.js';
import { accountRefusal } from '../accounts/account-access.js';
import { ConnectionManager } from './connection-manager.js';
import type { EffectiveUser } from '../accounts/effective-user.js';
import { FileSession } from './file-session.js';
import { linkedSignal } from '../sdk/signals.js';
import { PathWrites, QuotaTracker } from './quota-tracker.js';
import { UploadJournal } from './upload-journal.js';
import { UsageStore } from './usage-store.js';
import { QuotaService } from './quota.service.js';
import { UserService } from '../accounts/user.service.js';
import { AccountCache, type CachedUser } from '../accounts/account-cache.js';
import { selectUserWithMappings } from '../accounts/user-rows.js';
import { setBounded } from '../util/bounded-map.js';

/**
 * What a front-end gives to open a session (sdk/file-session.ts). The
 * protocol is always named by the caller: connections, filesystem events
 * and the account's denied_protocols (checked as its login protocol: SFTP
 * as SSH, HTTPShare as HTTP) read it.
 */
export interface OpenSessionOptions extends OpenFileSession {
  /** The user as this request's token validation found it (AccountCache entry): not read again. */
  loaded?: CachedUser;
}

/**
 * Why an effective user may not use the files now, or null. `protocol` is
 * checked against denied_protocols as its login protocol (SFTP as SSH,
 * HTTPShare as HTTP); the server's own protocols (EventAction...) have
 * none, and no account denies them.
 */
export function fileAccessRefusal(u: EffectiveUser, ip: string, protocol: Protocol, now = Date.now()): string | null {
  return accountRefusal(u, ip, loginProtocolOf(protocol) ?? protocol, { verb: 'access', now });
}

/** Session keys kept by FileSessions.sessionKey() (the oldest forgotten first). */
const SESSION_KEYS_KEPT = 1024;
const sessionKeys = new Map<string, string>();

/**
 * Opens FileSessions: loads the user's effective view, applies the account
 * restrictions again on it (groups may add some), takes a slot on the
 * session's connection (max_sessions) and wires the abort signal.
 */
@injectable()
export class FileSessions implements FileSessionOpener {
  private readonly usage: UsageStore;

  constructor(
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(FsFactory) private readonly factory: FsFactory,
    @inject(QuotaTracker) private readonly tracker: QuotaTracker,
    @inject(PathWrites) private readonly pathWrites: PathWrites,
    @inject(UploadJournal) private readonly journal: UploadJournal,
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.FsHooks) private readonly hooks: FsHooks,
    @inject(ConnectionManager) private readonly connections: ConnectionManager,
    @inject(TOKENS.InstanceId) private readonly instanceId: string,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(UserService) private readonly users: UserService,
    @inject(QuotaService) private readonly quota: QuotaService,
    @inject(AccountCache) private readonly cache: AccountCache,
  ) {
    this.usage = new UsageStore(orm);
  }

  async effectiveUser(username: string): Promise<EffectiveUser | null> {
    return this.users.findEffectiveUser(username);
  }

  /**
   * The effective user (with folders) a session works as: the cache entry's
   * (computed once per entry), else read and kept (AccountCache).
   */
  private async sessionUser(o: OpenSessionOptions): Promise<EffectiveUser | null> {
    let entry = o.loaded ?? this.cache.user(o.username);
    if (!entry) {
      const stamp = this.cache.stamp();
      const r = await selectUserWithMappings(this.orm.em, o.username);
      if (!r) return null;
      entry = this.cache.storeUser(o.username, r, stamp);
    }
    entry.full ??= await this.users.effectiveOfMappings(entry.mappings);
    return entry.full;
  }

  async open(o: OpenSessionOptions): Promise<FileSession> {
    const user = await this.sessionUser(o);
    if (!user) throw new UnauthorizedError('the account no longer exists');
    const protocol = o.protocol;
    const refusal = fileAccessRefusal(user, o.ip, protocol);
    if (refusal) throw new ForbiddenError(refusal);
    const conn = this.connections.acquire(
      `${protocol}:${o.sessionKey}`,
      {
        username: user.username,
        protocol,
        remote_address: o.ip,
        client_version: o.clientVersion ?? '',
        command: o.command ?? '',
        role: user.role,
      },
      user.max_sessions,
    );
    // not AbortSignal.any: its listeners would keep every finished session alive (sdk/signals.ts)
    const linked = linkedSignal(o.signal, conn.controller.signal);
    return new FileSession(
      {
        config: this.config,
        factory: this.factory,
        tracker: this.tracker,
        pathWrites: this.pathWrites,
        journal: this.journal,
        usage: this.usage,
        quota: this.quota,
        bus: this.bus,
        hooks: this.hooks,
        connections: this.connections,
        instanceId: this.instanceId,
        logger: this.logger,
      },
      { user, ip: o.ip, protocol, conn, signal: linked.signal, disposeSignal: linked.dispose, abortSignal: linked.abort, sshCommand: o.sshCommand },
    );
  }

  /**
   * A stable, non-reversible session key for a credential id. The last
   * SESSION_KEYS_KEPT are kept: every request of a token asks for its key
   * again, and the hash cost about 1% of a small upload's CPU.
   */
  static sessionKey(parts: string[]): string {
    const id = parts.join('\u0000');
    return sessionKeys.get(id) ?? setBounded(sessionKeys, id, crypto.createHash('sha256').update(id).digest('hex').slice(0, 32), SESSION_KEYS_KEPT);
  }
}
