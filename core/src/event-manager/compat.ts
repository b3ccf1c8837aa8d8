import { InvalidError } from '../errors.js';
import type { ActionTypeDef } from '../events/action.contract.js';
import type { EventConditions } from './types.js';

/** fs_events a rule with execute_sync actions may listen to. */
export const SYNC_FS_EVENTS = ['upload', 'pre-upload', 'pre-download', 'pre-delete'];

/**
 * fs_events fired before the operation: the rule's sync actions decide
 * whether it goes on (any failure denies it), so such a rule needs at least
 * one execute_sync action.
 */
export const PRE_FS_EVENTS = ['pre-upload', 'pre-download', 'pre-delete'];

/**
 * Throws a 400 when an action of type `type` (registered as `def`) cannot
 * run in a rule with this trigger and conditions: a type no plugin
 * registers, a trigger the type does not support, or, for provider rules,
 * an action that works on one kind of object (`def.providerObjects`) in a
 * rule not restricted to those objects or firing on deletes, or a type
 * the server cannot run now (`def.unavailable()`: no mail server...).
 */
export function checkActionForRule(
  action: { name: string; type: number },
  def: ActionTypeDef | undefined,
  rule: { trigger: number; conditions: EventConditions },
): void {
  const what = def ? `action "${action.name}" (type ${action.type}, ${def.key})` : `action "${action.name}"`;
  if (!def) throw new InvalidError(`${what}: type ${action.type} is not available (no plugin registers it)`);
  if (def.triggers && !def.triggers.includes(rule.trigger)) throw new InvalidError(`${what} cannot run on trigger ${rule.trigger}`);
  const why = def.unavailable?.();
  if (why) throw new InvalidError(`${what} cannot be used: ${why}`);
  if (rule.trigger === 2 && def.providerObjects) {
    const objs = rule.conditions.options.provider_objects;
    const allowed = def.providerObjects.join(', ');
    if (!objs.length || objs.some((o) => !def.providerObjects!.includes(o))) {
      throw new InvalidError(`${what} only runs on provider events of ${allowed} objects: set conditions.options.provider_objects to ${allowed} only`);
    }
    if (rule.conditions.provider_events.includes('delete')) {
      throw new InvalidError(`${what} cannot run on provider "delete" events (the object no longer exists)`);
    }
  }
}
