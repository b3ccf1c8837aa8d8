import { inject, injectable } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { EventBus } from './event-bus.js';
import type { ProviderEventAction, ProviderObjectType } from './event-types.js';
import { nowNanos } from './event-types.js';
import { redactSecrets } from '../secrets/redact.js';
import { ChangeFeed } from '../data/change-feed.js';

import type { Actor } from '../sdk/accounts.js';

export type { Actor } from '../sdk/accounts.js';

export const SYSTEM_ACTOR: Actor = { username: '', ip: '', role: '' };

/**
 * Publishes provider events (add/update/delete of stored objects) on the bus, secrets redacted, and
 * on the change feed first (data/change-feed.ts): copies of the object held in memory, on this node
 * and the others, are dropped before the event is seen.
 */
@injectable()
export class ProviderEventsService {
  constructor(
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.InstanceId) private readonly instanceId: string,
    @inject(ChangeFeed) private readonly feed: ChangeFeed,
  ) {}

  emit(action: ProviderEventAction, objectType: ProviderObjectType, objectName: string, objectData: Record<string, unknown>, actor: Actor): void {
    this.feed.publish({ type: objectType, name: objectName });
    this.bus.publish('provider', {
      timestamp: nowNanos(),
      action,
      username: actor.username,
      ip: actor.ip,
      object_type: objectType,
      object_name: objectName,
      object_data: redactSecrets(objectData) as Record<string, unknown>,
      role: actor.role,
      instance_id: this.instanceId,
    });
  }
}
