/** A cache meant to hold at most `capacity` entries. */
export class LRUCache {
  /**
   * @param {number} capacity
   * @param {{ onEvict?: (key: unknown, value: unknown) => void }} [options]
   */
  constructor(capacity, options = {}) {
    this.capacity = capacity
    this.onEvict = options.onEvict
    this.map = new Map()
  }

  get(key) {
    return this.map.get(key)
  }

  set(key, value) {
    this.map.set(key, value)
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
