/** Keyed caches and tallies: the value under a key, made and kept the first time it is asked for. */

/** Anything keyed that can be read and written: Map, WeakMap, an LRU cache. */
export interface Keyed<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): unknown;
}

export function getOrCreate<K, V>(map: Keyed<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
