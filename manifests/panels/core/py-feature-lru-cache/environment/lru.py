"""A least-recently-used cache and a memoizing decorator built on it."""


class LRUCache:
    """Holds at most `capacity` entries; evicts the least recently used one."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def get(self, key, default=None):
        raise NotImplementedError

    def put(self, key, value):
        raise NotImplementedError

    def __contains__(self, key):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


def memoize(cache):
    """Decorator caching a function's results in `cache`, keyed by its positional arguments."""
    raise NotImplementedError
