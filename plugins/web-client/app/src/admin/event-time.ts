/** The API's event times (Unix nanoseconds) and the browser's (no React, no API client here: the unit tests read it). */

/** A time of the API (Unix nanoseconds) as a Date. */
export const dateOfNanos = (ns: number): Date => new Date(Math.floor(ns / 1e6));
/** A datetime-local field's value as Unix nanoseconds (0, no bound, when empty). */
export const nanosOfLocal = (v: string): number => (v ? new Date(v).getTime() * 1e6 : 0);
