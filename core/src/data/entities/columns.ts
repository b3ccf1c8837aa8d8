import { BigIntType } from '@mikro-orm/core';

/** Shared column definitions. Timestamps are Unix milliseconds stored as BIGINT. */
export const msTime = (opts: { nullable?: boolean; index?: boolean } = {}) => ({
  type: new BigIntType('number'),
  default: 0,
  ...opts,
});
export const counter = () => ({ type: new BigIntType('number'), default: 0 });
export const int = (def = 0) => ({ type: 'integer', default: def });
export const text = (opts: { nullable?: boolean } = {}) => ({ type: 'text', ...opts });
export const json = (opts: { nullable?: boolean } = {}) => ({ type: 'json', ...opts });
export const name = () => ({ type: 'string', length: 255, unique: true });

export function now(): number {
  return Date.now();
}
