/**
 * Sets `key` in a map used as a small cache of at most `max` entries: when
 * the map is full, its oldest entry (the first inserted) makes room. Returns
 * `value`.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): V {
  if (!map.has(key) && map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
  return value;
}
