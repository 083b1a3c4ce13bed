import unittest

from lru import LRUCache


class LRUTest(unittest.TestCase):
    def test_put_get(self):
        c = LRUCache(2)
        c.put("a", 1)
        self.assertEqual(c.get("a"), 1)
        self.assertIsNone(c.get("b"))

    def test_eviction(self):
        c = LRUCache(2)
        c.put("a", 1)
        c.put("b", 2)
        c.get("a")
        c.put("c", 3)
        self.assertNotIn("b", c)
        self.assertEqual(len(c), 2)


if __name__ == "__main__":
    unittest.main()
