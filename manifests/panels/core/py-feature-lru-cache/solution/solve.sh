#!/usr/bin/env bash
# Reference solution: an OrderedDict in recency order; a sentinel so cached None counts as a hit.
set -euo pipefail
cat > lru.py <<'EOF'
"""A least-recently-used cache and a memoizing decorator built on it."""

import functools
from collections import OrderedDict

_MISSING = object()


class LRUCache:
    """Holds at most `capacity` entries; evicts the least recently used one."""

    def __init__(self, capacity):
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise ValueError(f"capacity must be an int >= 1, got {capacity!r}")
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self._data = OrderedDict()

    def get(self, key, default=None):
        if key not in self._data:
            self.misses += 1
            return default
        self.hits += 1
        self._data.move_to_end(key)
        return self._data[key]

    def put(self, key, value):
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.capacity:
            self._data.popitem(last=False)
            self.evictions += 1

    def __contains__(self, key):
        return key in self._data

    def __len__(self):
        return len(self._data)


def memoize(cache):
    """Decorator caching a function's results in `cache`, keyed by its positional arguments."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            value = cache.get(args, _MISSING)
            if value is _MISSING:
                value = fn(*args)
                cache.put(args, value)
            return value

        return wrapper

    return decorate
EOF
