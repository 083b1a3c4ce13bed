import unittest

from lru import LRUCache, memoize


class HiddenLRUTest(unittest.TestCase):
    def test_capacity_bound(self):
        c = LRUCache(3)
        for i in range(10):
            c.put(i, i * i)
        self.assertEqual(len(c), 3)
        self.assertEqual([k for k in range(10) if k in c], [7, 8, 9])
        self.assertEqual(c.evictions, 7)

    def test_recency(self):
        c = LRUCache(2)
        c.put("a", 1)
        c.put("b", 2)
        self.assertIn("a", c)  # membership must not refresh "a"
        c.put("c", 3)
        self.assertNotIn("a", c)
        c.get("b")
        c.put("d", 4)
        self.assertIn("b", c)
        self.assertNotIn("c", c)

    def test_overwrite_refreshes(self):
        c = LRUCache(2)
        c.put("a", 1)
        c.put("b", 2)
        c.put("a", 10)
        c.put("c", 3)
        self.assertEqual(c.get("a"), 10)
        self.assertNotIn("b", c)
        self.assertEqual(len(c), 2)

    def test_defaults_and_counters(self):
        c = LRUCache(2)
        c.put("x", None)
        self.assertIsNone(c.get("x", "dflt"))
        self.assertEqual(c.get("y", "dflt"), "dflt")
        self.assertEqual(c.get("y"), None)
        self.assertEqual((c.hits, c.misses, c.evictions), (1, 2, 0))

    def test_bad_capacity(self):
        for bad in (0, -1, 1.5, "2"):
            with self.subTest(bad=bad):
                with self.assertRaises(ValueError):
                    LRUCache(bad)

    def test_memoize(self):
        calls = []
        cache = LRUCache(2)

        @memoize(cache)
        def square(x):
            calls.append(x)
            return x * x

        self.assertEqual([square(2), square(2), square(3), square(2)], [4, 4, 9, 4])
        self.assertEqual(calls, [2, 3])
        square(4)  # evicts 3 (least recently used)
        square(3)
        self.assertEqual(calls, [2, 3, 4, 3])

    def test_memoize_caches_none(self):
        calls = []

        @memoize(LRUCache(4))
        def nothing(a, b):
            calls.append((a, b))
            return None

        self.assertIsNone(nothing(1, 2))
        self.assertIsNone(nothing(1, 2))
        self.assertEqual(calls, [(1, 2)])


if __name__ == "__main__":
    unittest.main()
