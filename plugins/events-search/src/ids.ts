import { randomBytes } from 'node:crypto';

/**
 * Event ids: 32 lowercase hex characters, the event's timestamp (Unix
 * nanoseconds, 16 hex digits) then 8 of a random node tag and 8 of a counter.
 * Ids sort like their timestamps (ties: by node and arrival), so the id alone
 * is the `from_id` cursor and a time range is an id range; ids of different
 * nodes never collide (2^32 node tags, a fresh one per process).
 */
export class EventIds {
  private readonly node = randomBytes(4).toString('hex');
  private counter = 0;

  next(timestampNs: number): string {
    this.counter = (this.counter + 1) >>> 0;
    return tsHex(timestampNs) + this.node + this.counter.toString(16).padStart(8, '0');
  }
}

const MAX_NS = (1n << 64n) - 1n;

/** A timestamp (ns, a JS number possibly beyond 2^53) as the 16 hex digits starting an id. */
export function tsHex(timestampNs: number): string {
  let n = BigInt(Math.max(0, Math.round(timestampNs)));
  if (n > MAX_NS) n = MAX_NS;
  return n.toString(16).padStart(16, '0');
}

/** The timestamp (ns) an id starts with, as the number the event was published with. */
export function idTimestamp(id: string): number {
  return Number(BigInt('0x' + id.slice(0, 16)));
}

/** Lowest id of events at or after `ns`. */
export const idFloor = (ns: number): string => tsHex(ns) + '0'.repeat(16);
/** Lowest id of events at or after `ns` given exactly (a bucket bound computed with BigInt). */
export const idFloorOf = (ns: bigint): string => (ns < 0n ? 0n : ns > MAX_NS ? MAX_NS : ns).toString(16).padStart(16, '0') + '0'.repeat(16);
/** Highest id of events at or before `ns`. */
export const idCeil = (ns: number): string => tsHex(ns) + 'f'.repeat(16);

export const isEventId = (id: string): boolean => /^[0-9a-f]{32}$/.test(id);
