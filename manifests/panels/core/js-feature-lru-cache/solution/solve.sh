#!/usr/bin/env bash
# Reference solution: a Map kept in recency order (re-insert on use, evict the first key).
set -euo pipefail
cat > src/lru.js <<'EOF'
/** A cache holding at most `capacity` entries, evicting the least recently used one. */
export class LRUCache {
  /**
   * @param {number} capacity
   * @param {{ onEvict?: (key: unknown, value: unknown) => void }} [options]
   */
  constructor(capacity, options = {}) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be an integer >= 1, got ${capacity}`)
    }
    this.capacity = capacity
    this.onEvict = options.onEvict
    // A Map iterates in insertion order: re-inserting on use keeps the least recent entry first.
    this.map = new Map()
  }

  get(key) {
    if (!this.map.has(key)) return undefined
    const value = this.map.get(key)
    this.map.delete(key)
    this.map.set(key, value)
    return value
  }

  set(key, value) {
    this.map.delete(key)
    this.map.set(key, value)
    while (this.map.size > this.capacity) {
      const [oldKey, oldValue] = this.map.entries().next().value
      this.map.delete(oldKey)
      this.onEvict?.(oldKey, oldValue)
    }
    return this
  }

  has(key) {
    return this.map.has(key)
  }

  delete(key) {
    return this.map.delete(key)
  }

  get size() {
    return this.map.size
  }

  keys() {
    return [...this.map.keys()]
  }
}
EOF
