import unittest

from textwrap_lite import wrap


class WrapTest(unittest.TestCase):
    def test_exact_fit(self):
        self.assertEqual(wrap("aaa bbb", 7), ["aaa bbb"])

    def test_breaks(self):
        self.assertEqual(wrap("the quick brown fox", 10), ["the quick", "brown fox"])


if __name__ == "__main__":
    unittest.main()
