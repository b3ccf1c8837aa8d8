import type { EntitySchema } from '@mikro-orm/core';

/**
 * Entities owned by first-party plugins that keep data in the core database
 * (e.g. event search). Listed here so the initial migration covers them.
 */
export async function pluginEntities(): Promise<EntitySchema<any>[]> {
  return [];
}
